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
			"a.go", "a.txt", "b/", "b/c.go", "b/d/", "b/d/e.md", "empty/",
			"outdir", "pkg/", "vendor/", "vendor/v.go", "[2 entries ignored or hidden not listed; include_ignored lists them]",
		}, "\n"), ".")},
		{"everything but .git", map[string]any{"include_ignored": true}, ok(strings.Join([]string{
			"a.go", "a.txt", "b/", "b/c.go", "b/d/", "b/d/e.md", "empty/", "node_modules/", "node_modules/m/",
			"node_modules/m/x.js", "outdir", "pkg/", "pkg/__pycache__/", "pkg/__pycache__/x.pyc", "vendor/", "vendor/v.go",
		}, "\n"), ".")},
		{"a directory", map[string]any{"path": "b"}, ok("b/c.go\nb/d/\nb/d/e.md", "b")},
		{"a trailing slash", map[string]any{"path": "b/d/"}, ok("b/d/e.md", "b/d")},
		{"inside a skipped dir when asked", map[string]any{"path": "node_modules"}, ok("node_modules/m/\nnode_modules/m/x.js", "node_modules")},
		{"pattern on the name", map[string]any{"pattern": "*.go"}, ok("a.go\nb/c.go\nvendor/v.go\n[2 entries ignored or hidden not listed; include_ignored lists them]", ".")},
		{"pattern on the path", map[string]any{"pattern": "b/*"}, ok("b/c.go\nb/d/\n[2 entries ignored or hidden not listed; include_ignored lists them]", ".")},
		{"no match", map[string]any{"pattern": "*.rs"}, ok("no entries under . match \"*.rs\"\n[2 entries ignored or hidden not listed; include_ignored lists them]", ".")},
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

// TestListFilesSummary: a tree whose listing would not fit in one tool output is summarized as
// its directories, as deep as fits, with the files below each; a smaller limit gives a shallower
// summary, and the ignored part is not counted.
func TestListFilesSummary(t *testing.T) {
	files := map[string]string{".gitignore": "dist/\n", "README.md": "", "go.mod": ""}
	for i := range 300 {
		files[fmt.Sprintf("src/pkg%d/sub%d/f%03d.go", i%3, i%2, i)] = ""
		files[fmt.Sprintf("dist/out%03d.js", i)] = ""
	}
	files["docs/a.md"] = ""
	ws := workspace(t, files)
	list := func(limit int, args map[string]any) string {
		r := Run(t.Context(), &Env{Workspace: ws, MaxOutputChars: limit}, Call{Name: "list_files", Args: args})
		if r.IsError {
			t.Fatal(r.Output)
		}
		return r.Output
	}
	header := "[303 files in 11 directories: too many to list. The directories, with the files below each; list_files on one, or a pattern, narrows it.]"
	want := strings.Join([]string{header,
		"docs/ (1 file)", "src/ (300 files)",
		"src/pkg0/ (100 files)", "src/pkg0/sub0/ (50 files)", "src/pkg0/sub1/ (50 files)",
		"src/pkg1/ (100 files)", "src/pkg1/sub0/ (50 files)", "src/pkg1/sub1/ (50 files)",
		"src/pkg2/ (100 files)", "src/pkg2/sub0/ (50 files)", "src/pkg2/sub1/ (50 files)",
		"README.md", "go.mod",
		"[2 entries ignored or hidden not listed; include_ignored lists them]"}, "\n")
	if got := list(4000, nil); got != want {
		t.Errorf("summary:\n%s\nwant:\n%s", got, want)
	}
	want = strings.Join([]string{header, "docs/ (1 file)", "src/ (300 files)", "src/pkg0/ (100 files)", "src/pkg1/ (100 files)",
		"src/pkg2/ (100 files)", "README.md", "go.mod", "[2 entries ignored or hidden not listed; include_ignored lists them]"}, "\n")
	if got := list(500, nil); got != want {
		t.Errorf("a smaller limit, a shallower summary:\n%s\nwant:\n%s", got, want)
	}
	// Below a directory, and with a pattern, the counts are of what matches.
	if got := list(300, map[string]any{"path": "src/pkg1", "pattern": "f1*"}); got != strings.Join([]string{
		"[34 files in 2 directories: too many to list. The directories, with the files below each; list_files on one, or a pattern, narrows it.]",
		"src/pkg1/sub0/ (17 files)", "src/pkg1/sub1/ (17 files)"}, "\n") {
		t.Errorf("under a path, with a pattern:\n%s", got)
	}
	// A listing that fits is a listing.
	if got := list(4000, map[string]any{"path": "docs"}); got != "docs/a.md" {
		t.Errorf("small listing: %q", got)
	}
}
