package ignore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// walkTree is the fixture of the walk tests.
var walkTree = map[string]string{
	".gitignore":               "*.log\nnode_modules/\nbuild/\n!build/keep\n/out\n",
	".git/config":              "",
	".github/ci.yml":           "",
	".env":                     "",
	"a.go":                     "",
	"a.log":                    "",
	"b/c.go":                   "",
	"b/c.log":                  "",
	"b/.gitignore":             "!c.log\n*.tmp\n",
	"b/d/e.tmp":                "",
	"b/d/f.go":                 "",
	"build/keep":               "",
	"build/x.go":               "",
	"node_modules/m/x.js":      "",
	"out/o.go":                 "",
	"sub/out/o.go":             "",
	"nested/.git/info/exclude": "*.gen\n",
	"nested/a.log":             "",
	"nested/a.gen":             "",
	"nested/b.go":              "",
	"notes/.repriseignore":     "private/\n",
	"notes/private/x.md":       "",
	"notes/public.md":          "",
}

func writeTree(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// walkers run each walk and return the entries in the order they were given, directories with a
// trailing slash.
var walkers = map[string]func(ctx context.Context, fsys fs.FS, start string, opts WalkOptions) ([]string, error){
	"WalkSorted": func(ctx context.Context, fsys fs.FS, start string, opts WalkOptions) ([]string, error) {
		var got []string
		err := WalkSorted(ctx, fsys, start, opts, func(rel string, d fs.DirEntry) error {
			got = append(got, show(rel, d))
			return nil
		})
		return got, err
	},
	"WalkOrdered": func(ctx context.Context, fsys fs.FS, start string, opts WalkOptions) ([]string, error) {
		var got []string
		err := WalkOrdered(ctx, fsys, start, opts,
			func(rel string, d fs.DirEntry) string { return show(rel, d) },
			func(rel string, d fs.DirEntry, v string) error {
				if v != show(rel, d) {
					return fmt.Errorf("work result %q for %q", v, rel)
				}
				got = append(got, v)
				return nil
			})
		return got, err
	},
}

func show(rel string, d fs.DirEntry) string {
	if d.IsDir() {
		return rel + "/"
	}
	return rel
}

func TestWalk(t *testing.T) {
	dir := writeTree(t, walkTree)
	if err := os.Symlink(filepath.Join(dir, "b"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	fsys := os.DirFS(dir)
	opts := WalkOptions{Options: Options{Getenv: noUserFiles}}
	tests := []struct {
		name  string
		start string
		opts  WalkOptions
		want  []string // in fs.WalkDir's order
	}{
		{"rules, hidden files and nested repositories", ".", opts, []string{
			"./", "a.go", "b/", "b/c.go", "b/c.log", "b/d/", "b/d/f.go", "link",
			"nested/", "nested/a.log", "nested/b.go", "notes/", "notes/public.md", "sub/", "sub/out/", "sub/out/o.go",
		}},
		{"an ignored start is walked with the rules inside it", "build", opts, []string{"build/", "build/keep", "build/x.go"}},
		{"a start below an ignored directory too", "node_modules/m", opts, []string{"node_modules/m/", "node_modules/m/x.js"}},
		{"a hidden start", ".github", opts, []string{".github/", ".github/ci.yml"}},
		{"a file", "a.log", opts, []string{"a.log"}},
		{"a subdirectory keeps the rules above it", "b/d", opts, []string{"b/d/", "b/d/f.go"}},
		{"pruned directories", ".", WalkOptions{Options: opts.Options, Prune: func(n string) bool { return n == "b" || n == "a.go" }}, []string{
			"./", "a.go", "link", // Prune sees directories only
			"nested/", "nested/a.log", "nested/b.go", "notes/", "notes/public.md", "sub/", "sub/out/", "sub/out/o.go",
		}},
		{"Excluded hears of what is left out", "b", WalkOptions{Options: opts.Options, Excluded: func(rel string, isDir bool) {
			if rel != "b/.gitignore" && rel != "b/d/e.tmp" {
				panic("excluded " + rel)
			}
		}}, []string{"b/", "b/c.go", "b/c.log", "b/d/", "b/d/f.go"}},
		{"Prune is off with IncludeIgnored", "b", WalkOptions{IncludeIgnored: true, Prune: func(string) bool { return true }}, []string{
			"b/", "b/.gitignore", "b/c.go", "b/c.log", "b/d/", "b/d/e.tmp", "b/d/f.go",
		}},
		{"everything but .git", "b", WalkOptions{IncludeIgnored: true}, []string{
			"b/", "b/.gitignore", "b/c.go", "b/c.log", "b/d/", "b/d/e.tmp", "b/d/f.go",
		}},
		{"one worker", ".", WalkOptions{Options: opts.Options, Workers: 1}, []string{
			"./", "a.go", "b/", "b/c.go", "b/c.log", "b/d/", "b/d/f.go", "link",
			"nested/", "nested/a.log", "nested/b.go", "notes/", "notes/public.md", "sub/", "sub/out/", "sub/out/o.go",
		}},
	}
	for _, tt := range tests {
		for name, walk := range walkers {
			t.Run(tt.name+"/"+name, func(t *testing.T) {
				got, err := walk(t.Context(), fsys, tt.start, tt.opts)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(got, tt.want); diff != "" {
					t.Errorf("(-got +want):\n%s", diff)
				}
			})
		}
	}
}

// TestWalkMatchesMatcher walks generated trees and compares every walk with fs.WalkDir filtered
// through Matcher.Ignored and the hidden-file rule: the same entries, and for the ordered walks
// the same order.
func TestWalkMatchesMatcher(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 60 {
		tr := genTree(r)
		dir := t.TempDir()
		for _, d := range tr.dirs {
			if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(d)), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		files := map[string]string{}
		for _, f := range tr.files {
			files[f] = ""
		}
		for name, content := range tr.rules {
			if name != globalKey {
				files[name] = content
			}
		}
		writeFiles(t, dir, files)
		fsys := os.DirFS(dir)
		opts := WalkOptions{Options: Options{Case: CaseSensitive, Getenv: noUserFiles}, Workers: 1 + i%4}
		m := New(fsys, opts.Options)
		var want []string
		err := fs.WalkDir(fsys, ".", func(rel string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if rel != "." && (d.Name() == ".git" || Hidden(rel) || m.Ignored(rel, d.IsDir())) {
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			want = append(want, show(rel, d))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for name, walk := range walkers {
			got, err := walk(t.Context(), fsys, ".", opts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(got, want); diff != "" {
				t.Fatalf("case %d, %s (-got +want):\n%s\n%s", i, name, diff, tr)
			}
		}
	}
}

// stopTree has enough entries to stop in the middle of.
func stopTree(t *testing.T) fs.FS {
	files := map[string]string{}
	for i := range 20 {
		for j := range 20 {
			files[fmt.Sprintf("d%02d/f%02d", i, j)] = ""
		}
	}
	return os.DirFS(writeTree(t, files))
}

func TestWalkSkips(t *testing.T) {
	fsys := stopTree(t)
	opts := WalkOptions{Options: Options{Getenv: noUserFiles}, Workers: 3}
	fn := func(rel string, d fs.DirEntry) error {
		switch {
		case rel == "d01" || rel == "d03/f02":
			return fs.SkipDir // a directory; the rest of a directory
		case strings.HasPrefix(rel, "d05"):
			return fs.SkipAll
		}
		return nil
	}
	want := []string{"./", "d00/"}
	for j := range 20 {
		want = append(want, fmt.Sprintf("d00/f%02d", j))
	}
	want = append(want, "d01/", "d02/")
	for j := range 20 {
		want = append(want, fmt.Sprintf("d02/f%02d", j))
	}
	want = append(want, "d03/", "d03/f00", "d03/f01", "d03/f02", "d04/")
	for j := range 20 {
		want = append(want, fmt.Sprintf("d04/f%02d", j))
	}
	want = append(want, "d05/")

	var got []string
	err := WalkSorted(t.Context(), fsys, ".", opts, func(rel string, d fs.DirEntry) error {
		got = append(got, show(rel, d))
		return fn(rel, d)
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("WalkSorted (-got +want):\n%s", diff)
	}

}

func TestWalkStops(t *testing.T) {
	fsys := stopTree(t)
	boom := errors.New("boom")
	for name, walk := range map[string]func(context.Context, func(string, fs.DirEntry) error) error{
		"WalkSorted": func(ctx context.Context, fn func(string, fs.DirEntry) error) error {
			return WalkSorted(ctx, fsys, ".", WalkOptions{Workers: 4}, fn)
		},
		"WalkOrdered": func(ctx context.Context, fn func(string, fs.DirEntry) error) error {
			return WalkOrdered(ctx, fsys, ".", WalkOptions{Workers: 4},
				func(string, fs.DirEntry) int { return 1 },
				func(rel string, d fs.DirEntry, v int) error {
					if v != 1 {
						return fmt.Errorf("%s: unworked result reached emit", rel)
					}
					return fn(rel, d)
				})
		},
	} {
		t.Run(name, func(t *testing.T) {
			n := 0
			err := walk(t.Context(), func(string, fs.DirEntry) error {
				if n++; n == 50 {
					return fs.SkipAll
				}
				return nil
			})
			if err != nil || n != 50 {
				t.Errorf("SkipAll: %v after %d entries", err, n)
			}

			n = 0
			err = walk(t.Context(), func(string, fs.DirEntry) error {
				if n++; n == 50 {
					return boom
				}
				return nil
			})
			if !errors.Is(err, boom) || n != 50 {
				t.Errorf("error: %v after %d entries", err, n)
			}

			ctx, cancel := context.WithCancel(t.Context())
			n = 0
			err = walk(ctx, func(string, fs.DirEntry) error {
				if n++; n == 50 {
					cancel()
				}
				return nil
			})
			if !errors.Is(err, context.Canceled) || n != 50 {
				t.Errorf("cancel: %v after %d entries", err, n)
			}
			if err := walk(ctx, func(string, fs.DirEntry) error { return nil }); !errors.Is(err, context.Canceled) {
				t.Errorf("cancelled before: %v", err)
			}
		})
	}
}

func TestWalkBadStart(t *testing.T) {
	fsys := os.DirFS(t.TempDir())
	for name, walk := range walkers {
		for _, start := range []string{"missing", "../x", "/abs"} {
			if _, err := walk(t.Context(), fsys, start, WalkOptions{}); err == nil {
				t.Errorf("%s(%q) succeeded", name, start)
			}
		}
	}
}

func TestHidden(t *testing.T) {
	for rel, want := range map[string]bool{
		".": false, "a": false, ".a": true, "a/.b": true, ".a/b": true, "a/b.c": false, "a./b": false,
	} {
		if got := Hidden(rel); got != want {
			t.Errorf("Hidden(%q) = %v", rel, got)
		}
	}
}

func TestBinary(t *testing.T) {
	late := make([]byte, binarySniff+10)
	late[binarySniff] = 0
	for i := range binarySniff {
		late[i] = 'a'
	}
	for name, tt := range map[string]struct {
		head []byte
		want bool
	}{
		"empty":              {nil, false},
		"text":               {[]byte("hello\n"), false},
		"NUL":                {[]byte("a\x00b"), true},
		"NUL past the sniff": {late, false},
		"UTF-16":             {[]byte("\xff\xfea\x00"), true},
	} {
		if got := Binary(tt.head); got != tt.want {
			t.Errorf("%s: Binary = %v", name, got)
		}
	}
}

// TestWalkRoot walks through os.Root, as the tools confine every access: the same entries as
// through os.DirFS, a symbolic link out of the root listed and not followed.
func TestWalkRoot(t *testing.T) {
	dir := writeTree(t, walkTree)
	if err := os.Symlink(t.TempDir(), filepath.Join(dir, "outside")); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	opts := WalkOptions{Options: Options{Getenv: noUserFiles}}
	want, err := walkers["WalkSorted"](t.Context(), os.DirFS(dir), ".", opts)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(want, "outside") || !slices.Contains(want, "nested/b.go") {
		t.Fatalf("fixture: %q", want)
	}
	for name, walk := range walkers {
		got, err := walk(t.Context(), root.FS(), ".", opts)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(got, want); diff != "" {
			t.Errorf("%s through os.Root (-got +want):\n%s", name, diff)
		}
	}
}
