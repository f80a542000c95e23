package journal

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/contextwin"
)

// writeSession saves a session of turns turns as the agent would: each turn a request, a tool
// call and its output, an answer, and their usage.
func writeSession(tb testing.TB, st *Store, id string, turns int) {
	tb.Helper()
	start := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	log, err := st.Create(Meta{ID: id, Model: "gemini-2.5-flash", Created: start})
	if err != nil {
		tb.Fatal(err)
	}
	content := func(role, text string) *genai.Content {
		return &genai.Content{Role: role, Parts: []*genai.Part{{Text: text}}}
	}
	output := strings.Repeat("ok  \tgithub.com/x/y\t0.012s\n", 150) // a 4 KB tool output
	at := start
	next := func() time.Time { at = at.Add(time.Second); return at }
	for turn := 1; turn <= turns; turn++ {
		recs := []Record{
			{Time: next(), Kind: KindTurnStart, Turn: turn, Text: fmt.Sprintf("request %d of %s", turn, id)},
			{Time: next(), Kind: KindAppend, Content: content(genai.RoleUser, "please fix the failing test")},
			{Time: next(), Kind: KindAppend, Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{ID: "c", Name: "run_command", Args: map[string]any{"command": "go test ./..."}}}}}},
			{Time: next(), Kind: KindUsage, Usage: &contextwin.CallUsage{Prompt: 1000 * turn, Candidates: 20}},
			{Time: next(), Kind: KindAppend, Content: &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{ID: "c", Name: "run_command", Response: map[string]any{"output": output}}}}}},
			{Time: next(), Kind: KindAppend, Content: content(genai.RoleModel, strings.Repeat("The tests pass now. ", 50))},
			{Time: next(), Kind: KindUsage, Usage: &contextwin.CallUsage{Prompt: 1000*turn + 900, Candidates: 200}},
			{Time: next(), Kind: KindTurnEnd, StopReason: "end_turn"},
		}
		for _, r := range recs {
			if err := log.Append(r); err != nil {
				tb.Fatal(err)
			}
		}
	}
	if err := log.Close(); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkList lists 200 saved sessions of 10 turns each (about 70 KB of log apiece), what
// reprise.sessions and `reprise sessions` answer.
func BenchmarkList(b *testing.B) {
	st, err := OpenStore(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	const n = 200
	for i := range n {
		writeSession(b, st, fmt.Sprintf("s%03d", i), 10)
	}
	for b.Loop() {
		list, err := st.List(nil)
		if err != nil || len(list) != n {
			b.Fatalf("listed %d sessions (%v), want %d", len(list), err, n)
		}
	}
}

// BenchmarkListLegacy lists the same sessions with no summary on disk, as logs written before
// summaries existed: each is replayed, and its summary written for the next listing.
func BenchmarkListLegacy(b *testing.B) {
	st, err := OpenStore(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	const n = 200
	for i := range n {
		writeSession(b, st, fmt.Sprintf("s%03d", i), 10)
	}
	for b.Loop() {
		b.StopTimer()
		for i := range n {
			if err := os.Remove(filepath.Join(st.Dir(fmt.Sprintf("s%03d", i)), SummaryFile)); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		list, err := st.List(nil)
		if err != nil || len(list) != n {
			b.Fatalf("listed %d sessions (%v), want %d", len(list), err, n)
		}
	}
}
