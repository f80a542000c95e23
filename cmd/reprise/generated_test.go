package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/reprise-dev/reprise/cmd/reprise/scenarios"
	"github.com/reprise-dev/reprise/contextwin"
)

// generatedSeeds are the session shapes TestGeneratedSessions plays.
const generatedSeeds = 10

// TestGeneratedSessions (issue 36, "not tuned to four scenarios") plays generated session shapes
// (scenarios.Generated: 20 to 150 calls over 1 to 3 turns, files of 300 bytes to 12 KB, re-reads,
// edit-and-test cycles, a long build log) unmanaged and at the default budget: management never
// costs more than none, nor more than trueMarkCeiling × the true mark, and clearing alone never
// costs less than the true mark (it is a lower bound of the first tier). It logs each run against
// the simplified mark (bestSchedule) and the true mark, and the distribution of the ratios.
func TestGeneratedSessions(t *testing.T) {
	if testing.Short() {
		t.Skip("plays 10 generated sessions three times")
	}
	figuresOnly(t)
	budget := contextwin.DefaultPolicy().ContextBudget
	var vsNone, vsMark, vsTrue []float64
	for seed := range uint64(generatedSeeds) {
		sc := scenarios.Generated(seed + 1)
		base, err := playScenario(t.Context(), sc, noCompaction, t.TempDir(), 0)
		if err != nil {
			t.Fatal(err)
		}
		r, err := playScenario(t.Context(), sc, budget, t.TempDir(), 0)
		if err != nil {
			t.Fatal(err)
		}
		mark := idealSchedule(t, base)
		truth, err := trueMark(base)
		if err != nil {
			t.Fatal(err)
		}
		// The mark is a lower bound of the first tier: clearing alone never costs less.
		clearing, err := playScenario(t.Context(), sc, budget, t.TempDir(), 0, func(p *contextwin.Policy) { p.NoSummaries = true })
		if err != nil {
			t.Fatal(err)
		}
		if clearing.Totals.Cost < truth.Cost*(1-1e-9) {
			t.Errorf("%s: clearing alone costs $%.5f, under the true mark's $%.5f (clearing at %v)", sc.Name, clearing.Totals.Cost, truth.Cost, truth.Clearings)
		}
		ratio, toMark, toTrue := r.Totals.Cost/base.Totals.Cost, r.Totals.Cost/mark, r.Totals.Cost/truth.Cost
		vsNone, vsMark, vsTrue = append(vsNone, ratio), append(vsMark, toMark), append(vsTrue, toTrue)
		t.Logf("%s (%s): unmanaged $%.4f, max prompt %d; managed $%.4f (%.0f %% cached), %d clearings, %d summaries, max prompt %d: %.2f× none, %.2f× the simplified mark ($%.4f), %.3f× the true mark ($%.4f = %.2f× none, clearing at %v); clearing alone %.3f× the mark",
			sc.Name, sc.About, base.Totals.Cost, base.MaxPrompt, r.Totals.Cost, 100*float64(r.Totals.CachedTokens)/float64(max(r.Totals.InputTokens, 1)),
			r.Clearings, r.Summaries, r.MaxPrompt, ratio, toMark, mark, toTrue, truth.Cost, truth.Cost/base.Totals.Cost, truth.Clearings, clearing.Totals.Cost/truth.Cost)
		if r.Stop != "end_turn" || r.Calls != base.Calls || base.Stop != "end_turn" {
			t.Errorf("%s: stopped with %s after %d calls, unmanaged %s after %d", sc.Name, r.Stop, r.Calls, base.Stop, base.Calls)
		}
		if r.MaxPrompt > budget {
			t.Errorf("%s: a request of %d tokens exceeds the budget", sc.Name, r.MaxPrompt)
		}
		// The workspace's path, whose length varies, is in the prompt: a few tokens either way.
		if ratio > 1.001 {
			t.Errorf("%s: management costs %.3f× none", sc.Name, ratio)
		}
		if toTrue > trueMarkCeiling {
			t.Errorf("%s: management costs %.3f× the true mark, more than %.2f×", sc.Name, toTrue, trueMarkCeiling)
		}
	}
	t.Logf("against none: %s", spread(vsNone))
	t.Logf("against the simplified mark: %s", spread(vsMark))
	t.Logf("against the true mark: %s", spread(vsTrue))
}

// trueMarkCeiling is how far above the true mark (markRun.best) a generated session may cost:
// they measure 0.96× to 1.12× of it, the farthest those without a head (a workspace too small
// for one), whose every clearing plays against the cache minimum. Issue 36 asks 1.05×; held here
// so that it cannot get worse.
const trueMarkCeiling = 1.15

// figuresOnly skips a test of cost figures under the race detector: it plays sessions whose code
// the other tests run under it, and its figures are the same without. scripts/test runs it without,
// in its own suite ("cost figures").
func figuresOnly(t *testing.T) {
	t.Helper()
	if underRace {
		t.Skip("cost figures: scripts/test runs them without the race detector, in the \"cost figures\" suite")
	}
}

// spread is a distribution as the notes write it: min, quartiles, max.
func spread(xs []float64) string {
	s := slices.Sorted(slices.Values(xs))
	at := func(q float64) float64 { return s[int(q*float64(len(s)-1)+0.5)] }
	parts := []string{}
	for _, q := range []float64{0, 0.25, 0.5, 0.75, 1} {
		parts = append(parts, fmt.Sprintf("%.2f×", at(q)))
	}
	return strings.Join(parts, " / ") + " (min / quartiles / max)"
}
