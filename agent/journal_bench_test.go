package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/contextwin"
)

// typicalRecords are a tool turn's records: a model call with its usage and a tool result.
func typicalRecords(i int) []journal.Record {
	id := fmt.Sprint(i)
	return []journal.Record{
		{Kind: journal.KindUsage, Usage: &contextwin.CallUsage{Prompt: 1000 + i, Candidates: 40}},
		{Kind: journal.KindAppend, Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{ID: id, Name: "read_file", Args: map[string]any{"path": "pkg/file" + id + ".go"}}, ThoughtSignature: []byte("signature-" + id)}}}},
		{Kind: journal.KindAppend, Content: &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{ID: id, Name: "read_file", Response: map[string]any{"output": strings.Repeat("package pkg // some code\n", 40)}}}}}},
	}
}

// BenchmarkAppendEvent: one event appended, with and without fsync.
func BenchmarkAppendEvent(b *testing.B) {
	for _, sync := range []bool{false, true} {
		b.Run(fmt.Sprintf("fsync=%v", sync), func(b *testing.B) {
			st, _ := journal.OpenStore(b.TempDir())
			log, err := st.Create(journal.Meta{ID: "bench", Created: time.Now()})
			if err != nil {
				b.Fatal(err)
			}
			defer log.Close()
			recs := typicalRecords(1)
			i := 0
			for b.Loop() {
				if err := log.Append(recs[i%len(recs)]); err != nil {
					b.Fatal(err)
				}
				if sync {
					log.Sync()
				}
				i++
			}
		})
	}
}

// BenchmarkResume10k: load and rebuild a session of 10,000 events (aim: under 200 ms).
func BenchmarkResume10k(b *testing.B) {
	dir := b.TempDir()
	st, _ := journal.OpenStore(dir)
	log, _ := st.Create(journal.Meta{ID: "big", Created: time.Now()})
	log.Append(journal.Record{Kind: journal.KindTurnStart, Turn: 1, Text: "task"})
	log.Append(journal.Record{Kind: journal.KindAppend, Content: genai.NewContentFromText("task", genai.RoleUser)})
	n := 2
	for i := 0; n < 10_000; i++ {
		for _, r := range typicalRecords(i) {
			log.Append(r)
			n++
		}
	}
	log.Close()
	fi, _ := os.Stat(filepath.Join(st.Dir("big"), "events.jsonl"))
	ws := b.TempDir()
	for b.Loop() {
		log, snap, err := st.Resume("big")
		if err != nil {
			b.Fatal(err)
		}
		s, err := Resume(Options{Workspace: ws, Model: cancellingModel{}, StateDir: b.TempDir(), Journal: log, Blobs: log}, snap)
		if err != nil {
			b.Fatal(err)
		}
		if len(s.Conversation().History()) < 6000 {
			b.Fatalf("history of %d messages", len(s.Conversation().History()))
		}
		log.Close()
	}
	b.ReportMetric(float64(n), "events")
	b.ReportMetric(float64(fi.Size())/(1<<20), "MiB-log")
}

// BenchmarkLogSizePerTurn runs real turns (three tool calls and an answer each) and reports the
// log's growth per user turn.
func BenchmarkLogSizePerTurn(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		st, _ := journal.OpenStore(b.TempDir())
		b.StartTimer()
		size := logSizePerTurn(b, st)
		b.ReportMetric(size, "bytes/turn")
	}
}

func logSizePerTurn(b *testing.B, st *journal.Store) float64 {
	const turns = 5
	ws := b.TempDir()
	for i := range 3 {
		os.WriteFile(filepath.Join(ws, fmt.Sprintf("f%d.go", i)), []byte(strings.Repeat("package f // code\n", 60)), 0o644)
	}
	m := &scriptedModel{}
	for range turns {
		for i := range 3 {
			m.replies = append(m.replies, &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{Name: "read_file", Args: map[string]any{"path": fmt.Sprintf("f%d.go", i)}}}}})
		}
		m.replies = append(m.replies, genai.NewContentFromText("The three files declare package f.", genai.RoleModel))
	}
	log, _ := st.Create(journal.Meta{ID: "size", Created: time.Now()})
	s, err := New(Options{ID: "size", Workspace: ws, Model: m, StateDir: b.TempDir(), Journal: log, Blobs: log})
	if err != nil {
		b.Fatal(err)
	}
	for i := range turns {
		for _, err := range s.Run(b.Context(), fmt.Sprintf("turn %d: what do the files declare?", i)) {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	log.Close()
	fi, _ := os.Stat(filepath.Join(st.Dir("size"), "events.jsonl"))
	return float64(fi.Size()) / turns
}
