package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/agent/journal"
)

// TestTranscriptRebuildsEditsAndReviews: a session resumed from its journal gives the transcript
// the live one gave: each edit with the diff its live event carried, under the id the editor saw,
// and each turn's changed files with what became of them (kept, undone, an undo refused with its
// reason), a refusal landing on the turn whose restore point the undo would have put back.
func TestTranscriptRebuildsEditsAndReviews(t *testing.T) {
	two := geminitest.Turn{Parts: []geminitest.Part{
		{FunctionCall: &geminitest.FunctionCall{Name: "edit_file", Args: map[string]any{"path": "a.txt", "old": "one", "new": "ONE"}}},
		{FunctionCall: &geminitest.FunctionCall{Name: "write_file", Args: map[string]any{"path": "b.txt", "content": "new\nfile\n"}}},
	}}
	f, st, log := saved(t, fixtureOpts{files: map[string]string{"a.txt": "one\ntwo\n", "c.txt": "x\ny\n"}},
		two, textTurn("edited a, wrote b"),
		callTurn("edit_file", map[string]any{"path": "c.txt", "old": "y", "new": "Y"}, ""), textTurn("edited c"))
	evs, err := f.run(t.Context(), "first")
	if err != nil {
		t.Fatal(err)
	}
	end := lastEnd(t, evs)
	if got := changePaths(end.Changes); got != "a.txt modified +1 −1, b.txt created +2 −0" {
		t.Errorf("turn 1 end lists %q", got)
	}
	var live []*ToolEvent
	for _, ev := range ofType(evs, EventToolUpdate) {
		live = append(live, ev.Tool)
	}
	if _, err := f.run(t.Context(), "second"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.Keep(1, []string{"b.txt"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.Keep(1, []string{"c.txt"}); !errors.Is(err, ErrNotChanged) {
		t.Errorf("keeping a file turn 1 did not change: %v, want ErrNotChanged", err)
	}
	if err := os.WriteFile(filepath.Join(f.ws, "c.txt"), []byte("x\nY\nmine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if restored, refused, err := f.s.RestorePaths(1, []string{"a.txt", "c.txt"}); err != nil || len(restored) != 1 || len(refused) != 1 {
		t.Fatalf("RestorePaths = %v, %v, %v", restored, refused, err)
	}

	s := resumeFrom(t, f, st, log)
	if diff := cmp.Diff(f.s.Transcript(), s.Transcript()); diff != "" {
		t.Errorf("transcript differs (-live +resumed):\n%s", diff)
	}
	tr := s.Transcript()
	var tools, ends []TranscriptEntry
	for _, e := range tr {
		switch e.Kind {
		case EntryTool:
			tools = append(tools, e)
		case EntryTurnEnd:
			ends = append(ends, e)
		}
	}
	if len(tools) != 3 || len(ends) != 2 {
		t.Fatalf("%d tools and %d turn ends in %+v", len(tools), len(ends), tr)
	}
	for i, ev := range live {
		if tools[i].ToolCallID != ev.ID || tools[i].Args["path"] != ev.Args["path"] {
			t.Errorf("tool %d: id %q, args %v; live %q, %v", i, tools[i].ToolCallID, tools[i].Args, ev.ID, ev.Args)
		}
		if diff := cmp.Diff(ev.Diff, tools[i].Diff); diff != "" {
			t.Errorf("tool %d's diff (-live +resumed):\n%s", i, diff)
		}
	}
	if tools[1].Diff == nil || tools[1].Diff.OldText != nil || tools[1].Diff.NewText != "new\nfile\n" {
		t.Errorf("the created file's diff = %+v", tools[1].Diff)
	}
	if got := reviews(ends[0].Changes); got != "a.txt undone, b.txt kept" {
		t.Errorf("turn 1's changes: %s", got)
	}
	if got := reviews(ends[1].Changes); !strings.HasPrefix(got, "c.txt refused: changed since the agent last wrote it") {
		t.Errorf("turn 2's changes: %s", got)
	}
	if ends[1].Calls != 4 || ends[1].StopReason != StopEndTurn {
		t.Errorf("turn 2's end = %+v", ends[1])
	}
	// Each text is kept once: a.txt before and after, b.txt after, c.txt before and after.
	texts, _ := filepath.Glob(filepath.Join(st.Dir(f.s.ID()), "restore", "text-*"))
	if len(texts) != 5 {
		t.Errorf("%d texts kept, want 5: %v", len(texts), texts)
	}
}

func changePaths(cs []FileChange) string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Path+" "+string(c.State)+fmt.Sprintf(" +%d −%d", c.Added, c.Removed))
	}
	return strings.Join(out, ", ")
}

func reviews(rows []ChangeRow) string {
	var out []string
	for _, r := range rows {
		s := r.Path + " " + string(r.Review)
		if r.Reason != "" {
			s += ": " + r.Reason
		}
		out = append(out, s)
	}
	return strings.Join(out, ", ")
}

// TestTranscriptOfAnOlderLog: a log written before turn ends listed their files still gives each
// turn that changed files its list, compared with the disk now.
func TestTranscriptOfAnOlderLog(t *testing.T) {
	f, st, log := saved(t, fixtureOpts{files: map[string]string{"a.txt": "one\ntwo\n"}},
		callTurn("edit_file", map[string]any{"path": "a.txt", "old": "two", "new": "TWO"}, ""), textTurn("edited"))
	if _, err := f.run(t.Context(), "edit a"); err != nil {
		t.Fatal(err)
	}
	log.Close()
	path := filepath.Join(st.Dir(f.s.ID()), "events.jsonl")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var r journal.Record
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		if r.Kind == journal.KindTurnEnd {
			if len(r.Changes) != 1 {
				t.Fatalf("turn_end record without its change: %s", l)
			}
			r.Changes = nil
			b, _ := json.Marshal(r)
			l = string(b)
		}
		lines = append(lines, l)
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := resumeFrom(t, f, st, log)
	var end *TranscriptEntry
	for _, e := range s.Transcript() {
		if e.Kind == EntryTurnEnd {
			end = &e
		}
	}
	if end == nil || reviews(end.Changes) != "a.txt pending" || end.Changes[0].Added != 1 {
		t.Errorf("turn end = %+v", end)
	}
}

// TestTranscriptInMemory: a session that keeps no log still gives its edits' diffs.
func TestTranscriptInMemory(t *testing.T) {
	f := newFixture(t, fixtureOpts{files: map[string]string{"a.txt": "one\n"}},
		callTurn("edit_file", map[string]any{"path": "a.txt", "old": "one", "new": "ONE"}, ""), textTurn("edited"))
	evs, err := f.run(t.Context(), "edit a")
	if err != nil {
		t.Fatal(err)
	}
	done := ofType(evs, EventToolUpdate)
	if len(done) != 1 || done[0].Tool.Diff == nil {
		t.Fatalf("tool updates = %+v", done)
	}
	for _, e := range f.s.Transcript() {
		if e.Kind == EntryTool {
			if diff := cmp.Diff(done[0].Tool.Diff, e.Diff); diff != "" {
				t.Errorf("diff (-live +transcript):\n%s", diff)
			}
			return
		}
	}
	t.Error("no tool in the transcript")
}
