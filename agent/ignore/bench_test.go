package ignore

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// benchTree is a tree of 100,000 files, 1,100 directories, whose .gitignore hides every other
// file (by suffix, so that the walker still reads and matches every entry); built once a run.
var benchTree struct {
	once sync.Once
	dir  string
	err  error
}

const (
	benchFiles   = 100_000
	benchVisible = benchFiles / 2
)

func benchFS(b *testing.B) fs.FS {
	b.Helper()
	benchTree.once.Do(func() {
		dir, err := os.MkdirTemp("", "ignore-bench-")
		if err != nil {
			benchTree.err = err
			return
		}
		benchTree.dir = dir
		benchTree.err = os.WriteFile(filepath.Join(dir, GitIgnore), []byte("# build output\n*.o\n/dist/\n"), 0o644)
		for i := 0; i < 100 && benchTree.err == nil; i++ {
			for j := 0; j < 10 && benchTree.err == nil; j++ {
				d := filepath.Join(dir, fmt.Sprintf("pkg%02d", i), fmt.Sprintf("sub%d", j))
				if benchTree.err = os.MkdirAll(d, 0o755); benchTree.err != nil {
					return
				}
				for k := range 100 {
					ext := ".go"
					if k%2 == 1 {
						ext = ".o"
					}
					name := filepath.Join(d, fmt.Sprintf("file%03d%s", k, ext))
					if benchTree.err = os.WriteFile(name, nil, 0o644); benchTree.err != nil {
						return
					}
				}
			}
		}
	})
	if benchTree.err != nil {
		b.Fatal(benchTree.err)
	}
	return os.DirFS(benchTree.dir)
}

// BenchmarkWalk walks the tree: fs.WalkDir alone (sees every file), fs.WalkDir asking
// Matcher.Ignored of every entry, and the two walks of this package.
func BenchmarkWalk(b *testing.B) {
	fsys := benchFS(b)
	opts := WalkOptions{Options: Options{Getenv: noUserFiles}}
	check := func(b *testing.B, files, want int64) {
		if files != want {
			b.Fatalf("%d files, want %d", files, want)
		}
	}
	b.Run("WalkDir", func(b *testing.B) {
		for b.Loop() {
			var files int64
			err := fs.WalkDir(fsys, ".", func(rel string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() && rel != GitIgnore {
					files++
				}
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
			check(b, files, benchFiles)
		}
	})
	b.Run("WalkDirIgnored", func(b *testing.B) {
		for b.Loop() {
			var files int64
			m := New(fsys, opts.Options)
			err := fs.WalkDir(fsys, ".", func(rel string, d fs.DirEntry, err error) error {
				switch {
				case err != nil:
					return err
				case rel == "." || rel == GitIgnore:
				case m.Ignored(rel, d.IsDir()):
					if d.IsDir() {
						return fs.SkipDir
					}
				case !d.IsDir():
					files++
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			check(b, files, benchVisible)
		}
	})
	b.Run("WalkSorted", func(b *testing.B) {
		for b.Loop() {
			var files int64
			err := WalkSorted(context.Background(), fsys, ".", opts, func(rel string, d fs.DirEntry) error {
				if !d.IsDir() {
					files++
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			check(b, files, benchVisible)
		}
	})
	b.Run("WalkOrdered", func(b *testing.B) {
		for b.Loop() {
			var files int64
			err := WalkOrdered(context.Background(), fsys, ".", opts,
				func(rel string, d fs.DirEntry) bool { return !d.IsDir() },
				func(rel string, d fs.DirEntry, file bool) error {
					if file {
						files++
					}
					return nil
				})
			if err != nil {
				b.Fatal(err)
			}
			check(b, files, benchVisible)
		}
	})
}
