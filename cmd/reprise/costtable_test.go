package main

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/reprise-dev/reprise/cmd/reprise/scenarios"
	"github.com/reprise-dev/reprise/contextwin"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// TestCompactionPaysForItself plays every scripted scenario without compaction and at each of its
// budgets, and holds compaction to its promise in dollars, the prefix cache included:
//   - every run completes its task, and no request exceeds the budget, whether the summaries come
//     back at once or late (a background compaction then installs after more calls);
//
// and, with summaries at once (the timing that makes the figures reproducible):
//   - billed input never exceeds the uncompacted run's;
//   - where compaction is optional (the uncompacted run stays under blockAt), it costs at most
//     1.02× not compacting; where the budget forces it, at most 1.20×, but for the runs of
//     belowCacheMinimum;
//   - at the default budget, the long investigation costs at most 0.70× and bills at most 0.65×
//     the input; the 121-call refactor, in one turn, costs at most 0.47×; the 67-call refactor
//     at most 0.65× (issue 36's targets; they measure 0.69×, 0.41× and 0.64× with the head);
//   - and each of these three costs at most nearBest × the cheapest schedule of clearings to the
//     cache minimum (bestSchedule) and × the true mark (markRun), both computed from its
//     uncompacted run.
//
// belowCacheMinimum are the forced runs whose budget starts compacting near the 4,096-token
// implicit-cache minimum of every current model (compactAt × budget under 1.25 × the minimum; the
// session warns the user of exactly this): a prompt made smaller falls under the minimum and is
// billed in full, while the uncompacted run caches most of its input, so no plan can reach the
// bound. The figure is the ratio measured at gemini-3.8-flash's prices with a margin, held so that
// it cannot get worse. The declarations of write_todos and save_note made every prompt 213 tokens
// larger: at these budgets the fixed prompt and the three kept turns then leave less than one
// more read below blockAt, and the figures rose. See docs/decisions.md, "Cost: compaction at
// today's cache minimum" and "The plan and the notes: 213 tokens on every request".
// defaultBudgetCeilings are the long scenarios' cost ratios at the default budget (see above).
var defaultBudgetCeilings = map[string]float64{"investigation": 0.70, "long-refactor": 0.47, "refactor": 0.65}

var belowCacheMinimum = map[string]map[int]float64{
	// measured 1.57× (1.45× before the plan and notes tools): 10,216 of 53,222 input tokens
	// cached, against 69,748 of 90,360
	"bugfix": {6000: 1.60},
	// measured 1.92× (1.40× before them): 8,595 of 65,547 cached, against 68,477 of 90,944
	"tests": {5000: 1.95},
}

// costPlays is what of scenario sc the cost tests play: with REPRISE_LONG_TESTS=1 (scripts/test,
// CI) every scenario at every budget, its summaries on time and late; else, so that a plain
// `go test ./...` stays well within Go's default timeout on two loaded cores, the bug fix at its
// budgets and the investigation at the default budget, summaries on time. false: skip sc.
func costPlays(sc scenarios.Scenario) (budgets []int, delays []time.Duration, ok bool) {
	if os.Getenv(longTestsEnv) == "1" {
		return sc.Budgets, []time.Duration{0, 300 * time.Millisecond}, true
	}
	switch sc.Name {
	case "bugfix":
		return sc.Budgets, []time.Duration{0}, true
	case "investigation":
		return []int{contextwin.DefaultPolicy().ContextBudget}, []time.Duration{0}, true
	}
	return nil, nil, false
}

