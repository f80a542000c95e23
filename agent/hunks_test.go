package agent

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reprise-dev/reprise/agent/diff"
)

const hunkOld = "package cart\n\nfunc A() int { return 1 }\n\nfunc B() int { return 2 }\n\nfunc C() int { return 3 }\n\nfunc D() int { return 4 }\n"

// threeChanges runs one turn that rewrites cart.go with three changes apart: A's body, a line
// added after B, C removed.
func threeChanges(t *testing.T) *fixture {
	t.Helper()
	now := "package cart\n\nfunc A() int { return 10 }\n\nfunc B() int { return 2 }\nfunc B2() int { return 22 }\n\n\nfunc D() int { return 4 }\n"
	f, st, log := saved(t, fixtureOpts{files: map[string]string{"cart.go": hunkOld}},
		callTurn("write_file", map[string]any{"path": "cart.go", "content": now}, ""), textTurn("rewrote cart.go"))
	if _, err := f.run(t.Context(), "rewrite"); err != nil {
		t.Fatal(err)
	}
	f.store, f.log = st, log
	return f
}

func hunksNow(t *testing.T, s *Session) (FileChange, bool) {
	t.Helper()
	cs, err := s.HunkReview().Changes(1, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) == 0 {
		return FileChange{}, false
	}
	return cs[0], true
}

