package main

import (
	"fmt"

	"github.com/reprise-dev/reprise/contextwin"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// idealCost is bestSchedule for the uncompacted run base at the default model's prices of today,
// the floor at its cache minimum.
func idealCost(base scenarioRun) (float64, error) {
	c := catalog.Builtin()
	model := c.DefaultModel()
	p, ok := contextwin.Pricing{Catalog: c}.At(model, timeNow(), 0)
	if !ok {
		return 0, fmt.Errorf("no price for %s", model)
	}
	return bestSchedule(base.Prompts, c.CacheMin(model), c.CacheMin(model), base.Totals.OutputTokens, p), nil
}

// bestSchedule is what a session whose calls had the prompts of an uncompacted run (prompts, in
// order) would cost at the cheapest schedule of clearings of a kind: each clearing leaves the
// prompt at floor tokens plus what the call brings (never more than the uncompacted prompt), and
// is billed in full, since it rewrites the prefix; every other call reads the previous prompt from
// the cache once that reached minCached. With floor at the cache minimum, it is the mark for a
// policy that clears or summarizes from the start of the conversation: under the minimum every
// call is billed in full, above it every call costs more. The output (the same for every
// schedule) is billed as the uncompacted run's: outputTokens at p.
func bestSchedule(prompts []int, floor, minCached int, outputTokens int, p contextwin.Prices) float64 {
	n := len(prompts)
	grow := make([]int, n) // what call i brings: the model's last answer and the results since
	for i := range prompts {
		grow[i] = prompts[i]
		if i > 0 {
			grow[i] = max(prompts[i]-prompts[i-1], 0)
		}
	}
	call := func(prompt, prev int) float64 {
		if prev < minCached {
			return float64(prompt) * p.Input / 1e6
		}
		return (float64(prompt-prev)*p.Input + float64(prev)*p.CachedInput) / 1e6
	}
	// best[j]: the cheapest cost of calls j… when call j clears.
	best := make([]float64, n+1)
	for j := n - 1; j >= 0; j-- {
		best[j] = -1
		prompt := min(floor+grow[j], prompts[j]) // a clearing adds nothing
		run := float64(prompt) * p.Input / 1e6
		for k := j + 1; k <= n; k++ { // calls j…k-1 run on without clearing, k clears
			if c := run + best[k]; best[j] < 0 || c < best[j] {
				best[j] = c
			}
			if k < n {
				run += call(prompt+grow[k], prompt)
				prompt += grow[k]
			}
		}
	}
	// The session's start runs as uncompacted until its first clearing.
	total, run := -1.0, 0.0
	for k := 0; k <= n; k++ {
		if c := run + best[k]; k > 0 && (total < 0 || c < total) {
			total = c
		}
		if k < n {
			prev := 0
			if k > 0 {
				prev = prompts[k-1]
			}
			run += call(prompts[k], prev)
		}
	}
	return total + float64(outputTokens)*p.Output/1e6
}
