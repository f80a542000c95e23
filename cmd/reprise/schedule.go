package main

import (
	"fmt"

	"github.com/reprise-dev/reprise/contextwin"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// idealCost is bestSchedule for the uncompacted run base at the default model's prices of today,
// the floor at its cache minimum.
func idealCost(base scenarioRun) (float64, error) {
	return idealCostOf(base, catalog.Builtin().DefaultModel())
}

// idealCostOf is idealCost for a run on model, at its prices and cache minimum.
func idealCostOf(base scenarioRun, model string) (float64, error) {
	c := catalog.Builtin()
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
		u := contextwin.CallUsage{Prompt: prompt}
		if prev >= minCached {
			u.Cached = prev
		}
		return u.Cost(p)
	}
	// best[j]: the cheapest cost of calls j… when call j clears. A "clearing" at the first call
	// leaves its prompt whole, so best[0] starts the session as it ran uncompacted.
	best := make([]float64, n+1)
	for j := n - 1; j >= 0; j-- {
		best[j] = -1
		prompt := min(floor+grow[j], prompts[j]) // a clearing adds nothing
		run := call(prompt, 0)
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
	return best[0] + contextwin.CallUsage{Candidates: outputTokens}.Cost(p)
}
