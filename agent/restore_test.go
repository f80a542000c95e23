package agent

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

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
	if diff := cmp.Diff([]string{"a.txt"}, s.files.State().FilesModified); diff != "" {
		t.Errorf("files modified after restore (-want +got):\n%s", diff)
	}
	if _, err := s.RestoreFiles(1); err != nil || read("a.txt") != "one\n" {
		t.Errorf("restore to before turn 1: %v, a=%q", err, read("a.txt"))
	}
}
