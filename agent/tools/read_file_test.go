//go:build unix

package tools

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-dev/reprise/contextwin"
)

func TestReadFile(t *testing.T) {
	out := workspace(t, map[string]string{"secret.txt": "secret\n", "dir/s.txt": "secret too\n"})
	ws := workspace(t, map[string]string{
		"a.txt":         "one\ntwo\nthree\n",
		"noeol.txt":     "x\ny",
		"empty.txt":     "",
		"dir/b.go":      "package b\n",
		"bin.dat":       "ab\x00cd",
		"unsaved.go":    "on disk\n",
		"with space.md": "spaced\n",
	})
	symlink(t, filepath.Join(out, "secret.txt"), filepath.Join(ws, "out.txt"))
	symlink(t, out, filepath.Join(ws, "outdir"))
	symlink(t, "dir/b.go", filepath.Join(ws, "in.go"))
	symlink(t, filepath.Join(ws, "dir"), filepath.Join(ws, "absdir")) // absolute, but inside
	if err := syscall.Mkfifo(filepath.Join(ws, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := &Env{Workspace: ws, Overlay: func(rel string) (string, bool) {
		if rel == "unsaved.go" {
			return "in the editor\n", true
		}
		return "", false
	}}
	ok := func(output, path string) outcome { return outcome{Output: output, Path: path} }
	bad := func(output string) outcome { return outcome{Output: output, IsError: true} }
	tests := []struct {
		name string
		args map[string]any
		want outcome
	}{
		{"whole file", map[string]any{"path": "a.txt"}, ok("one\ntwo\nthree\n", "a.txt")},
		{"from a line", map[string]any{"path": "a.txt", "offset": 2}, ok("two\nthree\n[lines 2-3 of 3]", "a.txt")},
		{"a range", map[string]any{"path": "a.txt", "offset": 2.0, "limit": 1.0}, ok("two\n[lines 2-2 of 3]", "a.txt")},
		{"first lines", map[string]any{"path": "a.txt", "limit": 2}, ok("one\ntwo\n[lines 1-2 of 3]", "a.txt")},
		{"limit past the end", map[string]any{"path": "a.txt", "limit": 50}, ok("one\ntwo\nthree\n", "a.txt")},
		{"last line without newline", map[string]any{"path": "noeol.txt", "offset": 2}, ok("y\n[lines 2-2 of 2]", "noeol.txt")},
		{"no final newline", map[string]any{"path": "noeol.txt"}, ok("x\ny", "noeol.txt")},
		{"offset past the end", map[string]any{"path": "a.txt", "offset": 9}, bad("offset 9 is past the end of a.txt (3 lines)")},
		{"empty", map[string]any{"path": "empty.txt"}, ok("[empty.txt is empty]", "empty.txt")},
		{"nested", map[string]any{"path": "dir/b.go"}, ok("package b\n", "dir/b.go")},
		{"dot segments inside", map[string]any{"path": "./dir/../a.txt", "limit": 1}, ok("one\n[lines 1-1 of 3]", "a.txt")},
		{"space in name", map[string]any{"path": "with space.md"}, ok("spaced\n", "with space.md")},
		{"absolute inside", map[string]any{"path": filepath.Join(ws, "dir/b.go")}, ok("package b\n", "dir/b.go")},
		{"symlink inside", map[string]any{"path": "in.go"}, ok("package b\n", "dir/b.go")},
		{"absolute symlink inside", map[string]any{"path": "absdir/b.go"}, ok("package b\n", "dir/b.go")},
		{"overlay first", map[string]any{"path": "unsaved.go"}, ok("in the editor\n", "unsaved.go")},
		{"directory", map[string]any{"path": "dir"}, bad("dir is a directory; use list_files")},
		{"fifo", map[string]any{"path": "fifo"}, bad("fifo is not a regular file")},
		{"binary", map[string]any{"path": "bin.dat"}, bad("bin.dat is a binary file (5 bytes); not shown")},
		{"missing", map[string]any{"path": "nope.txt"}, bad("file not found: nope.txt")},
		{"file as a directory", map[string]any{"path": "a.txt/x"}, bad("not a directory: a parent of a.txt/x is a file")},
		{"dot dot", map[string]any{"path": "../x"}, bad("path outside the workspace: ../x")},
		{"dot dot inside", map[string]any{"path": "dir/../../x"}, bad("path outside the workspace: dir/../../x")},
		{"absolute outside", map[string]any{"path": "/etc/passwd"}, bad("path outside the workspace: /etc/passwd")},
		{"absolute outside workspace dir", map[string]any{"path": filepath.Join(out, "secret.txt")}, bad("path outside the workspace: " + filepath.Join(out, "secret.txt"))},
		{"symlink out", map[string]any{"path": "out.txt"}, bad("path outside the workspace: out.txt")},
		{"symlinked dir out", map[string]any{"path": "outdir/dir/s.txt"}, bad("path outside the workspace: outdir/dir/s.txt")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := outcomeOf(Run(t.Context(), env, Call{Name: "read_file", Args: tt.args}))
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("(-got +want):\n%s", diff)
			}
		})
	}
}

// TestReadFileLong checks that a long file comes back like any long output — its head and tail
// — with the way to page, and that paging gives exact lines.
func TestReadFileLong(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 2000; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	whole := b.String()
	ws := workspace(t, map[string]string{"long.txt": whole})
	env := &Env{Workspace: ws, MaxOutputChars: 100, SpillDir: filepath.Join(t.TempDir(), "spill")}

	r := Run(t.Context(), env, Call{Name: "read_file", Args: map[string]any{"path": "long.txt"}})
	preview, omitted := contextwin.Truncate(whole, 100)
	want := Result{
		Output:     preview + "[2000 lines; the middle was cut, read it with offset and limit]",
		Path:       "long.txt",
		TotalChars: len(whole),
		Omitted:    omitted,
	}
	if diff := cmp.Diff(r, want); diff != "" {
		t.Errorf("whole file (-got +want):\n%s", diff)
	}

	r = Run(t.Context(), env, Call{Name: "read_file", Args: map[string]any{"path": "long.txt", "offset": 1000, "limit": 2}})
	if diff := cmp.Diff(r.Output, "line 1000\nline 1001\n[lines 1000-1001 of 2000]"); diff != "" {
		t.Errorf("page (-got +want):\n%s", diff)
	}
	r = Run(t.Context(), env, Call{Name: "read_file", Args: map[string]any{"path": "long.txt", "offset": 100, "limit": 500}})
	if !strings.HasSuffix(r.Output, "\n[lines 100-599 of 2000; the middle was cut, use a smaller limit]") || r.Omitted == 0 {
		t.Errorf("large page: %q", r.Output)
	}
}
