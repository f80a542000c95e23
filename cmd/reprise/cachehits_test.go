package main

import (
	"fmt"
	"io"
	"testing"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/cmd/reprise/scenarios"
	"github.com/reprise-dev/reprise/contextwin"
)

// TestHalfTheHitsMissed plays every scenario without compaction, with every implicit hit landing
// and with half of them missed (halfMissed), through the real genai client: the agent's measure
// of the hits must tell the two apart, and the misses must show in the cost.
func TestHalfTheHitsMissed(t *testing.T) {
	if testing.Short() {
		t.Skip("plays 4 scenarios twice")
	}
	for _, sc := range scenarios.All() {
		if _, _, ok := costPlays(sc); !ok {
			continue
		}
		t.Run(sc.Name, func(t *testing.T) {
			lucky, err := playScenario(t.Context(), sc, noCompaction, t.TempDir(), 0)
			if err != nil {
				t.Fatal(err)
			}
			missed, err := playScenarioLuck(t.Context(), sc, noCompaction, t.TempDir(), 0, halfMissed)
			if err != nil {
				t.Fatal(err)
			}
			l, ok := lucky.Totals.Cache()
			m, ok2 := missed.Totals.Cache()
			if !ok || !ok2 {
				t.Fatalf("no hit expected: %+v, %+v", lucky.Totals, missed.Totals)
			}
			t.Logf("every hit: %s, $%.4f; half missed: %s, $%.4f (%.2f×)", l.Text(), lucky.Totals.Cost, m.Text(), missed.Totals.Cost, missed.Totals.Cost/lucky.Totals.Cost)
			if l.HitRate < 0.95 {
				t.Errorf("with every hit landing, the agent measured %s", l.Text())
			}
			// Half of the calls miss, drawn from the seed; weighted by their tokens, the misses of
			// a short session may land on its smaller prompts (bugfix measures 78 %).
			if m.HitRate < 0.25 || m.HitRate > 0.85 {
				t.Errorf("with half of the hits missed, the agent measured %s", m.Text())
			}
			if missed.Totals.Cost <= lucky.Totals.Cost {
				t.Errorf("half the hits missed cost $%.4f, every hit $%.4f", missed.Totals.Cost, lucky.Totals.Cost)
			}
		})
	}
}

// TestExplicitCacheOnLongSessions plays the long investigation, at its budgets and without
// compaction, with half of the implicit hits missed and explicit caching on, and weighs it
// against the run where every implicit hit lands. Issue 22 asks for at most 1.8× (3.2× with
// implicit caching alone); explicit caching is off by default until it gets there.
func TestExplicitCacheOnLongSessions(t *testing.T) {
	if testing.Short() {
		t.Skip("plays the long investigation at each budget, three times")
	}
	var sc scenarios.Scenario
	for _, s := range scenarios.All() {
		if s.Name == "investigation" {
			sc = s
		}
	}
	for _, budget := range append([]int{noCompaction}, sc.Budgets...) {
		lucky, err := playScenario(t.Context(), sc, budget, t.TempDir(), 0)
		if err != nil {
			t.Fatal(err)
		}
		missed, err := playScenarioLuck(t.Context(), sc, budget, t.TempDir(), 0, halfMissed)
		if err != nil {
			t.Fatal(err)
		}
		explicit, err := playExplicit(t, sc, budget)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("budget %d: every hit $%.4f; half missed $%.4f (%.2f×); half missed with explicit caching $%.4f (%.2f×, %d tokens written, %d cached of %d)",
			budget, lucky.Totals.Cost, missed.Totals.Cost, missed.Totals.Cost/lucky.Totals.Cost,
			explicit.Totals.Cost, explicit.Totals.Cost/lucky.Totals.Cost, explicit.Totals.CacheWriteTokens, explicit.Totals.CachedTokens, explicit.Totals.InputTokens)
		// Where compactions and clearings rewrite the prefix, each rewrite drops a cache of the
		// history: a new one is weighed over the reads the dropped ones served, the first over
		// the calls the session made between rewrites (at 12,000 tokens, where no head fits, the
		// session rewrites at nearly every call and makes none; made for four reads, it cost
		// 1.92× against 1.82×). With a head (the default budget and above), only the head is
		// cached, which no rewrite drops (issue 36). Held to no more than implicit caching alone
		// at every budget. A run that made no cache made the calls implicit caching alone makes:
		// where background summaries land varies from run to run (±1.2 % here), not what explicit
		// caching did.
		made := explicit.Totals.CacheWriteTokens > 0
		if made && explicit.Totals.Cost > missed.Totals.Cost {
			t.Errorf("budget %d: explicit caching cost $%.4f, implicit alone $%.4f", budget, explicit.Totals.Cost, missed.Totals.Cost)
		}
	}
}

