package ignore

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

// syntaxCase is one rule of the gitignore syntax: rule files, and paths (a trailing "/" marks a
// directory) with whether they are ignored.
type syntaxCase struct {
	name  string
	fold  bool              // case-insensitive
	rules map[string]string // rule files by path
	want  map[string]bool
	noGit bool // not git's: .repriseignore
}

var syntaxCases = []syntaxCase{
	{name: "comments and blank lines", rules: map[string]string{".gitignore": "#a\n\n   \nb\n"},
		want: map[string]bool{"#a": false, "b": true, "   ": false}},
	{name: "escaped hash", rules: map[string]string{".gitignore": "\\#a"},
		want: map[string]bool{"#a": true, "a": false}},
	{name: "trailing spaces trimmed", rules: map[string]string{".gitignore": "a  \n"},
		want: map[string]bool{"a": true, "a ": false}},
	{name: "escaped trailing space kept", rules: map[string]string{".gitignore": "a\\ \n"},
		want: map[string]bool{"a ": true, "a": false}},
	{name: "spaces before an escaped one kept", rules: map[string]string{".gitignore": "a \\ \n"},
		want: map[string]bool{"a  ": true, "a ": false, "a": false}},
	{name: "trailing backslash matches nothing", rules: map[string]string{".gitignore": "a \\"},
		want: map[string]bool{"a": false, "a ": false}},
	{name: "tab not trimmed", rules: map[string]string{".gitignore": "a\t"},
		want: map[string]bool{"a\t": true, "a": false}},
	{name: "CRLF lines", rules: map[string]string{".gitignore": "a\r\nb\r\n"},
		want: map[string]bool{"a": true, "b": true}},
	{name: "BOM skipped", rules: map[string]string{".gitignore": "\xef\xbb\xbfa\n"},
		want: map[string]bool{"a": true}},
	{name: "negation", rules: map[string]string{".gitignore": "*.log\n!keep.log\n"},
		want: map[string]bool{"x.log": true, "keep.log": false, "d/keep.log": false}},
	{name: "later lines win", rules: map[string]string{".gitignore": "!keep.log\n*.log\n"},
		want: map[string]bool{"keep.log": true}},
	{name: "escaped bang", rules: map[string]string{".gitignore": "\\!a"},
		want: map[string]bool{"!a": true, "a": false}},
	{name: "no re-inclusion under an excluded directory",
		rules: map[string]string{".gitignore": "build/\n!build/keep\n!keep\n"},
		want:  map[string]bool{"build/": true, "build/keep": true, "build/sub/keep": true, "keep": false}},
	{name: "re-inclusion when only the content is excluded",
		rules: map[string]string{".gitignore": "build/*\n!build/keep\n"},
		want:  map[string]bool{"build/": false, "build/keep": false, "build/x": true, "build/sub/": true, "build/sub/x": true}},
	{name: "leading slash anchors", rules: map[string]string{".gitignore": "/a"},
		want: map[string]bool{"a": true, "d/a": false}},
	{name: "middle slash anchors", rules: map[string]string{".gitignore": "d/a"},
		want: map[string]bool{"d/a": true, "x/d/a": false, "a": false}},
	{name: "no slash matches at any depth", rules: map[string]string{".gitignore": "a"},
		want: map[string]bool{"a": true, "d/a": true, "d/e/a": true, "d/ab": false}},
	{name: "trailing slash for directories only", rules: map[string]string{".gitignore": "a/"},
		want: map[string]bool{"a/": true, "d/a": false, "e/a/": true}},
	{name: "anchored directory", rules: map[string]string{".gitignore": "d/e/"},
		want: map[string]bool{"d/e/": true, "d/e/x": true, "x/d/e/": false}},
	{name: "a directory's .gitignore does not match the directory itself", rules: map[string]string{"d/.gitignore": "d\n"},
		want: map[string]bool{"d/": false, "d/d": true}},
	{name: "star stays within a segment", rules: map[string]string{".gitignore": "d/*.txt"},
		want: map[string]bool{"d/a.txt": true, "d/e/a.txt": false, "a.txt": false}},
	{name: "star alone", rules: map[string]string{".gitignore": "*\n!*/\n!*.go\n"},
		want: map[string]bool{"a.txt": true, "d/": false, "d/a.go": false, "d/a.txt": true}},
	{name: "suffix", rules: map[string]string{".gitignore": "*.txt"},
		want: map[string]bool{"a.txt": true, "d/a.txt": true, ".txt": true, "a.txt.bak": false}},
	{name: "question mark", rules: map[string]string{".gitignore": "?.txt"},
		want: map[string]bool{"a.txt": true, "ab.txt": false, ".txt": false}},
	{name: "question mark is one byte", rules: map[string]string{".gitignore": "?\n??.x\n"},
		want: map[string]bool{"a": true, "é": false, "é.x": true}},
	{name: "class", rules: map[string]string{".gitignore": "[ab].txt"},
		want: map[string]bool{"a.txt": true, "b.txt": true, "c.txt": false}},
	{name: "negated class", rules: map[string]string{".gitignore": "[!ab].txt\n[^x]y\n"},
		want: map[string]bool{"c.txt": true, "a.txt": false, "ay": true, "xy": false}},
	{name: "range", rules: map[string]string{".gitignore": "[a-c]x\n"},
		want: map[string]bool{"ax": true, "cx": true, "dx": false, "-x": false}},
	{name: "dash at the ends of a class", rules: map[string]string{".gitignore": "[a-]x\n[-b]y\n"},
		want: map[string]bool{"ax": true, "-x": true, "bx": false, "by": true, "-y": true}},
	{name: "closing bracket first in a class", rules: map[string]string{".gitignore": "[]a]x\n[!]]y\n"},
		want: map[string]bool{"]x": true, "ax": true, "bx": false, "ay": true, "]y": false}},
	{name: "named classes", rules: map[string]string{".gitignore": "[[:digit:]]\n[[:upper:]]*\n"},
		want: map[string]bool{"1": true, "Ab": true, "ab": false, "12": false}},
	{name: "unknown class matches nothing", rules: map[string]string{".gitignore": "[[:bogus:]]\n"},
		want: map[string]bool{"b": false, "[": false}},
	{name: "unterminated class matches nothing", rules: map[string]string{".gitignore": "[a\n"},
		want: map[string]bool{"[a": false, "a": false}},
	{name: "escapes", rules: map[string]string{".gitignore": "\\*\n\\?x\n\\[a]\n\\a\\b\n"},
		want: map[string]bool{"*": true, "b": false, "?x": true, "ax": false, "[a]": true, "a": false, "ab": true}},
	{name: "escape in a class", rules: map[string]string{".gitignore": "[\\]]\n[a\\-c]x\n"},
		want: map[string]bool{"]": true, "-x": true, "bx": false}},
	{name: "leading double star", rules: map[string]string{".gitignore": "**/foo\n**/d/bar\n"},
		want: map[string]bool{"foo": true, "d/foo": true, "d/e/foo": true, "d/bar": true, "x/d/bar": true, "x/bar": false}},
	{name: "trailing double star", rules: map[string]string{".gitignore": "d/**\n"},
		want: map[string]bool{"d/": false, "d/x": true, "d/e/": true, "d/e/x": true, "x/d/y": false}},
	{name: "middle double star", rules: map[string]string{".gitignore": "a/**/b\n"},
		want: map[string]bool{"a/b": true, "a/x/b": true, "a/x/y/b": true, "a/xb": false, "x/a/b": false}},
	{name: "double star inside a segment is a star", rules: map[string]string{".gitignore": "d/x**y\n"},
		want: map[string]bool{"d/xay": true, "d/x/y": false}},
	{name: "double star right after the literal prefix crosses slashes (git's quirk)",
		rules: map[string]string{".gitignore": "a**/b\n"},
		want:  map[string]bool{"a/x/b": true, "ab/b": true, "x/a/b": false}},
	{name: "nested files win over shallower ones",
		rules: map[string]string{".gitignore": "*.txt\n", "d/.gitignore": "!a.txt\n"},
		want:  map[string]bool{"a.txt": true, "d/a.txt": false, "d/b.txt": true, "d/e/a.txt": false}},
	{name: "nested patterns are relative to their directory",
		rules: map[string]string{"d/.gitignore": "/x\ne/y\n"},
		want:  map[string]bool{"d/x": true, "x": false, "d/e/x": false, "d/e/y": true, "e/y": false}},
	{name: ".gitignore beats info/exclude",
		rules: map[string]string{".git/info/exclude": "a\nb\n", ".gitignore": "!a\n"},
		want:  map[string]bool{"a": false, "b": true}},
	{name: "case-sensitive by default", rules: map[string]string{".gitignore": "*.TXT\nFoo\n"},
		want: map[string]bool{"a.txt": false, "a.TXT": true, "foo": false}},
	{name: "case-insensitive", fold: true, rules: map[string]string{".gitignore": "*.TXT\nFoo\nd/Bar\n[A-C]x\n"},
		want: map[string]bool{"a.txt": true, "foo": true, "FOO": true, "D/bar": true, "bx": true, "Bx": true}},
	{name: "case-insensitive keeps git's quirks in classes", fold: true,
		rules: map[string]string{".gitignore": "[A]x\n[a]y\n\\Az\n"},
		want:  map[string]bool{"ax": false, "Ax": false, "ay": true, "Ay": true, "az": false}},
	{name: "repriseignore wins over gitignore", noGit: true,
		rules: map[string]string{".gitignore": "build/\n", ".repriseignore": "secrets/\n!build/\n", "d/.gitignore": "!secrets/\n"},
		want:  map[string]bool{"build/": false, "build/x": false, "secrets/": true, "d/secrets/": true}},
	{name: "repriseignore deeper wins", noGit: true,
		rules: map[string]string{".repriseignore": "*.gen\n", "d/.repriseignore": "!keep.gen\n"},
		want:  map[string]bool{"a.gen": true, "keep.gen": true, "d/keep.gen": false}},
}

