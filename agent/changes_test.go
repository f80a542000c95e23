package agent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-dev/reprise/agent/diff"
	"github.com/reprise-dev/reprise/agent/tools"
)

// twoEdits runs one turn that edits a.txt and creates b.txt.
func twoEdits(t *testing.T, files map[string]string) *fixture {
	t.Helper()
	f, _, _ := saved(t, fixtureOpts{files: files},
		callTurn("edit_file", map[string]any{"path": "a.txt", "old": "two", "new": "TWO"}, ""),
		callTurn("write_file", map[string]any{"path": "b.txt", "content": "new\n"}, ""), textTurn("ok"),
	)
	f.run(t.Context(), "edit")
	return f
}

func TestChanges(t *testing.T) {
	f := twoEdits(t, map[string]string{"a.txt": "one\ntwo\nthree\n"})
	got, err := f.s.Files().Changes(1)
	if err != nil {
		t.Fatal(err)
	}
	want := []FileChange{
		{Path: "a.txt", Turn: 1, State: ChangeModified, Added: 1, Removed: 1,
			Diff:  "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n",
			Hunks: []Hunk{{ID: hunksOf("a.txt", diff.Lines([]string{"two\n"}, []string{"TWO\n"}))[0].ID, OldStart: 2, OldLines: 1, NewStart: 2, NewLines: 1}}},
		{Path: "b.txt", Turn: 1, State: ChangeCreated, Added: 1,
			Diff: "--- /dev/null\n+++ b/b.txt\n@@ -0,0 +1 @@\n+new\n"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Changes (-want +got):\n%s", d)
	}
	// A user edit afterwards is shown, and flagged.
	os.Remove(filepath.Join(f.ws, "b.txt"))
	got, _ = f.s.Files().Changes(1)
	if len(got) != 1 || got[0].Path != "a.txt" {
		t.Errorf("after removing the created file: %+v, want only a.txt", got)
	}
	os.WriteFile(filepath.Join(f.ws, "a.txt"), []byte("one\nTWO\nthree\nuser\n"), 0o644)
	got, _ = f.s.Files().Changes(1)
	if len(got) != 1 || !got[0].UserChanged || got[0].Added != 2 {
		t.Errorf("after a user edit: %+v, want a.txt user-changed with +2", got)
	}
	if got, _ := f.s.Files().Changes(2); len(got) != 0 {
		t.Errorf("Changes(2) = %+v, want none", got)
	}
	// The paths alone, read from the restore points: the removed b.txt is still among them.
	if got := f.s.Files().ChangedPaths(1); !slices.Equal(got, []string{"a.txt", "b.txt"}) {
		t.Errorf("ChangedPaths(1) = %q, want a.txt and b.txt", got)
	}
	if got := f.s.Files().ChangedPaths(2); len(got) != 0 {
		t.Errorf("ChangedPaths(2) = %q, want none", got)
	}
}

func TestChangesBounded(t *testing.T) {
	var big strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&big, "line %d two\n", i)
	}
	f, _, _ := saved(t, fixtureOpts{files: map[string]string{"big.txt": big.String(), "bin.dat": "a\x00two"}},
		callTurn("write_file", map[string]any{"path": "big.txt", "content": strings.ReplaceAll(big.String(), "two", "2")}, ""),
		callTurn("write_file", map[string]any{"path": "bin.dat", "content": "b\x00two"}, ""), textTurn("ok"),
	)
	f.run(t.Context(), "edit")
	got, err := f.s.Files().Changes(1)
	if err != nil || len(got) != 2 {
		t.Fatalf("Changes = %+v, %v", got, err)
	}
	big1, bin := got[0], got[1]
	if big1.Diff != "" || big1.Added != 1000 || big1.Removed != 1000 || !strings.Contains(big1.Note, "too large") {
		t.Errorf("large file: %+v, want counts and a note instead of the diff", big1)
	}
	if !bin.Binary || bin.Diff != "" || bin.Note != "binary file" {
		t.Errorf("binary file: %+v", bin)
	}
}

