package ignore_test

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"strings"
	"testing/fstest"

	"github.com/reprise-dev/reprise/agent/ignore"
)

// A search in the shape of the search tool's: files are read and searched in parallel (work),
// matches are printed in a stable order (emit), and the walk stops at a limit.
func ExampleWalkOrdered() {
	fsys := fstest.MapFS{
		".gitignore":     {Data: []byte("*.log\nvendor/\n")},
		"a.go":           {Data: []byte("package a\n// TODO: a\n")},
		"b/b.go":         {Data: []byte("// TODO: b\n")},
		"b/debug.log":    {Data: []byte("TODO: ignored\n")},
		"vendor/v.go":    {Data: []byte("// TODO: vendored\n")},
		"z.bin":          {Data: []byte("TODO\x00")},
		".hidden/h.go":   {Data: []byte("// TODO: hidden\n")},
		"c/deep/more.go": {Data: []byte("// TODO: c\n// TODO: c again\n")},
	}
	type found struct{ lines []string }
	work := func(rel string, d fs.DirEntry) found {
		if !d.Type().IsRegular() {
			return found{}
		}
		data, err := fs.ReadFile(fsys, rel)
		if err != nil || ignore.Binary(data) {
			return found{}
		}
		var f found
		sc := bufio.NewScanner(strings.NewReader(string(data)))
		for n := 1; sc.Scan(); n++ {
			if strings.Contains(sc.Text(), "TODO") {
				f.lines = append(f.lines, fmt.Sprintf("%s:%d: %s", rel, n, sc.Text()))
			}
		}
		return f
	}
	shown := 0
	emit := func(rel string, d fs.DirEntry, f found) error {
		for _, l := range f.lines {
			if shown == 3 {
				return fs.SkipAll
			}
			fmt.Println(l)
			shown++
		}
		return nil
	}
	opts := ignore.WalkOptions{Options: ignore.Options{Getenv: func(string) string { return "" }}}
	if err := ignore.WalkOrdered(context.Background(), fsys, ".", opts, work, emit); err != nil {
		fmt.Println(err)
	}
	// Output:
	// a.go:2: // TODO: a
	// b/b.go:1: // TODO: b
	// c/deep/more.go:1: // TODO: c
}
