package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/reprise-dev/reprise/agent/tools"
	"github.com/reprise-dev/reprise/agent/tools/searchbench"
)

// benchSearch times the search tool on the generated 100,000-file tree (half of it ignored; made
// once in the user's cache) and on the Go source tree, for the three kinds of pattern, beside
// ripgrep when it is installed: the medians of runs runs, and their ratio.
func benchSearch(ctx context.Context, row func(name, value, note string), runs int) error {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	gen, err := searchbench.Generated(filepath.Join(cache, "reprise"))
	if err != nil {
		return err
	}
	trees := []struct{ name, dir string }{
		{fmt.Sprintf("%dk files, half ignored", searchbench.Files/1000), gen},
		{"Go source tree", searchbench.GoSource()},
	}
	for _, tree := range trees {
		if tree.dir == "" {
			continue
		}
		env := &tools.Env{Workspace: tree.dir}
		for _, p := range searchbench.Patterns {
			ours, err := median(runs, func() error {
				r := tools.Run(ctx, env, tools.Call{Name: "search", Args: map[string]any{"pattern": p.Pattern}})
				if r.IsError {
					return fmt.Errorf("search %q: %s", p.Pattern, r.Output)
				}
				return nil
			})
			if err != nil {
				return err
			}
			name := fmt.Sprintf("search: %s, %s", tree.name, p.Name)
			installed := true
			rg, err := median(runs, func() error {
				_, ok, err := searchbench.Ripgrep(ctx, tree.dir, p.Pattern)
				installed = ok
				return err
			})
			switch {
			case err != nil:
				return err
			case !installed:
				row(name, ms(ours), "rg not installed: no comparison")
			default:
				row(name, ms(ours), fmt.Sprintf("rg %s: %.2f× rg's time (median of %d)", ms(rg), ours.Seconds()/rg.Seconds(), runs))
			}
		}
	}
	return nil
}

func median(runs int, f func() error) (time.Duration, error) {
	times := make([]time.Duration, 0, runs)
	for range runs {
		start := time.Now()
		if err := f(); err != nil {
			return 0, err
		}
		times = append(times, time.Since(start))
	}
	slices.Sort(times)
	return times[len(times)/2], nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", d.Seconds()*1000) }