// mapFS holds a syntax case: its rule files and the paths it asks about.
func (c syntaxCase) mapFS() fstest.MapFS {
	fsys := fstest.MapFS{".git": {Mode: os.ModeDir}}
	for name, content := range c.rules {
		fsys[name] = &fstest.MapFile{Data: []byte(content)}
	}
	for p := range c.want {
		if dir, ok := strings.CutSuffix(p, "/"); ok {
			fsys[dir] = &fstest.MapFile{Mode: os.ModeDir}
		} else if fsys[p] == nil {
			fsys[p] = &fstest.MapFile{}
		}
	}
	return fsys
}

func noUserFiles(string) string { return "" }

func TestSyntax(t *testing.T) {
	for _, c := range syntaxCases {
		t.Run(c.name, func(t *testing.T) {
			opts := Options{Case: CaseSensitive, Getenv: noUserFiles}
			if c.fold {
				opts.Case = CaseInsensitive
			}
			m := New(c.mapFS(), opts)
			got := map[string]bool{}
			for p := range c.want {
				dir, isDir := strings.CutSuffix(p, "/")
				got[p] = m.Ignored(dir, isDir)
			}
			if diff := cmp.Diff(got, c.want); diff != "" {
				t.Errorf("ignored (-got +want):\n%s", diff)
			}
		})
	}
}

