package agent

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent/gemini"
	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/agent/session"
	"github.com/reprise-dev/reprise/contextwin"
)

// saved is a fixture whose session is journaled to a store.
func saved(t *testing.T, o fixtureOpts, turns ...geminitest.Turn) (*fixture, *session.Store, *session.Log) {
	t.Helper()
	f := newFixture(t, o, turns...)
	st, err := session.OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	log, err := st.Create(session.Meta{ID: f.s.ID(), Workspace: f.ws, Model: "gemini-2.5-flash", Created: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	f.s.opts.Journal, f.s.opts.Blobs = log, log
	return f, st, log
}

func resumeFrom(t *testing.T, f *fixture, st *session.Store, log *session.Log) *Session {
	t.Helper()
	log.Close()
	log2, snap, err := st.Resume(f.s.ID())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log2.Close() })
	client, _ := gemini.New(t.Context(), gemini.Config{APIKey: "k", BaseURL: f.srv.URL(), BaseDelay: time.Millisecond})
	s, err := Resume(Options{Workspace: f.ws, Model: client, ModelName: "gemini-2.5-flash", Policy: f.s.opts.Policy, StateDir: t.TempDir(), Journal: log2, Blobs: log2}, snap)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

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
	if len(f.s.Checkpoints()) == 0 {
		t.Fatal("no compaction to persist")
	}
	s := resumeFrom(t, f, st, log)
	if diff := cmp.Diff(f.s.History(), s.History()); diff != "" {
		t.Errorf("resumed history differs (-live +resumed):\n%s", diff)
	}
	if diff := cmp.Diff(f.s.Checkpoints(), s.Checkpoints(), cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); diff != "" {
		t.Errorf("checkpoints differ:\n%s", diff)
	}
	if a, b := f.s.Totals(), s.Totals(); a.InputTokens != b.InputTokens || a.OutputTokens != b.OutputTokens || a.Calls != b.Calls || abs(a.Cost-b.Cost) > 1e-9 {
		t.Errorf("totals: live %+v, resumed %+v", a, b)
	}
	if diff := cmp.Diff(f.s.State(), s.State()); diff != "" {
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
	if len(files) != len(f.s.Checkpoints()) || !strings.HasSuffix(files[0], "001-read-the-notes.md") {
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

func TestTornAndGarbledLogs(t *testing.T) {
	f, st, log := saved(t, fixtureOpts{files: map[string]string{"a.txt": "a\n"}},
		callTurn("read_file", map[string]any{"path": "a.txt"}, ""), textTurn("done"))
	if _, err := f.run(t.Context(), "read a"); err != nil {
		t.Fatal(err)
	}
	log.Close()
	path := filepath.Join(st.Dir(f.s.ID()), "events.jsonl")
	data, _ := os.ReadFile(path)
	// A garbled line in the middle and a torn last line.
	lines := strings.SplitAfter(string(data), "\n")
	corrupt := strings.Join(lines[:3], "") + "{not json\n" + strings.Join(lines[3:], "") + `{"t":"2026-11-30T00:00:00Z","kind":"app`
	os.WriteFile(path, []byte(corrupt), 0o600)
	snap, err := st.Load(f.s.ID())
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Warnings) != 2 || !strings.Contains(snap.Warnings[0], "garbled") || !strings.Contains(snap.Warnings[1], "torn") {
		t.Errorf("warnings = %q", snap.Warnings)
	}
	if diff := cmp.Diff(f.s.History(), snap.History); diff != "" {
		t.Errorf("history after skipping bad lines (-want +got):\n%s", diff)
	}
	// Appending after a torn line starts a fresh line.
	log2, _, err := st.Resume(f.s.ID())
	if err != nil {
		t.Fatal(err)
	}
	log2.Append(session.Record{Kind: session.KindVerdict, Verdict: "3 passed"})
	log2.Close()
	snap, _ = st.Load(f.s.ID())
	if snap.Verdict != "3 passed" {
		t.Errorf("the record after a torn line was lost: %q", snap.Warnings)
	}
	// A broken session does not hide the others.
	other, _ := st.Create(session.Meta{ID: "other-1", Created: time.Now()})
	other.Close()
	os.WriteFile(filepath.Join(st.Dir("other-1"), "events.jsonl"), []byte("\x00\x01garbage"), 0o600)
	list, err := st.List()
	if err != nil || len(list) != 2 {
		t.Fatalf("list = %+v, %v", list, err)
	}
}

func TestLockedSession(t *testing.T) {
	f, st, _ := saved(t, fixtureOpts{})
	_, _, err := st.Resume(f.s.ID())
	if !errors.Is(err, session.ErrLocked) || !strings.Contains(err.Error(), "pid") {
		t.Errorf("second open: %v, want ErrLocked naming the pid", err)
	}
}

func TestRestoreFiles(t *testing.T) {
	f, st, log := saved(t, fixtureOpts{files: map[string]string{"a.txt": "one\n"}},
		callTurn("edit_file", map[string]any{"path": "a.txt", "old": "one", "new": "two"}, ""), textTurn("ok"),
		callTurn("edit_file", map[string]any{"path": "a.txt", "old": "two", "new": "three"}, ""),
		callTurn("write_file", map[string]any{"path": "new.txt", "content": "brand new\n"}, ""), textTurn("ok"),
	)
	f.run(t.Context(), "turn 1")
	f.run(t.Context(), "turn 2")
	read := func(name string) string { b, _ := os.ReadFile(filepath.Join(f.ws, name)); return string(b) }
	if read("a.txt") != "three\n" || read("new.txt") != "brand new\n" {
		t.Fatalf("setup: a=%q new=%q", read("a.txt"), read("new.txt"))
	}
	// A file the user changed since blocks the restore, which then changes nothing.
	os.WriteFile(filepath.Join(f.ws, "new.txt"), []byte("user edit\n"), 0o644)
	if _, err := f.s.RestoreFiles(2); !errors.Is(err, ErrUserChanged) || !strings.Contains(err.Error(), "new.txt") {
		t.Fatalf("restore with a user change: %v", err)
	}
	if read("a.txt") != "three\n" {
		t.Error("a refused restore changed a file")
	}
	os.WriteFile(filepath.Join(f.ws, "new.txt"), []byte("brand new\n"), 0o644)
	// Resume first: restore works from the log alone.
	s := resumeFrom(t, f, st, log)
	got, err := s.RestoreFiles(2)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a.txt", "new.txt"}, got); diff != "" {
		t.Errorf("restored (-want +got):\n%s", diff)
	}
	if read("a.txt") != "two\n" {
		t.Errorf("a.txt = %q, want its content before turn 2", read("a.txt"))
	}
	if _, err := os.Stat(filepath.Join(f.ws, "new.txt")); !os.IsNotExist(err) {
		t.Error("new.txt, created in turn 2, still exists")
	}
	if diff := cmp.Diff([]string{"a.txt"}, s.State().FilesModified); diff != "" {
		t.Errorf("files modified after restore (-want +got):\n%s", diff)
	}
	if _, err := s.RestoreFiles(1); err != nil || read("a.txt") != "one\n" {
		t.Errorf("restore to before turn 1: %v, a=%q", err, read("a.txt"))
	}
}

func TestUndoCompaction(t *testing.T) {
	turns := append(readTurns(6), textTurn("done"), summaryTurn(summaryText))
	f, st, log := saved(t, fixtureOpts{files: notes(6, 300)}, turns...)
	if _, err := f.run(t.Context(), "Read every note."); err != nil {
		t.Fatal(err)
	}
	before := f.s.History()
	if _, err := f.s.Compact(t.Context(), ""); err != nil {
		t.Fatal(err)
	}
	cp, err := f.s.UndoCompaction()
	if err != nil {
		t.Fatal(err)
	}
	if cp.N != 1 || len(f.s.Checkpoints()) != 0 {
		t.Errorf("undone %+v, checkpoints left %d", cp, len(f.s.Checkpoints()))
	}
	if diff := cmp.Diff(before, f.s.History()); diff != "" {
		t.Errorf("history after undo (-want +got):\n%s", diff)
	}
	if _, err := f.s.UndoCompaction(); !errors.Is(err, ErrCannotUndo) {
		t.Errorf("second undo: %v", err)
	}
	// The undo is in the log.
	s := resumeFrom(t, f, st, log)
	if diff := cmp.Diff(before, s.History()); diff != "" {
		t.Errorf("resumed after undo (-want +got):\n%s", diff)
	}
}

func TestUndoRefusedOverBudget(t *testing.T) {
	p := contextwin.DefaultPolicy()
	p.ContextBudget, p.KeepRecentTurns = 5000, 2
	turns := append(readTurns(8), textTurn("read them all"), summaryTurn(summaryText), summaryTurn(summaryText))
	f, _, _ := saved(t, fixtureOpts{policy: p, files: notes(8, 2000)}, turns...)
	f.run(t.Context(), "Read every note.")
	if len(f.s.Checkpoints()) == 0 {
		t.Fatal("no compaction")
	}
	_, err := f.s.UndoCompaction()
	if !errors.Is(err, ErrCannotUndo) || !strings.Contains(err.Error(), "over compactAt × budget") {
		t.Errorf("undo over budget: %v", err)
	}
}

func TestResumeAfterCrashMidTurn(t *testing.T) {
	// A log that ends after the model asked for a tool: the calls get "interrupted" answers.
	st, _ := session.OpenStore(t.TempDir())
	log, _ := st.Create(session.Meta{ID: "crashed", Created: time.Now()})
	log.Append(session.Record{Kind: session.KindTurnStart, Turn: 1, Text: "do it"})
	log.Append(session.Record{Kind: session.KindAppend, Content: genai.NewContentFromText("do it", genai.RoleUser)})
	log.Append(session.Record{Kind: session.KindUsage, Usage: &contextwin.CallUsage{Prompt: 900, Candidates: 5}})
	call := &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{Name: "run_command", Args: map[string]any{"command": "go test ./..."}}, ThoughtSignature: []byte("sig")}}}
	log.Append(session.Record{Kind: session.KindAppend, Content: call})
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