// playExplicit is playScenarioLuck with half of the implicit hits missed and explicit caching on.
func playExplicit(t *testing.T, sc scenarios.Scenario, budget int) (scenarioRun, error) {
	script := sc.Script()
	script.Cache.MissRate, script.Cache.Seed = halfMissed.MissRate, halfMissed.Seed
	// The run's own tweaks, as the implicit run's: without compaction, no tool result cleared.
	explicit := func(p *contextwin.Policy) { p.ExplicitCache = true }
	s, closeAll, err := scriptedSession(t.Context(), t.TempDir(), sc.Workspace, script, budget, io.Discard, agent.SubagentSettings{},
		runTweaks(budget, []func(*contextwin.Policy){explicit})...)
	if err != nil {
		return scenarioRun{}, err
	}
	defer closeAll()
	run := scenarioRun{Budget: budget}
	for ev, err := range s.Run(t.Context(), sc.Task) {
		switch {
		case err != nil:
			return run, err
		case ev.Type == agent.EventModelCall:
			run.Calls++
		case ev.Type == agent.EventTurnEnd:
			run.Stop, run.Totals = ev.End.StopReason, ev.End.Totals
		}
	}
	if run.Stop != agent.StopEndTurn {
		return run, fmt.Errorf("stopped with %s", run.Stop)
	}
	return run, nil
}

// TestDeadZone plays the investigation in the dead zone reported of 3.x Flash models (no implicit
// hit for prompts of 9,000 to 17,000 tokens), without compaction and at the default budget, with
// and without explicit caching, through the real genai client: the zone shows in the cost, and
// explicit caching never costs more than implicit caching alone. With a head, only the head would
// be cached, weighed at the session's hit rate, which the zone lowers too little for a cache to
// pay: both runs make the same calls (docs/decisions.md, "A head worth caching";
// TestHeadInAnExplicitCache is the case where it pays).
func TestDeadZone(t *testing.T) {
	if testing.Short() {
		t.Skip("plays the long investigation six times")
	}
	var sc scenarios.Scenario
	for _, s := range scenarios.All() {
		if s.Name == "investigation" {
			sc = s
		}
	}
	runs, err := playDeadZone(t.Context(), sc, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		tot := r.Totals
		t.Logf("budget %d, explicit %v: %s after %d calls, max prompt %d; $%.4f, %d of %d input cached (%.0f %%), %d written to caches; %.2f× every hit landing",
			r.Budget, r.Explicit, r.Stop, r.Calls, r.MaxPrompt, tot.Cost, tot.CachedTokens, tot.InputTokens, 100*float64(tot.CachedTokens)/float64(tot.InputTokens), tot.CacheWriteTokens, r.Ratio)
		if !r.Explicit && (r.Stop != agent.StopEndTurn || r.Ratio <= 1) {
			t.Errorf("budget %d: stopped with %s, the dead zone costing %.2f× every hit landing", r.Budget, r.Stop, r.Ratio)
		}
	}
	// Issue 36: explicit caching never costs more than implicit caching alone in the zone, the
	// implicit hits its reads forgo weighed and a probe seeing the zone end.
	for i := 0; i+1 < len(runs); i += 2 {
		off, on := runs[i], runs[i+1]
		if off.Explicit || !on.Explicit || off.Budget != on.Budget {
			t.Fatalf("runs out of order: budget %d explicit %v, budget %d explicit %v", off.Budget, off.Explicit, on.Budget, on.Explicit)
		}
		if on.Totals.CacheWriteTokens > 0 && on.Totals.Cost > off.Totals.Cost { // no cache: the same calls (see above)
			t.Errorf("budget %d: explicit caching $%.4f, implicit alone $%.4f", on.Budget, on.Totals.Cost, off.Totals.Cost)
		}
	}
}

// TestMissesInTheScenarios (issue 36, "every miss explained"): on the scripted bug fix, each
// uncached call is put down to a cause: the first call, the prompts under the cache minimum, the
// clearings and summaries a small budget forces, and, with half the implicit hits missed, the
// API's own misses.
func TestMissesInTheScenarios(t *testing.T) {
	var sc scenarios.Scenario
	for _, s := range scenarios.All() {
		if s.Name == "bugfix" {
			sc = s
		}
	}
	play := func(budget int, luck geminitest.Cache) contextwin.Totals {
		r, err := playScenarioLuck(t.Context(), sc, budget, t.TempDir(), 0, luck)
		if err != nil {
			t.Fatal(err)
		}
		m := r.Totals.Misses
		t.Logf("budget %d, miss rate %.1f: %d calls, %s", budget, luck.MissRate, r.Calls, m.Text(4096))
		if m.Calls[contextwin.MissFirst] != 1 || m.Total() > r.Calls {
			t.Errorf("budget %d: misses %v over %d calls", budget, m.Calls, r.Calls)
		}
		return r.Totals
	}
	base := play(noCompaction, geminitest.Cache{})
	if m := base.Misses.Calls; m[contextwin.MissRewritten] != 0 || m[contextwin.MissUnexplained] != 0 || m[contextwin.MissBelow] == 0 {
		t.Errorf("uncompacted, every hit landing: %v, want the first call and prompts under the minimum only", m)
	}
	if m := play(6000, geminitest.Cache{}).Misses.Calls; m[contextwin.MissRewritten] == 0 {
		t.Errorf("at 6,000 tokens: %v, want calls after a clearing or summary", m)
	}
	if m := play(noCompaction, halfMissed).Misses.Calls; m[contextwin.MissUnexplained] == 0 {
		t.Errorf("half the hits missed: %v, want the API's misses", m)
	}
}