func TestCompactionPaysForItself(t *testing.T) {
	if testing.Short() {
		t.Skip("plays 4 scenarios at 12 budgets, twice")
	}
	blockAt := contextwin.DefaultPolicy().BlockAt
	for _, sc := range scenarios.All() {
		budgets, delays, ok := costPlays(sc)
		if !ok {
			continue
		}
		t.Run(sc.Name, func(t *testing.T) {
			base, err := playScenario(t.Context(), sc, noCompaction, t.TempDir(), 0)
			if err != nil {
				t.Fatal(err)
			}
			if base.Stop != "end_turn" || base.Summaries != 0 {
				t.Fatalf("uncompacted run: %+v", base)
			}
			t.Logf("no compaction: %d calls, max prompt %d, input %d (%d cached), output %d, $%.5f",
				base.Calls, base.MaxPrompt, base.Totals.InputTokens, base.Totals.CachedTokens, base.Totals.OutputTokens, base.Totals.Cost)
			ideal := idealSchedule(t, base)
			t.Logf("best schedule of clearings to the cache minimum: $%.5f = %.2f× uncompacted", ideal, ideal/base.Totals.Cost)
			truth, err := trueMark(base)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("true mark: $%.5f = %.3f× uncompacted, clearing at calls %v", truth.Cost, truth.Cost/base.Totals.Cost, truth.Clearings)
			for _, budget := range budgets {
				for _, delay := range delays {
					r, err := playScenario(t.Context(), sc, budget, t.TempDir(), delay)
					if err != nil {
						t.Fatal(err)
					}
					at := fmt.Sprintf("budget %d, summaries delayed %v", budget, delay)
					ratio := r.Totals.Cost / base.Totals.Cost
					t.Logf("%s: %d calls, %d summaries, max prompt %d, input %d (%d cached), $%.5f = %.2f× uncompacted",
						at, r.Calls, r.Summaries, r.MaxPrompt, r.Totals.InputTokens, r.Totals.CachedTokens, r.Totals.Cost, ratio)
					if r.Stop != "end_turn" || r.Calls != base.Calls {
						t.Errorf("%s: stopped with %s after %d calls, want end_turn after %d", at, r.Stop, r.Calls, base.Calls)
					}
					if r.MaxPrompt > budget {
						t.Errorf("%s: a request of %d tokens exceeds the budget", at, r.MaxPrompt)
					}
					if delay > 0 {
						continue
					}
					// The workspace's temporary path, whose length varies, shows in some outputs: a
					// run that never compacts may differ from the base by a few tokens.
					if float64(r.Totals.InputTokens) > 1.001*float64(base.Totals.InputTokens) {
						t.Errorf("%s: billed input %d exceeds the uncompacted run's %d", at, r.Totals.InputTokens, base.Totals.InputTokens)
					}
					limit := 1.20
					if float64(base.MaxPrompt) < blockAt*float64(budget) {
						limit = 1.02
					} else if ceiling, ok := belowCacheMinimum[sc.Name][budget]; ok {
						t.Logf("%s: held to %.2f×, not 1.20×: the budget compacts near the 4,096-token cache minimum", at, ceiling)
						limit = ceiling
					}
					if ratio > limit {
						t.Errorf("%s: compaction costs %.2f× not compacting, want at most %.2f×", at, ratio, limit)
					}
					if budget < 2*catalog.Builtin().CacheMin(catalog.Builtin().DefaultModel()) {
						fits, ok, err := trueMarkWithin(base, budget)
						switch {
						case err != nil:
							t.Fatal(err)
						case ok:
							t.Logf("%s: %.3f× the best schedule of clearings within the budget ($%.5f)", at, r.Totals.Cost/fits.Cost, fits.Cost)
							if r.Totals.Cost > nearFit*fits.Cost {
								t.Errorf("%s: cost $%.5f, more than %.2f× the best schedule within the budget ($%.5f)", at, r.Totals.Cost, nearFit, fits.Cost)
							}
						default:
							t.Logf("%s: no schedule of clearings alone keeps every request within the budget", at)
						}
					}
					if want, ok := defaultBudgetCeilings[sc.Name]; ok && budget == contextwin.DefaultPolicy().ContextBudget {
						if ratio > want {
							t.Errorf("%s: cost %.2f×, want at most %.2f×", at, ratio, want)
						}
						if r.Totals.Cost > nearBest*ideal {
							t.Errorf("%s: cost $%.5f, more than %.2f× the best schedule's $%.5f", at, r.Totals.Cost, nearBest, ideal)
						}
						t.Logf("%s: %.3f× the true mark", at, r.Totals.Cost/truth.Cost)
						if r.Totals.Cost > nearMark*truth.Cost {
							t.Errorf("%s: cost $%.5f, more than %.2f× the true mark's $%.5f", at, r.Totals.Cost, nearMark, truth.Cost)
						}
					}
					if sc.Name == "investigation" && budget == contextwin.DefaultPolicy().ContextBudget && float64(r.Totals.InputTokens) > 0.65*float64(base.Totals.InputTokens) {
						t.Errorf("%s: billed input %.2f×, want at most 0.65×", at, float64(r.Totals.InputTokens)/float64(base.Totals.InputTokens))
					}
				}
			}
		})
	}
}

// BenchmarkCompactionCost reports, per scenario and budget, the cost and the billed input of the
// compacted run relative to the run without compaction.
func BenchmarkCompactionCost(b *testing.B) {
	for _, sc := range scenarios.All() {
		b.Run(sc.Name, func(b *testing.B) {
			for b.Loop() {
				base, err := playScenario(b.Context(), sc, noCompaction, b.TempDir(), 0)
				if err != nil {
					b.Fatal(err)
				}
				for _, budget := range sc.Budgets {
					r, err := playScenario(b.Context(), sc, budget, b.TempDir(), 0)
					if err != nil {
						b.Fatal(err)
					}
					b.ReportMetric(r.Totals.Cost/base.Totals.Cost, fmt.Sprintf("cost×@%d", budget))
					b.ReportMetric(float64(r.Totals.InputTokens)/float64(base.Totals.InputTokens), fmt.Sprintf("input×@%d", budget))
				}
			}
		})
	}
}

// nearBest is how far above the best schedule of clearings (bestSchedule, floor at the cache
// minimum) the long scenarios may cost at the default budget: 0.98 to 1.07 of it, and a
// background summary that lands a call later moves a figure by a few per cent.
const nearBest = 1.15

// nearFit is how far above the best schedule of clearings within their budget (trueMarkWithin)
// the forced runs under twice the cache minimum may cost, as issue 36 asks: 1.002 to 1.043.
const nearFit = 1.05

// nearMark is how far above the true mark (markRun.best) the long scenarios may cost at the
// default budget, as issue 36 asks: they measure 0.975 to 1.027 of it.
const nearMark = 1.05

// idealSchedule is idealCost, failing t when it cannot price the run.
func idealSchedule(t *testing.T, base scenarioRun) float64 {
	t.Helper()
	ideal, err := idealCost(base)
	if err != nil {
		t.Fatal(err)
	}
	return ideal
}