func TestRestorePaths(t *testing.T) {
	f := twoEdits(t, map[string]string{"a.txt": "one\ntwo\nthree\n"})
	read := func(name string) string { b, _ := os.ReadFile(filepath.Join(f.ws, name)); return string(b) }
	for _, tc := range []struct {
		path string
		want error
	}{
		{"../x", ErrOutside},
		{filepath.Join(filepath.Dir(f.ws), "x"), ErrOutside},
		{"c.txt", ErrNotChanged},
	} {
		if _, _, err := f.s.RestorePaths(1, []string{"a.txt", tc.path}); !errors.Is(err, tc.want) {
			t.Errorf("RestorePaths(%q) = %v, want %v", tc.path, err, tc.want)
		}
	}
	if read("a.txt") != "one\nTWO\nthree\n" {
		t.Fatal("a refused call restored a file")
	}
	// One of two: b.txt stays.
	restored, refused, err := f.s.RestorePaths(1, []string{filepath.Join(f.ws, "a.txt")})
	if err != nil || len(refused) != 0 {
		t.Fatalf("RestorePaths(a.txt) = %v, %v", refused, err)
	}
	if d := cmp.Diff([]string{"a.txt"}, restored); d != "" {
		t.Errorf("restored (-want +got):\n%s", d)
	}
	if read("a.txt") != "one\ntwo\nthree\n" || read("b.txt") != "new\n" {
		t.Errorf("a=%q b=%q, want a restored and b kept", read("a.txt"), read("b.txt"))
	}
	if got, _ := f.s.Files().Changes(1); len(got) != 1 || got[0].Path != "b.txt" {
		t.Errorf("changes after restoring a.txt: %+v, want only b.txt", got)
	}
	if d := cmp.Diff([]string{"b.txt"}, f.s.files.State().FilesModified); d != "" {
		t.Errorf("files modified (-want +got):\n%s", d)
	}
	if _, _, err := f.s.RestorePaths(1, []string{"a.txt"}); !errors.Is(err, ErrNotChanged) {
		t.Errorf("restoring a.txt twice: %v, want ErrNotChanged", err)
	}
}

func TestRestorePathsUserEdit(t *testing.T) {
	f := twoEdits(t, map[string]string{"a.txt": "one\ntwo\nthree\n"})
	os.WriteFile(filepath.Join(f.ws, "b.txt"), []byte("user\n"), 0o644)
	restored, refused, err := f.s.RestorePaths(1, []string{"a.txt", "b.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"a.txt"}, restored); d != "" {
		t.Errorf("restored (-want +got):\n%s", d)
	}
	if len(refused) != 1 || refused[0].Path != "b.txt" || !strings.Contains(refused[0].Reason, "changed since the agent") {
		t.Errorf("refused = %+v, want b.txt with the reason", refused)
	}
	if b, _ := os.ReadFile(filepath.Join(f.ws, "b.txt")); string(b) != "user\n" {
		t.Errorf("b.txt = %q, the user's edit must stay", b)
	}
}

func TestDiffOf(t *testing.T) {
	f := twoEdits(t, map[string]string{"a.txt": "one\ntwo\n"})
	big := strings.Repeat("x", MaxEditDiffBytes+1)
	for _, tc := range []struct {
		name string
		edit tools.Edit
		want Diff
	}{
		{"edit", tools.Edit{Path: "a.txt", Old: []byte("a"), New: []byte("b"), Existed: true},
			Diff{Path: filepath.Join(f.ws, "a.txt"), OldText: ptr("a"), NewText: "b"}},
		{"created", tools.Edit{Path: "d/n.txt", New: []byte("n")}, Diff{Path: filepath.Join(f.ws, "d", "n.txt"), NewText: "n"}},
		{"large", tools.Edit{Path: "a.txt", Old: []byte("a"), New: []byte(big), Existed: true},
			Diff{Path: filepath.Join(f.ws, "a.txt"), Note: "a.txt is over 64 KiB: the diff is not sent with the edit (reprise.changes gives it, bounded)"}},
		{"binary", tools.Edit{Path: "a.txt", Old: []byte("a"), New: []byte("\x00"), Existed: true},
			Diff{Path: filepath.Join(f.ws, "a.txt"), Note: "a.txt is a binary file"}},
	} {
		if d := cmp.Diff(&tc.want, f.s.opts.diffOf(&tc.edit)); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, d)
		}
	}
}

func ptr(s string) *string { return &s }

func TestChangesDeleted(t *testing.T) {
	f := twoEdits(t, map[string]string{"a.txt": "one\ntwo\n"})
	os.Remove(filepath.Join(f.ws, "a.txt"))
	got, err := f.s.Files().Changes(1)
	if err != nil || len(got) != 2 {
		t.Fatalf("Changes = %+v, %v", got, err)
	}
	want := FileChange{Path: "a.txt", Turn: 1, State: ChangeDeleted, Removed: 2, UserChanged: true,
		Diff: "--- a/a.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-one\n-two\n"}
	if d := cmp.Diff(want, got[0]); d != "" {
		t.Errorf("deleted file (-want +got):\n%s", d)
	}
}
