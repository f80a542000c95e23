package journal

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/contextwin"
)

func newStore(t *testing.T) *Store {
	t.Helper()
	st, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// summaryOnDisk reads a session's summary file whole, current or not.
func summaryOnDisk(t *testing.T, st *Store, id string) summaryFile {
	t.Helper()
	var f summaryFile
	b, err := os.ReadFile(filepath.Join(st.Dir(id), SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

func logSize(t *testing.T, st *Store, id string) int64 {
	t.Helper()
	fi, err := os.Stat(filepath.Join(st.Dir(id), "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// listOne lists the store, which must hold exactly one session.
func listOne(t *testing.T, st *Store) Summary {
	t.Helper()
	list, err := st.List(nil)
	if err != nil || len(list) != 1 {
		t.Fatalf("List = %+v, %v; want one session", list, err)
	}
	return list[0]
}

// TestSummaryMatchesReplay: what a log keeps as it goes is what replaying it says, whatever the
// records: turns, usage, compactions and their undo, restores, settings, a resumed log.
func TestSummaryMatchesReplay(t *testing.T) {
	st := newStore(t)
	writeSession(t, st, "s", 2)
	check := func(when string) {
		t.Helper()
		snap, err := st.Load("s")
		if err != nil {
			t.Fatal(err)
		}
		f := summaryOnDisk(t, st, "s")
		if diff := cmp.Diff(f.Summary, snap.Brief()); diff != "" {
			t.Errorf("%s: summary file vs replay (-file +replay):\n%s", when, diff)
		}
		if size := logSize(t, st, "s"); f.LogSize != size {
			t.Errorf("%s: summary written at %d bytes, the log has %d", when, f.LogSize, size)
		}
	}
	check("after two turns")

	log, snap, err := st.Resume("s")
	if err != nil {
		t.Fatal(err)
	}
	at := snap.LastActivity
	next := func() time.Time { at = at.Add(time.Second); return at }
	head := &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: "summary"}}}
	policy := contextwin.DefaultPolicy()
	// Within a turn the file is left alone; each record outside one brings it up to date.
	for _, step := range []struct {
		r      Record
		inTurn bool
	}{
		{Record{Time: next(), Kind: KindTurnStart, Turn: 3, Text: "third"}, true},
		{Record{Time: next(), Kind: KindUsage, Usage: &contextwin.CallUsage{Prompt: 4242}}, true},
		{Record{Time: next(), Kind: KindCompaction, Compaction: &Compaction{Head: head, Split: 2, Checkpoint: contextwin.Checkpoint{N: 1, Title: "auto"}}}, true},
		{Record{Time: next(), Kind: KindTurnEnd, StopReason: "end_turn"}, false},
		{Record{Time: next(), Kind: KindCompaction, Compaction: &Compaction{Head: head, Split: 1, Checkpoint: contextwin.Checkpoint{N: 2, Title: "manual"}}}, false},
		{Record{Time: next(), Kind: KindUndo}, false},
		{Record{Time: next(), Kind: KindRestore, Restored: &Restored{Turn: 3, Paths: []string{"a.go"}}}, false},
		{Record{Time: next(), Kind: KindSettings, Policy: &policy}, false},
	} {
		if err := log.Append(step.r); err != nil {
			t.Fatal(err)
		}
		if !step.inTurn {
			check("after " + step.r.Kind)
		}
	}
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}
	check("after close")
}

// TestListUsesSummary: a log whose summary is current is not read. Its records are overwritten
// with garbage of the same length, which a replay would report; the listing still shows the
// summary. Once the log grows, the summary is stale and the log is replayed.
func TestListUsesSummary(t *testing.T) {
	st := newStore(t)
	writeSession(t, st, "s", 3)
	want := listOne(t, st)
	path := filepath.Join(st.Dir("s"), "events.jsonl")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	garbage := bytes.Repeat([]byte("x"), len(data)-1)
	if err := os.WriteFile(path, append(garbage, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := listOne(t, st); !cmp.Equal(got, want) {
		t.Errorf("with a current summary, List = %+v; want the summary %+v (the log was read)", got, want)
	}

	// The log grows (another process appends): the summary no longer answers for it.
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"t":"2026-12-01T00:00:00Z","kind":"turn_start","turn":9,"text":"late"}` + "\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	got := listOne(t, st)
	if got.Turns != 9 || got.Title != "late" || got.Calls != 0 {
		t.Errorf("after the log grew, List = %+v; want the replayed log (turn 9, title late, no usage left)", got)
	}
	if f := summaryOnDisk(t, st, "s"); f.LogSize != logSize(t, st, "s") || f.Title != "late" {
		t.Errorf("the replay did not write the summary back: %+v", f)
	}
}

// TestListLegacyLogs: a log without a summary (written before summaries, or whose summary was
// lost) is replayed and listed as before, and its summary is written for the next listing.
func TestListLegacyLogs(t *testing.T) {
	st := newStore(t)
	writeSession(t, st, "old", 2)
	writeSession(t, st, "new", 1)
	want, err := st.List(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(st.Dir("old"), SummaryFile)); err != nil {
		t.Fatal(err)
	}
	got, err := st.List(nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("legacy log listed differently (-got +want):\n%s", diff)
	}
	if f := summaryOnDisk(t, st, "old"); f.LogSize != logSize(t, st, "old") || f.Turns != 2 {
		t.Errorf("summary written for the legacy log: %+v", f)
	}
	// A garbled summary is as good as none.
	if err := os.WriteFile(filepath.Join(st.Dir("new"), SummaryFile), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := st.List(nil); err != nil || !cmp.Equal(got, want) {
		t.Errorf("with a garbled summary, List = %+v, %v; want %+v", got, err, want)
	}
	// skip leaves sessions out without reading them.
	if got, err := st.List(func(id string) bool { return id == "old" }); err != nil || len(got) != 1 || got[0].ID != "new" {
		t.Errorf("List skipping old = %+v, %v", got, err)
	}
}

// TestSummaryMidTurn: a turn in progress does not rewrite the summary at each record, so a log
// cut mid-turn (a crash) has a stale summary and is replayed, its open turn included.
func TestSummaryMidTurn(t *testing.T) {
	st := newStore(t)
	writeSession(t, st, "s", 1)
	log, _, err := st.Resume("s")
	if err != nil {
		t.Fatal(err)
	}
	before := summaryOnDisk(t, st, "s")
	if err := log.Append(Record{Time: time.Now(), Kind: KindTurnStart, Turn: 2, Text: "second"}); err != nil {
		t.Fatal(err)
	}
	if err := log.Append(Record{Time: time.Now(), Kind: KindUsage, Usage: &contextwin.CallUsage{Prompt: 7}}); err != nil {
		t.Fatal(err)
	}
	if got := summaryOnDisk(t, st, "s"); !cmp.Equal(got, before) {
		t.Errorf("summary rewritten mid-turn: %+v, was %+v", got, before)
	}
	if got := listOne(t, st); got.Turns != 2 || got.LastPrompt != 7 {
		t.Errorf("mid-turn, List = %+v; want the replayed log (2 turns, last prompt 7)", got)
	}
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}
}
