package tools

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

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
		if tree.dir == "" {
			continue // no go command: only the generated tree
		}
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

// TestSearchAgreesWithRipgrep compares search with rg on a generated tree (2,000 files, half of
// them ignored): the same lines, in the same order as rg --sort path.
func TestSearchAgreesWithRipgrep(t *testing.T) {
	if _, err := exec.LookPath("rg"); err != nil {
		t.Skip("rg is not installed (scripts/setup installs it)")
	}
	dir, err := searchbench.GeneratedN(t.TempDir(), 2000)
	if err != nil {
		t.Fatal(err)
	}
	env := &Env{Workspace: dir, MaxOutputChars: 1 << 20}
	for _, p := range searchbench.Patterns {
		rg := exec.CommandContext(t.Context(), "rg", "--line-number", "--no-heading", "--color=never", "--sort", "path", "--", p.Pattern, ".")
		rg.Dir = dir
		out, err := rg.Output()
		if err != nil {
			t.Fatalf("rg %q: %v", p.Pattern, err)
		}
		var want []string
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			path, rest, _ := strings.Cut(strings.TrimPrefix(l, "./"), ":")
			n, text, _ := strings.Cut(rest, ":")
			want = append(want, path+":"+n+": "+text)
		}
		r := Run(t.Context(), env, Call{Name: "search", Args: map[string]any{"pattern": p.Pattern}})
		if diff := cmp.Diff(strings.Split(r.Output, "\n"), want); diff != "" || len(want) == 0 {
			t.Errorf("%s %q: (-reprise +rg):\n%s", p.Name, p.Pattern, diff)
		}
	}
}
