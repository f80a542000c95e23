package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/contextwin"
)

func TestResumeRebuildsTheSession(t *testing.T) {
	p := contextwin.DefaultPolicy()
	p.ContextBudget, p.KeepRecentTurns = 5000, 2
	turns := append(readTurns(8), textTurn("read them all"), summaryTurn(summaryText), summaryTurn(summaryText))
	turns = append(turns, callTurn("edit_file", map[string]any{"path": "notes/0.txt", "old": "note 0 line", "new": "NOTE"}, sig), textTurn("edited"))
	f, st, log := saved(t, fixtureOpts{policy: p, files: notes(8, 2000)}, turns...)
	if _, err := f.run(t.Context(), "Read every note."); err != nil {
		t.Fatal(err)
	}
	if _, err := f.run(t.Context(), "Now edit note 0."); err != nil {
		t.Fatal(err)
	}
	if len(f.s.Conversation().Checkpoints()) == 0 {
		t.Fatal("no compaction to persist")
	}
	s := resumeFrom(t, f, st, log)
	if diff := cmp.Diff(f.s.Conversation().History(), s.Conversation().History()); diff != "" {
		t.Errorf("resumed history differs (-live +resumed):\n%s", diff)
	}
	if diff := cmp.Diff(f.s.Conversation().Checkpoints(), s.Conversation().Checkpoints(), cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); diff != "" {
		t.Errorf("checkpoints differ:\n%s", diff)
	}
	if a, b := f.s.bill.sum(), s.bill.sum(); a.InputTokens != b.InputTokens || a.OutputTokens != b.OutputTokens || a.Calls != b.Calls || abs(a.Cost-b.Cost) > 1e-9 {
		t.Errorf("totals: live %+v, resumed %+v", a, b)
	}
	if a, b := f.s.bill.sum().Summaries, s.bill.sum().Summaries; a.Calls == 0 || a.Calls != b.Calls || a.InputTokens != b.InputTokens || abs(a.Cost-b.Cost) > 1e-9 {
		t.Errorf("summaries: live %+v, resumed %+v", a, b)
	}
	if diff := cmp.Diff(f.s.files.State(), s.files.State()); diff != "" {
		t.Errorf("state differs:\n%s", diff)
	}
	// The transcript, compacted parts included, is the same after resuming.
	if diff := cmp.Diff(f.s.Transcript(), s.Transcript()); diff != "" {
		t.Errorf("transcript differs (-live +resumed):\n%s", diff)
	}
	tr := s.Transcript()
	kinds := map[EntryKind]int{}
	for _, e := range tr {
		kinds[e.Kind]++
	}
	if kinds["user"] != 2 || kinds["tool"] != 9 || kinds["compaction"] == 0 || kinds["agent"] != 2 {
		t.Errorf("transcript kinds = %v", kinds)
	}
	if tr[1].Kind != "tool" || tr[1].Status != ToolCompleted || !strings.Contains(tr[1].Output, "note 0 line") || tr[1].Title != "Read notes/0.txt" {
		t.Errorf("first tool entry = %+v", tr[1])
	}
	if lu, ru := f.s.Usage(), s.Usage(); lu.Compactions != ru.Compactions {
		t.Errorf("usage: live %+v, resumed %+v", lu, ru)
	}
	// Checkpoint files for people to read.
	files, _ := filepath.Glob(filepath.Join(st.Dir(f.s.ID()), "checkpoints", "*.md"))
	if len(files) != len(f.s.Conversation().Checkpoints()) || !strings.HasSuffix(files[0], "001-read-the-notes.md") {
		t.Errorf("checkpoint files = %v", files)
	}
	// Private files.
	for _, name := range []string{"events.jsonl", "checkpoints"} {
		fi, err := os.Stat(filepath.Join(st.Dir(f.s.ID()), name))
		if err != nil || fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s: mode %v, %v", name, fi.Mode(), err)
		}
	}
	// The key is never written.
	data, _ := os.ReadFile(filepath.Join(st.Dir(f.s.ID()), "events.jsonl"))
	if strings.Contains(string(data), "test-key") {
		t.Error("the API key is in the log")
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func TestResumeAfterCrashMidTurn(t *testing.T) {
	// A log that ends after the model asked for a tool: the calls get "interrupted" answers.
	st, _ := journal.OpenStore(t.TempDir())
	log, _ := st.Create(journal.Meta{ID: "crashed", Created: time.Now()})
	log.Append(journal.Record{Kind: journal.KindTurnStart, Turn: 1, Text: "do it"})
	log.Append(journal.Record{Kind: journal.KindAppend, Content: genai.NewContentFromText("do it", genai.RoleUser)})
	log.Append(journal.Record{Kind: journal.KindUsage, Usage: &contextwin.CallUsage{Prompt: 900, Candidates: 5}})
	call := &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{Name: "run_command", Args: map[string]any{"command": "go test ./..."}}, ThoughtSignature: []byte("sig")}}}
	log.Append(journal.Record{Kind: journal.KindAppend, Content: call})
	log.Close()
	snap, err := st.Load("crashed")
	if err != nil {
		t.Fatal(err)
	}
	if !snap.Interrupted || len(snap.History) != 3 || !strings.Contains(snap.History[2].Parts[0].FunctionResponse.Response["error"].(string), "interrupted") {
		t.Fatalf("snapshot = %+v", snap)
	}
	if string(snap.History[1].Parts[0].ThoughtSignature) != "sig" || snap.Totals.InputTokens != 900 {
		t.Errorf("the model's call or the usage was lost: %+v", snap)
	}
}
