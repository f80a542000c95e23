package tools

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// change is one BeforeChange call.
type change struct {
	Rel     string
	Prev    string
	Existed bool
}

// recorder keeps the BeforeChange calls of a test.
type recorder struct{ changes []change }

func (r *recorder) before(rel string, prev []byte, existed bool) {
	r.changes = append(r.changes, change{rel, string(prev), existed})
}

func TestEditFile(t *testing.T) {
	const src = "package a\n\nfunc A() int { return 1 }\n\nfunc B() int { return 1 }\n"
	tests := []struct {
		name     string
		args     map[string]any
		guard    error
		want     outcome
		wantFile string // a.go afterwards
		changes  []change
	}{
		{
			name:     "unique match",
			args:     map[string]any{"path": "a.go", "old": "func A() int { return 1 }", "new": "func A() int { return 2 }"},
			want:     outcome{Output: "edited a.go at line 3", Path: "a.go", Changed: []string{"a.go"}},
			wantFile: "package a\n\nfunc A() int { return 2 }\n\nfunc B() int { return 1 }\n",
			changes:  []change{{"a.go", src, true}},
		},
		{
			name:     "deletion",
			args:     map[string]any{"path": "a.go", "old": "\nfunc B() int { return 1 }\n", "new": ""},
			want:     outcome{Output: "edited a.go at line 4", Path: "a.go", Changed: []string{"a.go"}},
			wantFile: "package a\n\nfunc A() int { return 1 }\n",
			changes:  []change{{"a.go", src, true}},
		},
		{
			name:     "not found",
			args:     map[string]any{"path": "a.go", "old": "func C()", "new": "x"},
			want:     outcome{Output: "old not found in a.go", IsError: true},
			wantFile: src,
		},
		{
			name:     "ambiguous",
			args:     map[string]any{"path": "a.go", "old": "{ return 1 }", "new": "{ return 3 }"},
			want:     outcome{Output: "old found 2 times in a.go; add surrounding lines to make it unique", IsError: true},
			wantFile: src,
		},
		{
			name:     "old empty",
			args:     map[string]any{"path": "a.go", "old": "", "new": "x"},
			want:     outcome{Output: "old is empty; to create or overwrite a file use write_file", IsError: true},
			wantFile: src,
		},
		{
			name:     "old equals new",
			args:     map[string]any{"path": "a.go", "old": "package a", "new": "package a"},
			want:     outcome{Output: "old and new are the same; nothing to change", IsError: true},
			wantFile: src,
		},
		{
			name:     "guard refuses",
			args:     map[string]any{"path": "a.go", "old": "package a", "new": "package b"},
			guard:    errors.New("a.go has unsaved changes in the editor; ask the user to save or discard them"),
			want:     outcome{Output: "a.go has unsaved changes in the editor; ask the user to save or discard them", IsError: true, Path: "a.go", Refused: true},
			wantFile: src,
		},
		{
			name:     "missing file",
			args:     map[string]any{"path": "nope.go", "old": "a", "new": "b"},
			want:     outcome{Output: "file not found: nope.go", IsError: true},
			wantFile: src,
		},
		{
			name:     "a directory",
			args:     map[string]any{"path": "d", "old": "a", "new": "b"},
			want:     outcome{Output: "d is a directory", IsError: true},
			wantFile: src,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := workspace(t, map[string]string{"a.go": src, "d/x": ""})
			var rec recorder
			env := &Env{Workspace: ws, BeforeChange: rec.before}
			if tt.guard != nil {
				env.Guard = func(string) error { return tt.guard }
			}
			got := outcomeOf(Run(t.Context(), env, Call{Name: "edit_file", Args: tt.args}))
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("result (-got +want):\n%s", diff)
			}
			if diff := cmp.Diff(readText(t, filepath.Join(ws, "a.go")), tt.wantFile); diff != "" {
				t.Errorf("a.go (-got +want):\n%s", diff)
			}
			if diff := cmp.Diff(rec.changes, tt.changes); diff != "" {
				t.Errorf("BeforeChange calls (-got +want):\n%s", diff)
			}
			assertNoTempFiles(t, ws)
		})
	}
}

