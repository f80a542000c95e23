package tools

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWriteFile(t *testing.T) {
	tests := []struct {
		name    string
		args    map[string]any
		guard   error
		want    outcome
		after   map[string]string // files and their content afterwards
		changes []change
	}{
		{
			name:    "new file with parents",
			args:    map[string]any{"path": "x/y/new.go", "content": "package y\n"},
			want:    outcome{Output: "created x/y/new.go (10 bytes)", Path: "x/y/new.go", Changed: []string{"x/y/new.go"}},
			after:   map[string]string{"x/y/new.go": "package y\n", "a.txt": "old\n"},
			changes: []change{{"x/y/new.go", "", false}},
		},
		{
			name:    "overwrite",
			args:    map[string]any{"path": "a.txt", "content": "new\n"},
			want:    outcome{Output: "wrote a.txt (4 bytes)", Path: "a.txt", Changed: []string{"a.txt"}},
			after:   map[string]string{"a.txt": "new\n"},
			changes: []change{{"a.txt", "old\n", true}},
		},
		{
			name:    "empty content",
			args:    map[string]any{"path": "empty.txt", "content": ""},
			want:    outcome{Output: "created empty.txt (0 bytes)", Path: "empty.txt", Changed: []string{"empty.txt"}},
			after:   map[string]string{"empty.txt": ""},
			changes: []change{{"empty.txt", "", false}},
		},
		{
			name:  "same content",
			args:  map[string]any{"path": "a.txt", "content": "old\n"},
			want:  outcome{Output: "a.txt unchanged: it already has this content", Path: "a.txt"},
			after: map[string]string{"a.txt": "old\n"},
		},
		{
			name:  "guard refuses",
			args:  map[string]any{"path": "a.txt", "content": "new\n"},
			guard: errors.New("the user has unsaved changes in a.txt"),
			want:  outcome{Output: "the user has unsaved changes in a.txt", IsError: true, Path: "a.txt", Refused: true},
			after: map[string]string{"a.txt": "old\n"},
		},
		{
			name: "a directory",
			args: map[string]any{"path": "d", "content": "x"},
			want: outcome{Output: "d is a directory", IsError: true},
		},
		{
			name: "the workspace itself",
			args: map[string]any{"path": ".", "content": "x"},
			want: outcome{Output: ". is a directory", IsError: true},
		},
		{
			name: "under a file",
			args: map[string]any{"path": "a.txt/b", "content": "x"},
			want: outcome{Output: "not a directory: a parent of a.txt/b is a file", IsError: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := workspace(t, map[string]string{"a.txt": "old\n", "d/x": ""})
			var rec recorder
			env := &Env{Workspace: ws, BeforeChange: rec.before}
			if tt.guard != nil {
				env.Guard = func(string) error { return tt.guard }
			}
			got := outcomeOf(Run(t.Context(), env, Call{Name: "write_file", Args: tt.args}))
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("result (-got +want):\n%s", diff)
			}
			for name, want := range tt.after {
				if diff := cmp.Diff(readText(t, filepath.Join(ws, name)), want); diff != "" {
					t.Errorf("%s (-got +want):\n%s", name, diff)
				}
			}
			if diff := cmp.Diff(rec.changes, tt.changes); diff != "" {
				t.Errorf("BeforeChange calls (-got +want):\n%s", diff)
			}
			assertNoTempFiles(t, ws)
		})
	}
}

func TestWriteFileModes(t *testing.T) {
	ws := workspace(t, map[string]string{"tool.sh": "#!/bin/sh\n"})
	if err := os.Chmod(filepath.Join(ws, "tool.sh"), 0o700); err != nil {
		t.Fatal(err)
	}
	env := &Env{Workspace: ws}
	for _, c := range []struct {
		path string
		want os.FileMode
	}{{"tool.sh", 0o700}, {"fresh.txt", newFileMode}} {
		if r := Run(t.Context(), env, Call{Name: "write_file", Args: map[string]any{"path": c.path, "content": "x\n"}}); r.IsError {
			t.Fatalf("%s: %s", c.path, r.Output)
		}
		fi, err := os.Stat(filepath.Join(ws, c.path))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != c.want {
			t.Errorf("%s: mode %v, want %v", c.path, fi.Mode().Perm(), c.want)
		}
	}
}
