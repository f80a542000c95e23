package agent

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-dev/reprise/agent/gemini"
	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/agent/journal"
)

// saved is a fixture whose session is journaled to a store.
func saved(t *testing.T, o fixtureOpts, turns ...geminitest.Turn) (*fixture, *journal.Store, *journal.Log) {
	t.Helper()
	f := newFixture(t, o, turns...)
	st, err := journal.OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	log, err := st.Create(journal.Meta{ID: f.s.ID(), Workspace: f.ws, Model: "gemini-2.5-flash", Created: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	f.s.opts.Journal, f.s.opts.Blobs = log, log
	return f, st, log
}

func resumeFrom(t *testing.T, f *fixture, st *journal.Store, log *journal.Log) *Session {
	t.Helper()
	log.Close()
	log2, snap, err := st.Resume(f.s.ID())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log2.Close() })
	client, _ := gemini.New(t.Context(), gemini.Config{APIKey: "k", BaseURL: f.srv.URL(), BaseDelay: time.Millisecond})
	s, err := Resume(Options{Workspace: f.ws, Model: client, ModelName: "gemini-2.5-flash", Config: Config{ContextPolicy: f.s.opts.ContextPolicy}, StateDir: t.TempDir(), Journal: log2, Blobs: log2}, snap)
	if err != nil {
		t.Fatal(err)
	}
	return s
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
	if diff := cmp.Diff(f.s.Conversation().History(), snap.History); diff != "" {
		t.Errorf("history after skipping bad lines (-want +got):\n%s", diff)
	}
	// Appending after a torn line starts a fresh line.
	log2, _, err := st.Resume(f.s.ID())
	if err != nil {
		t.Fatal(err)
	}
	log2.Append(journal.Record{Kind: journal.KindVerdict, Verdict: "3 passed"})
	log2.Close()
	snap, _ = st.Load(f.s.ID())
	if snap.Verdict != "3 passed" {
		t.Errorf("the record after a torn line was lost: %q", snap.Warnings)
	}
	// A broken session does not hide the others.
	other, _ := st.Create(journal.Meta{ID: "other-1", Created: time.Now()})
	other.Close()
	os.WriteFile(filepath.Join(st.Dir("other-1"), "events.jsonl"), []byte("\x00\x01garbage"), 0o600)
	list, err := st.List(nil)
	if err != nil || len(list) != 2 {
		t.Fatalf("list = %+v, %v", list, err)
	}
}

func TestLockedSession(t *testing.T) {
	f, st, _ := saved(t, fixtureOpts{})
	_, _, err := st.Resume(f.s.ID())
	if !errors.Is(err, journal.ErrLocked) || !strings.Contains(err.Error(), "pid") {
		t.Errorf("second open: %v, want ErrLocked naming the pid", err)
	}
}
