package ignore

import (
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
)

// FuzzMatcher feeds any rule file and path to the matcher: parsing and matching must not panic,
// whatever the bytes.
func FuzzMatcher(f *testing.F) {
	for _, c := range syntaxCases {
		for name, content := range c.rules {
			for p := range c.want {
				f.Add(name, content, strings.TrimSuffix(p, "/"), strings.HasSuffix(p, "/"), c.fold)
			}
		}
	}
	f.Add(".gitignore", "[[:\n[\\\n\\\n**/**/\n!\n/\n//\n[a-\n", "a/b", false, true)
	f.Fuzz(func(t *testing.T, name, content, rel string, isDir, fold bool) {
		if !fs.ValidPath(name) || name == "." {
			name = GitIgnore
		}
		fsys := fstest.MapFS{name: &fstest.MapFile{Data: []byte(content)}}
		opts := Options{Case: CaseSensitive, Getenv: noUserFiles}
		if fold {
			opts.Case = CaseInsensitive
		}
		m := New(fsys, opts)
		r, ok := m.Explain(rel, isDir)
		if ok && (r.Line < 1 || r.Source == "") {
			t.Errorf("Explain(%q) = %+v", rel, r)
		}
	})
}

// FuzzWildmatch checks that matching never panics and that a pattern escaping every byte of a
// text matches that text.
func FuzzWildmatch(f *testing.F) {
	f.Add("a/**/b", "a/x/y/b")
	f.Add("[[:alpha:]-z]*", "q")
	f.Add("*a*a*a*a*a*a*a*b", strings.Repeat("a", 40))
	f.Add("**/**/**/**/x", strings.Repeat("a/", 20))
	f.Fuzz(func(t *testing.T, pattern, text string) {
		wildmatch(pattern, text, 0)
		wildmatch(pattern, text, wmPathname|wmCasefold)
		if strings.IndexByte(text, 0) >= 0 {
			return
		}
		var esc strings.Builder
		for i := 0; i < len(text); i++ {
			esc.WriteByte('\\')
			esc.WriteByte(text[i])
		}
		if !wildmatch(esc.String(), text, wmPathname) {
			t.Errorf("%q does not match %q", esc.String(), text)
		}
	})
}
