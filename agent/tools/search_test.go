package tools

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSearch(t *testing.T) {
	out := workspace(t, map[string]string{"secret.go": "func Foo() {}\n"})
	long := strings.Repeat("a", 300) + "NEEDLE" + strings.Repeat("b", 300)
	ws := workspace(t, map[string]string{
		"a.go":              "package a\n\nfunc Foo() {}\n",
		"b/c.go":            "func Bar() {}\r\nfunc Foo2() {}\r\n",
		"b/d.txt":           "Foo in text\n",
		"node_modules/x.js": "Foo\n",
		".git/HEAD":         "Foo\n",
		"bin.dat":           "Foo\x00",
		"long.txt":          "x\n" + long + "\n",
		"unsaved.go":        "package unsaved\n",
		"é.txt":             "Foo é\n",
	})
	symlink(t, out, filepath.Join(ws, "outdir"))
	symlink(t, "a.go", filepath.Join(ws, "link.go"))
	env := &Env{Workspace: ws, Overlay: func(rel string) (string, bool) {
		if rel == "unsaved.go" {
			return "package unsaved\n\nfunc FooUnsaved() {}\n", true
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
		{"everywhere", map[string]any{"pattern": `func Foo`}, ok(
			"a.go:3: func Foo() {}\nb/c.go:2: func Foo2() {}\nunsaved.go:3: func FooUnsaved() {}", ".")},
		{"under a path", map[string]any{"pattern": "Foo", "path": "b"}, ok(
			"b/c.go:2: func Foo2() {}\nb/d.txt:1: Foo in text", "b")},
		{"one file", map[string]any{"pattern": "Foo", "path": "b/d.txt"}, ok("b/d.txt:1: Foo in text", "b/d.txt")},
		{"a skipped dir when asked", map[string]any{"pattern": "Foo", "path": "node_modules"}, ok("node_modules/x.js:1: Foo", "node_modules")},
		{"multi-byte", map[string]any{"pattern": "Foo é$"}, ok("é.txt:1: Foo é", ".")},
		{"case-insensitive", map[string]any{"pattern": "(?i)^FUNC BAR"}, ok("b/c.go:1: func Bar() {}", ".")},
		{"long line cut around the match", map[string]any{"pattern": "NEEDLE"}, ok(
			"long.txt:2: …"+long[250:450]+"…", ".")},
		{"no match", map[string]any{"pattern": "nothing here", "path": "b"}, ok(`no matches for "nothing here" in b`, "b")},
		{"invalid regexp", map[string]any{"pattern": "func (Foo"}, bad("invalid pattern: error parsing regexp: missing closing ): `func (Foo`")},
		{"empty pattern", map[string]any{"pattern": ""}, bad("pattern is empty")},
		{"dot dot", map[string]any{"pattern": "x", "path": "../"}, bad("path outside the workspace: ../")},
		{"absolute outside", map[string]any{"pattern": "Foo", "path": out}, bad("path outside the workspace: " + out)},
		{"symlinked dir out", map[string]any{"pattern": "Foo", "path": "outdir"}, bad("path outside the workspace: outdir")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := outcomeOf(Run(t.Context(), env, Call{Name: "search", Args: tt.args}))
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("(-got +want):\n%s", diff)
			}
		})
	}
}

// TestSearchBounded checks the match limit, and that a result too large for the model is saved
// whole where search itself can read it back.
func TestSearchBounded(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= maxMatches+50; i++ {
		fmt.Fprintf(&b, "match %d\n", i)
	}
	ws := workspace(t, map[string]string{"many.txt": b.String()})
	spill := filepath.Join(t.TempDir(), "tool-outputs")
	env := &Env{Workspace: ws, SpillDir: spill, MaxOutputChars: 200, LargeOutputBytes: 1000}

	r := Run(t.Context(), env, Call{ID: "s1", Name: "search", Args: map[string]any{"pattern": "match"}})
	if r.SavedPath == "" || filepath.Dir(r.SavedPath) != spill {
		t.Fatalf("saved to %q, want a file in %s", r.SavedPath, spill)
	}
	saved := readText(t, r.SavedPath)
	if got, want := strings.Count(saved, "\n")+1, maxMatches+1; got != want {
		t.Errorf("saved %d lines, want %d", got, want)
	}
	if !strings.HasSuffix(saved, "many.txt:200: match 200\n[… 50 more matching lines not shown; narrow pattern or path]") {
		t.Errorf("saved output ends with %q", saved[len(saved)-100:])
	}
	firstLine, _, _ := strings.Cut(r.Output, "\n")
	want := fmt.Sprintf("[output of %s bytes saved whole to %s; read_file or search it]", commas(int64(len(saved))), r.SavedPath)
	if firstLine != want {
		t.Errorf("first line %q, want %q", firstLine, want)
	}
	if r.Omitted == 0 || !strings.HasSuffix(r.Output, "narrow pattern or path]") {
		t.Errorf("preview not truncated to its head and tail: %q", r.Output)
	}

	// The saved output can be searched and read by the path the model was given.
	savedPath := r.SavedPath
	r = Run(t.Context(), env, Call{Name: "search", Args: map[string]any{"pattern": "match 123$", "path": savedPath}})
	if diff := cmp.Diff(outcomeOf(r), outcome{Output: savedPath + ":123: many.txt:123: match 123"}); diff != "" {
		t.Errorf("search in the saved output (-got +want):\n%s", diff)
	}
	r = Run(t.Context(), env, Call{Name: "read_file", Args: map[string]any{"path": savedPath, "offset": 7, "limit": 1}})
	want = fmt.Sprintf("many.txt:7: match 7\n[lines 7-7 of %d]", maxMatches+1)
	if diff := cmp.Diff(outcomeOf(r), outcome{Output: want, Path: savedPath}); diff != "" {
		t.Errorf("read_file of the saved output (-got +want):\n%s", diff)
	}
	// But not written.
	r = Run(t.Context(), env, Call{Name: "write_file", Args: map[string]any{"path": savedPath, "content": "x"}})
	if diff := cmp.Diff(outcomeOf(r), outcome{Output: "path outside the workspace: " + savedPath, IsError: true}); diff != "" {
		t.Errorf("write_file to the saved output (-got +want):\n%s", diff)
	}
}