func readWS(t *testing.T, f *fixture, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.ws, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestHunksKeptAndUndoneOneByOne: the three changes of a file are listed with ids; undoing the
// middle one puts back only its lines, the others keep their ids; a kept one is marked; both
// survive a resume; the model is told the file changed; undoing the last ones restores the file
// whole, as an undo of the file would.
func TestHunksKeptAndUndoneOneByOne(t *testing.T) {
	f := threeChanges(t)
	c, _ := hunksNow(t, f.s)
	if len(c.Hunks) != 3 {
		t.Fatalf("%d hunks in %+v", len(c.Hunks), c)
	}
	a, b, cc := c.Hunks[0], c.Hunks[1], c.Hunks[2]
	if a.NewStart != 3 || a.NewLines != 1 || b.OldLines != 0 || b.NewStart != 6 || cc.NewLines != 0 || cc.OldLines != 1 {
		t.Errorf("hunk lines: %+v", c.Hunks)
	}
	undone, refused, err := f.s.HunkReview().Restore(1, []string{b.ID})
	if err != nil || len(refused) > 0 || !slices.Equal(undone, []string{b.ID}) {
		t.Fatalf("Restore = %v, %v, %v", undone, refused, err)
	}
	want := strings.Replace(hunkOld, "return 1 }", "return 10 }", 1)
	want = strings.Replace(want, "func C() int { return 3 }\n", "", 1)
	if got := readWS(t, f, "cart.go"); got != want {
		t.Errorf("after undoing B2:\n%s\nwant\n%s", got, want)
	}
	if !f.s.Files().Stale("cart.go") {
		t.Error("the model is not told that cart.go changed")
	}
	for range 2 { // kept twice: counted once
		if _, err := f.s.HunkReview().Keep(1, []string{a.ID}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.s.HunkReview().Keep(1, []string{b.ID}); !errors.Is(err, ErrNoHunk) {
		t.Errorf("keeping an undone hunk: %v, want ErrNoHunk", err)
	}
	c, _ = hunksNow(t, f.s)
	if len(c.Hunks) != 2 || c.Hunks[0].ID != a.ID || !c.Hunks[0].Kept || c.Hunks[1].ID != cc.ID || c.Hunks[1].Kept || c.HunksUndone != 1 {
		t.Errorf("after one undone and one kept: %+v", c)
	}
	// The review survives a resume, in the changes and in the turn's row.
	s := resumeFrom(t, f, f.store, f.log)
	c2, _ := hunksNow(t, s)
	if len(c2.Hunks) != 2 || !c2.Hunks[0].Kept || c2.HunksUndone != 1 {
		t.Errorf("resumed: %+v", c2)
	}
	row := lastRow(t, s, "cart.go")
	if row.HunksKept != 1 || row.HunksUndone != 1 || row.Review != ReviewPending {
		t.Errorf("resumed row: %+v", row)
	}
	// Undoing the last two puts the file back whole: listed undone, no change left.
	undone, _, err = s.HunkReview().Restore(1, []string{a.ID, cc.ID})
	if err != nil || len(undone) != 2 {
		t.Fatalf("Restore = %v, %v", undone, err)
	}
	if got := readWS(t, f, "cart.go"); got != hunkOld {
		t.Errorf("every hunk undone:\n%s\nwant the file before the turn", got)
	}
	if _, ok := hunksNow(t, s); ok {
		t.Error("a file back as before still listed")
	}
	if row := lastRow(t, s, "cart.go"); row.Review != ReviewUndone {
		t.Errorf("the row of a file whose hunks were all undone: %+v", row)
	}
}

// lastRow is path's row under the last turn end of s's transcript.
func lastRow(t *testing.T, s *Session, path string) ChangeRow {
	t.Helper()
	tr := s.Transcript()
	for i := len(tr) - 1; i >= 0; i-- {
		for _, r := range tr[i].Changes {
			if r.Path == path {
				return r
			}
		}
	}
	t.Fatalf("no row for %s", path)
	return ChangeRow{}
}

// TestHunkUndoKeepsTheUsersEdits: a hunk the user edited since is refused with the reason; one
// the user did not touch is undone, and the user's edits elsewhere in the file stay.
func TestHunkUndoKeepsTheUsersEdits(t *testing.T) {
	f := threeChanges(t)
	c, _ := hunksNow(t, f.s)
	a, b := c.Hunks[0], c.Hunks[1]
	mine := strings.Replace(readWS(t, f, "cart.go"), "return 22", "return 23", 1) + "// mine\n"
	if err := os.WriteFile(filepath.Join(f.ws, "cart.go"), []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	undone, refused, err := f.s.HunkReview().Restore(1, []string{a.ID, b.ID})
	if err != nil || !slices.Equal(undone, []string{a.ID}) || len(refused) != 1 || refused[0].Hunk != b.ID {
		t.Fatalf("Restore = %v, %+v, %v", undone, refused, err)
	}
	if !strings.Contains(refused[0].Reason, "edited or undone since") {
		t.Errorf("reason %q", refused[0].Reason)
	}
	got := readWS(t, f, "cart.go")
	if want := strings.Replace(mine, "return 10 }", "return 1 }", 1); got != want {
		t.Errorf("after undoing A with the user's edits:\n%s\nwant\n%s", got, want)
	}
	// The user's edits make a later undo of the whole file refused, as before.
	if _, err := f.s.RestoreFiles(1); !errors.Is(err, ErrUserChanged) {
		t.Errorf("RestoreFiles after a user edit: %v", err)
	}
}

// TestHunkUndoAfterAnUndoOfTheAgentsOwn: undoing a hunk of a file only the agent wrote leaves the
// whole file's undo possible.
func TestHunkUndoThenTheWholeFile(t *testing.T) {
	f := threeChanges(t)
	c, _ := hunksNow(t, f.s)
	if _, _, err := f.s.HunkReview().Restore(1, []string{c.Hunks[0].ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.RestoreFiles(1); err != nil {
		t.Fatalf("RestoreFiles after a hunk undone: %v", err)
	}
	if got := readWS(t, f, "cart.go"); got != hunkOld {
		t.Errorf("after the whole file's undo:\n%s", got)
	}
}

// TestHunkUndoNeverLeavesTheWorkspace: a file swapped for a symlink to outside is refused, and
// the outside file is untouched.
func TestHunkUndoNeverLeavesTheWorkspace(t *testing.T) {
	f := threeChanges(t)
	c, _ := hunksNow(t, f.s)
	outside := filepath.Join(t.TempDir(), "target.go")
	if err := os.WriteFile(outside, []byte(readWS(t, f, "cart.go")), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(f.ws, "cart.go")
	os.Remove(p)
	if err := os.Symlink(outside, p); err != nil {
		t.Fatal(err)
	}
	undone, refused, err := f.s.HunkReview().Restore(1, []string{c.Hunks[0].ID})
	if err != nil || len(undone) != 0 || len(refused) != 1 {
		t.Fatalf("Restore through a symlink = %v, %+v, %v", undone, refused, err)
	}
	if b, _ := os.ReadFile(outside); !strings.Contains(string(b), "return 10") {
		t.Errorf("the file outside was written:\n%s", b)
	}
}

// TestHunksOnGeneratedRewrites: on generated files and rewrites, through the session, undoing a
// random subset of hunks gives the file diff.Revert gives, and undoing the hunks then listed gives
// the file back as before the turn. The remaining hunks keep their ids unless the new diff aligns
// the lines otherwise, which a small alphabet of repeated lines provokes: the rate is logged.
func TestHunksOnGeneratedRewrites(t *testing.T) {
	r := rand.New(rand.NewPCG(37, 1))
	words := []string{"a\n", "b\n", "c\n", "}\n", "\n", "x := 1\n", "return x\n"}
	text := func(n int) string {
		var sb strings.Builder
		for range n {
			sb.WriteString(words[r.IntN(len(words))])
		}
		return sb.String()
	}
	moved, tried := 0, 0
	for n := range 60 {
		old, now := text(5+r.IntN(30)), text(5+r.IntN(30))
		if old == now {
			continue
		}
		f, _, _ := saved(t, fixtureOpts{files: map[string]string{"g.txt": old}},
			callTurn("write_file", map[string]any{"path": "g.txt", "content": now}, ""), textTurn("ok"))
		if _, err := f.run(t.Context(), "rewrite"); err != nil {
			t.Fatal(err)
		}
		c, _ := hunksNow(t, f.s)
		var pick, rest []string
		for _, h := range c.Hunks {
			if r.IntN(2) == 0 {
				pick = append(pick, h.ID)
			} else {
				rest = append(rest, h.ID)
			}
		}
		if len(pick) == 0 {
			continue
		}
		ops := diff.Lines(diff.Split(old), diff.Split(now))
		blocks := diff.Blocks(ops)
		want := diff.Revert(ops, blocks, func(i int) bool { return slices.Contains(pick, c.Hunks[i].ID) })
		if undone, refused, err := f.s.HunkReview().Restore(1, pick); err != nil || len(undone) != len(pick) || len(refused) > 0 {
			t.Fatalf("%d: Restore = %v, %+v, %v", n, undone, refused, err)
		}
		if got := readWS(t, f, "g.txt"); got != want {
			t.Fatalf("%d: got\n%q\nwant\n%q", n, got, want)
		}
		c2, ok := hunksNow(t, f.s)
		var ids []string
		for _, h := range c2.Hunks {
			ids = append(ids, h.ID)
		}
		tried++
		if ok && !slices.Equal(ids, rest) {
			moved++
		}
		if len(ids) > 0 {
			if _, _, err := f.s.HunkReview().Restore(1, ids); err != nil {
				t.Fatal(err)
			}
		}
		if got := readWS(t, f, "g.txt"); got != old {
			t.Fatalf("%d: every hunk undone gives\n%q\nwant\n%q", n, got, old)
		}
	}
	t.Logf("%d of %d partial undos realigned the hunks left", moved, tried)
}

// TestHunkIDsAreRefusedWhenUnknown: an id that is no change is refused by restore and an error
// for keep; a created file has no hunks.
func TestHunkIDsAreRefusedWhenUnknown(t *testing.T) {
	f := twoEdits(t, map[string]string{"a.txt": "one\ntwo\nthree\n"})
	cs, err := f.s.HunkReview().Changes(1, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 2 || len(cs[0].Hunks) != 1 || cs[1].Hunks != nil {
		t.Fatalf("changes %+v", cs)
	}
	undone, refused, err := f.s.HunkReview().Restore(1, []string{"h000000000000"})
	if err != nil || len(undone) != 0 || len(refused) != 1 || refused[0].Path != "" {
		t.Errorf("Restore of an unknown id = %v, %+v, %v", undone, refused, err)
	}
	if _, err := f.s.HunkReview().Keep(1, []string{"h000000000000"}); !errors.Is(err, ErrNoHunk) {
		t.Errorf("Keep of an unknown id: %v", err)
	}
	if only, _ := f.s.HunkReview().Changes(1, "b.txt"); len(only) != 1 || only[0].Path != "b.txt" {
		t.Errorf("the changes of b.txt only: %+v", only)
	}
}