// TestSyntaxIsGits checks the expectations of TestSyntax themselves with git check-ignore.
func TestSyntaxIsGits(t *testing.T) {
	needGit(t)
	for _, c := range syntaxCases {
		if c.noGit {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			tr := tree{rules: c.rules}
			seen := map[string]bool{}
			for p := range c.want {
				dir, isDir := strings.CutSuffix(p, "/")
				for d := filepathDir(dir); d != ""; d = filepathDir(d) {
					seen[d+"/"] = true
				}
				if isDir {
					seen[p] = true
				} else {
					tr.files = append(tr.files, p)
				}
			}
			for name := range c.rules {
				for d := filepathDir(name); d != "" && !strings.HasPrefix(d, ".git"); d = filepathDir(d) {
					seen[d+"/"] = true
				}
			}
			for d := range seen {
				tr.dirs = append(tr.dirs, strings.TrimSuffix(d, "/"))
			}
			sort.Strings(tr.dirs) // parents first
			root := filepath.Join(t.TempDir(), "repo")
			env := tr.write(t, root)
			var paths []string
			for p := range c.want {
				paths = append(paths, strings.TrimSuffix(p, "/"))
			}
			verdicts := gitVerdicts(t, root, env, c.fold, paths)
			got := map[string]bool{}
			for p := range c.want {
				v := verdicts[strings.TrimSuffix(p, "/")]
				got[p] = v != "" && !strings.Contains(v, ":!")
			}
			if diff := cmp.Diff(got, c.want); diff != "" {
				t.Errorf("git check-ignore (-git +table):\n%s", diff)
			}
		})
	}
}

// filepathDir is path.Dir with "" for a top-level name.
func filepathDir(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return ""
	}
	return p[:i]
}
