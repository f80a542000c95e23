package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reprise-dev/reprise/agent/tools/searchbench"
)

// BenchmarkSearchScale measures search on a generated tree of 100,000 files (half of them
// ignored) and on the Go source tree, for a literal, a case-insensitive literal and a regexp,
// beside ripgrep when it is installed (rg's sub-benchmarks are skipped otherwise). The tree is
// generated once into the user's cache directory.
func BenchmarkSearchScale(b *testing.B) {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	gen, err := searchbench.Generated(filepath.Join(cache, "reprise"))
	if err != nil {
		b.Fatal(err)
	}
	trees := []struct{ name, dir string }{{"generated", gen}, {"gosrc", searchbench.GoSource()}}
	for _, tree := range trees {
		env := &Env{Workspace: tree.dir}
		for _, p := range searchbench.Patterns {
			b.Run(tree.name+"/"+p.Name+"/reprise", func(b *testing.B) {
				for b.Loop() {
					r := Run(b.Context(), env, Call{Name: "search", Args: map[string]any{"pattern": p.Pattern}})
					if r.IsError || strings.HasPrefix(r.Output, "no matches") {
						b.Fatalf("search %q: %s", p.Pattern, r.Output)
					}
				}
			})
			b.Run(tree.name+"/"+p.Name+"/rg", func(b *testing.B) {
				for b.Loop() {
					n, ok, err := searchbench.Ripgrep(b.Context(), tree.dir, p.Pattern)
					if !ok {
						b.Skip("rg is not installed")
					}
					if err != nil || n == 0 {
						b.Fatalf("rg %q: %d lines, %v", p.Pattern, n, err)
					}
				}
			})
		}
	}
}