func TestEditFileKeepsModeAndLinks(t *testing.T) {
	ws := workspace(t, map[string]string{"run.sh": "#!/bin/sh\necho old\n", "crlf.txt": "one\r\ntwo\r\nthree\r\n"})
	if err := os.Chmod(filepath.Join(ws, "run.sh"), 0o751); err != nil {
		t.Fatal(err)
	}
	symlink(t, "run.sh", filepath.Join(ws, "link.sh"))
	env := &Env{Workspace: ws}

	r := Run(t.Context(), env, Call{Name: "edit_file", Args: map[string]any{"path": "link.sh", "old": "echo old", "new": "echo new"}})
	if diff := cmp.Diff(outcomeOf(r), outcome{Output: "edited link.sh at line 2", Path: "run.sh", Changed: []string{"run.sh"}}); diff != "" {
		t.Errorf("edit through a link (-got +want):\n%s", diff)
	}
	fi, err := os.Stat(filepath.Join(ws, "run.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o751 {
		t.Errorf("mode %v, want 0751", fi.Mode().Perm())
	}
	if li, err := os.Lstat(filepath.Join(ws, "link.sh")); err != nil || li.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("link.sh is no longer a symlink (%v)", err)
	}
	if got := readText(t, filepath.Join(ws, "run.sh")); got != "#!/bin/sh\necho new\n" {
		t.Errorf("run.sh = %q", got)
	}

	// A model writes \n; the file uses \r\n.
	r = Run(t.Context(), env, Call{Name: "edit_file", Args: map[string]any{"path": "crlf.txt", "old": "one\ntwo", "new": "1\n2"}})
	if r.IsError {
		t.Fatalf("crlf edit: %s", r.Output)
	}
	if got := readText(t, filepath.Join(ws, "crlf.txt")); got != "1\r\n2\r\nthree\r\n" {
		t.Errorf("crlf.txt = %q", got)
	}
	assertNoTempFiles(t, ws)
}

// TestWritesConfined checks that neither edit_file nor write_file writes outside the workspace,
// whatever the path: .., absolute, a symlink to a file out, a symlinked directory out.
func TestWritesConfined(t *testing.T) {
	out := workspace(t, map[string]string{"secret.txt": "secret\n"})
	ws := workspace(t, nil)
	symlink(t, filepath.Join(out, "secret.txt"), filepath.Join(ws, "out.txt"))
	symlink(t, "../"+filepath.Base(out)+"/secret.txt", filepath.Join(ws, "rel-out.txt"))
	symlink(t, out, filepath.Join(ws, "outdir"))
	paths := []string{
		"../secret.txt",
		filepath.Join(out, "secret.txt"),
		filepath.Join(out, "new.txt"),
		"out.txt",
		"outdir/secret.txt",
		"outdir/new.txt",
		"outdir/sub/new.txt",
	}
	if filepath.Dir(out) == filepath.Dir(ws) {
		paths = append(paths, "rel-out.txt")
	}
	for _, p := range paths {
		for _, call := range []Call{
			{Name: "write_file", Args: map[string]any{"path": p, "content": "pwned\n"}},
			{Name: "edit_file", Args: map[string]any{"path": p, "old": "secret", "new": "pwned"}},
		} {
			t.Run(call.Name+" "+p, func(t *testing.T) {
				var rec recorder
				env := &Env{Workspace: ws, BeforeChange: rec.before}
				got := outcomeOf(Run(t.Context(), env, call))
				if diff := cmp.Diff(got, outcome{Output: "path outside the workspace: " + p, IsError: true}); diff != "" {
					t.Errorf("(-got +want):\n%s", diff)
				}
				if len(rec.changes) > 0 {
					t.Errorf("BeforeChange called: %v", rec.changes)
				}
			})
		}
	}
	if got := readText(t, filepath.Join(out, "secret.txt")); got != "secret\n" {
		t.Errorf("secret.txt = %q", got)
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != 1 {
		t.Errorf("files appeared outside: %v", entries)
	}
}

// assertNoTempFiles fails when an atomic write left its temporary file behind.
func assertNoTempFiles(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && filepath.Ext(p) == ".tmp" {
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})
}
