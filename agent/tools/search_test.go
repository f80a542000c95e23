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
	if !strings.HasSuffix(saved, "many.txt:200: match 200\n[… 50 more matching lines not shown, in 1 file: many.txt (50); narrow pattern or path]") {
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

// TestSearchIgnoreRules is the case of a repository whose build output drowns the one real match:
// the rules of .gitignore (and .repriseignore) keep it out, hidden files too, unless asked.
func TestSearchIgnoreRules(t *testing.T) {
	files := map[string]string{
		".gitignore":         "dist/\n*.log\n!keep.log\n",
		"src/.repriseignore": "fixtures/\n",
		"src/app.go":         "package src\n\n// parseConfig reads the file.\nfunc parseConfig() {}\n",
		"src/fixtures/f.go":  "func parseConfig() {} // a fixture\n",
		"debug.log":          "parseConfig failed\n",
		"keep.log":           "parseConfig kept\n",
		".github/ci.yml":     "run: parseConfig\n",
	}
	for i := range 300 {
		files[fmt.Sprintf("dist/bundle%03d.js", i)] = "function parseConfig(){return 1}\n"
	}
	env := &Env{Workspace: workspace(t, files)}
	search := func(args map[string]any) string {
		t.Helper()
		r := Run(t.Context(), env, Call{Name: "search", Args: args})
		if r.IsError {
			t.Fatalf("search %v: %s", args, r.Output)
		}
		return r.Output
	}
	if got, want := search(map[string]any{"pattern": "parseConfig"}), "keep.log:1: parseConfig kept\nsrc/app.go:3: // parseConfig reads the file.\nsrc/app.go:4: func parseConfig() {}"; got != want {
		t.Errorf("with the rules:\n%s\nwant:\n%s", got, want)
	}
	all := search(map[string]any{"pattern": "parseConfig", "include_ignored": true})
	for _, want := range []string{".github/ci.yml:1:", "debug.log:1:", "dist/bundle000.js:1:",
		"[… 106 more matching lines not shown, in 105 files: dist/bundle198.js (1), "} {
		if !strings.Contains(all, want) {
			t.Errorf("include_ignored: no %q in\n%s", want, all)
		}
	}
	if !strings.Contains(all, " and 85 more files; narrow pattern or path]") {
		t.Errorf("the files past the cap are not counted: %s", all[len(all)-200:])
	}
	if got := search(map[string]any{"pattern": "parseConfig", "path": "src", "include_ignored": "true"}); !strings.HasSuffix(got, "\nsrc/fixtures/f.go:1: func parseConfig() {} // a fixture") {
		t.Errorf(".repriseignore with include_ignored: %q", got)
	}
	// A path given explicitly is searched even when ignored or hidden, as ripgrep does.
	if got := search(map[string]any{"pattern": "parseConfig", "path": ".github"}); got != ".github/ci.yml:1: run: parseConfig" {
		t.Errorf("explicit hidden path: %q", got)
	}
	if got := search(map[string]any{"pattern": "nowhere"}); got != `no matches for "nowhere" in . (6 entries ignored or hidden not searched; include_ignored searches them)` {
		t.Errorf("no match: %q", got)
	}
	r := Run(t.Context(), env, Call{Name: "search", Args: map[string]any{"pattern": "x", "include_ignored": "yes"}})
	if !r.IsError || r.Output != `argument "include_ignored" must be true or false, got a string` {
		t.Errorf("bad flag: %+v", r)
	}
}

// TestSearchLargeFiles reads files in chunks: matches across chunk boundaries keep their line
// numbers, and a line longer than maxLineBytes is matched on its first part only.
func TestSearchLargeFiles(t *testing.T) {
	var b strings.Builder
	var want []string
	for i := 1; b.Len() < 3*chunkSize; i++ {
		line := fmt.Sprintf("line %d %s", i, strings.Repeat("x", i%97))
		if i%1000 == 7 {
			line += " NEEDLE"
			want = append(want, fmt.Sprintf("big.txt:%d: %s", i, line))
		}
		b.WriteString(line + "\n")
	}
	n := strings.Count(b.String(), "\n")
	long := strings.Repeat("y", maxLineBytes+chunkSize) + "NEEDLE"
	b.WriteString("NEEDLE " + strings.Repeat("z", maxLineBytes+3*chunkSize) + "\n") // matched at its start
	b.WriteString(long + "\n")                                                      // its match is past the first MiB
	b.WriteString("after NEEDLE\n")
	want = append(want, fmt.Sprintf("big.txt:%d: NEEDLE %s…", n+1, strings.Repeat("z", maxLineChars-7)), fmt.Sprintf("big.txt:%d: after NEEDLE", n+3))
	env := &Env{Workspace: workspace(t, map[string]string{"big.txt": b.String()}), MaxOutputChars: 1 << 20}
	r := Run(t.Context(), env, Call{Name: "search", Args: map[string]any{"pattern": "NEEDLE"}})
	if diff := cmp.Diff(strings.Split(r.Output, "\n"), want); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
}
