package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestListFiles(t *testing.T) {
	out := workspace(t, map[string]string{"secret.txt": "s"})
	ws := workspace(t, map[string]string{
		"a.go":                  "",
		"a.txt":                 "",
		"b/c.go":                "",
		"b/d/e.md":              "",
		"vendor/v.go":           "",
		".git/config":           "",
		"node_modules/m/x.js":   "",
		"pkg/__pycache__/x.pyc": "",
	})
	if err := os.Mkdir(filepath.Join(ws, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	symlink(t, out, filepath.Join(ws, "outdir"))
	env := &Env{Workspace: ws}
	ok := func(output, path string) outcome { return outcome{Output: output, Path: path} }
	bad := func(output string) outcome { return outcome{Output: output, IsError: true} }
	tests := []struct {
		name string
		args map[string]any
		want outcome
	}{
		{"everything", nil, ok(strings.Join([]string{
			".git/", "a.go", "a.txt", "b/", "b/c.go", "b/d/", "b/d/e.md", "empty/",
			"node_modules/", "outdir", "pkg/", "pkg/__pycache__/", "vendor/", "vendor/v.go",
		}, "\n"), ".")},
		{"a directory", map[string]any{"path": "b"}, ok("b/c.go\nb/d/\nb/d/e.md", "b")},
		{"a trailing slash", map[string]any{"path": "b/d/"}, ok("b/d/e.md", "b/d")},
		{"inside a skipped dir when asked", map[string]any{"path": "node_modules"}, ok("node_modules/m/\nnode_modules/m/x.js", "node_modules")},
		{"pattern on the name", map[string]any{"pattern": "*.go"}, ok("a.go\nb/c.go\nvendor/v.go", ".")},
		{"pattern on the path", map[string]any{"pattern": "b/*"}, ok("b/c.go\nb/d/", ".")},
		{"no match", map[string]any{"pattern": "*.rs"}, ok(`no entries under . match "*.rs"`, ".")},
		{"empty dir", map[string]any{"path": "empty"}, ok("empty is empty", "empty")},
		{"invalid pattern", map[string]any{"pattern": "[a"}, bad(`invalid pattern "[a": syntax error in pattern`)},
		{"a file", map[string]any{"path": "a.go"}, bad("a.go is a file; use read_file")},
		{"missing", map[string]any{"path": "zz"}, bad("file not found: zz")},
		{"dot dot", map[string]any{"path": ".."}, bad("path outside the workspace: ..")},
		{"absolute outside", map[string]any{"path": out}, bad("path outside the workspace: " + out)},
		{"symlinked dir out", map[string]any{"path": "outdir"}, bad("path outside the workspace: outdir")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := outcomeOf(Run(t.Context(), env, Call{Name: "list_files", Args: tt.args}))
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("(-got +want):\n%s", diff)
			}
		})
	}
}

func TestListFilesBounded(t *testing.T) {
	files := map[string]string{}
	for i := range maxListed + 5 {
		files[fmt.Sprintf("f%04d.txt", i)] = ""
	}
	ws := workspace(t, files)
	env := &Env{Workspace: ws, MaxOutputChars: 1 << 20}
	r := Run(t.Context(), env, Call{Name: "list_files"})
	lines := strings.Split(r.Output, "\n")
	if got, want := len(lines), maxListed+1; got != want {
		t.Fatalf("%d lines, want %d", got, want)
	}
	if diff := cmp.Diff(lines[len(lines)-2:], []string{"f0999.txt", "[… 5 more entries not listed; narrow path or pattern]"}); diff != "" {
		t.Errorf("end (-got +want):\n%s", diff)
	}
}
