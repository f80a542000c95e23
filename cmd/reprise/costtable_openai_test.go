package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"testing"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/openai"
	"github.com/reprise-dev/reprise/agent/openai/openaitest"
	"github.com/reprise-dev/reprise/cmd/reprise/scenarios"
	"github.com/reprise-dev/reprise/contextwin"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// openaiScenarioModel is the OpenAI model the scenarios are replayed on: priced in the catalogue,
// with OpenAI's automatic prefix caching from 1,024 tokens.
const openaiScenarioModel = "gpt-5.4-mini"

// playScenarioOpenAI is playScenario on an OpenAI-compatible server: the real openai-go client
// against openaitest, which bills an automatic prefix cache from 1,024 tokens as OpenAI does; the
// session on openaiScenarioModel. false: the scenario cannot be replayed there.
func playScenarioOpenAI(ctx context.Context, sc scenarios.Scenario, budget int, dir string) (scenarioRun, bool, error) {
	turns, err := openaitest.FromGemini(sc.Script())
	if err != nil {
		return scenarioRun{}, false, nil // left out: the test says so
	}
	srv := openaitest.New(turns...)
	srv.Models = []string{openaiScenarioModel}
	client, err := openai.New(openai.Config{BaseURL: srv.URL(), APIKey: "scripted", Model: openaiScenarioModel, BaseDelay: 10e6})
	if err != nil {
		srv.Close()
		return scenarioRun{}, true, err
	}
	models := func(context.Context, string) (agent.Model, int, error) { return client, 400_000, nil }
	open := scripted{dir: dir, workspace: sc.Workspace, model: openaiScenarioModel, models: models, budget: budget, approvals: io.Discard}
	s, closeAll, err := open.session(ctx, srv.Close, runTweaks(budget, nil)...)
	if err != nil {
		return scenarioRun{}, true, err
	}
	defer closeAll()
	r, err := playSession(ctx, sc, s, budget)
	return r, true, err
}

// openaiHeld are the runs on OpenAI above the bounds, each held at its measured ratio with a
// margin so that it cannot get worse (docs/decisions.md, "The cost tests on OpenAI's rules"):
//   - bugfix at 16,000 (optional): at call 12 of 13 the prompt is at 83 % of the budget, and
//     clearing 8 old results costs $0.0016 to rebuild against $0.0019 saved over the 4 calls the
//     horizon expects; the task ends one call later, so the bet is lost: 1.09×. On Gemini the
//     rebuild costs $0.0024 (no cached share under its minimum) and the clearing waits.
//   - bugfix at 6,000 (forced): each read leaves the prompt at blockAt, where one old result
//     must go, and each clearing of it rebuilds all but the first 1,408 tokens ($0.0017); the
//     keep rules let only one go a call, and the read at call 10 leaves the last three turns
//     alone above blockAt, so a summary comes anyway. 1.37×: the stubs now counted as written
//     (agent.clearedTokensLocked) free a little more, so a fifth clearing comes before the
//     summary, where the flat estimate summarized a call earlier (1.27×). Gemini: 1.58×, the
//     best schedule of clearings within the budget.
var openaiHeld = map[string]map[int]float64{"bugfix": {6000: 1.40, 16000: 1.10}}

// TestCompactionPaysForItselfOnOpenAI (issue 38): the engine's cost test replayed on an
// OpenAI-compatible server, through the real openai-go client: every run completes within its
// budget, billed input never exceeds the uncompacted run's, and compaction keeps its promise in
// dollars at OpenAI's prices and 1,024-token cache minimum: at most 1.02× not compacting where it
// is optional, 1.20× where the budget forces it (but for openaiHeld), and the long scenarios'
// ceilings at the default budget as on Gemini. Each run is priced at the model's rates, its
// cached share at the cached rate.
func TestCompactionPaysForItselfOnOpenAI(t *testing.T) {
	if testing.Short() {
		t.Skip("plays the scenarios at their budgets")
	}
	c := catalog.Builtin()
	if c.CacheMin(openaiScenarioModel) != 1024 {
		t.Fatalf("%s's cache minimum is %d, want OpenAI's 1,024", openaiScenarioModel, c.CacheMin(openaiScenarioModel))
	}
	prices, ok := contextwin.Pricing{Catalog: c}.At(openaiScenarioModel, timeNow(), 0)
	if !ok {
		t.Fatalf("no price for %s", openaiScenarioModel)
	}
	blockAt := contextwin.DefaultPolicy().BlockAt
	played := 0
	for _, sc := range scenarios.All() {
		budgets, _, ok := costPlays(sc)
		if !ok {
			continue
		}
		t.Run(sc.Name, func(t *testing.T) {
			base, ok, err := playScenarioOpenAI(t.Context(), sc, noCompaction, t.TempDir())
			switch {
			case !ok:
				t.Skipf("%s scripts what openaitest does not", sc.Name)
			case err != nil:
				t.Fatal(err)
			case base.Stop != agent.StopEndTurn || base.Summaries != 0:
				t.Fatalf("uncompacted run: %+v", base)
			}
			played++
			checkPricedAt(t, "no compaction", base.Totals, prices)
			ideal, err := idealCostOf(base, openaiScenarioModel)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("no compaction: %d calls, max prompt %d, input %d (%d cached), output %d, $%.5f; best schedule of clearings $%.5f = %.2f×",
				base.Calls, base.MaxPrompt, base.Totals.InputTokens, base.Totals.CachedTokens, base.Totals.OutputTokens, base.Totals.Cost, ideal, ideal/base.Totals.Cost)
			for _, budget := range budgets {
				r, _, err := playScenarioOpenAI(t.Context(), sc, budget, t.TempDir())
				if err != nil {
					t.Fatal(err)
				}
				at := fmt.Sprintf("budget %d", budget)
				ratio := r.Totals.Cost / base.Totals.Cost
				t.Logf("%s: %d calls, %d summaries, %d clearings, max prompt %d, input %d (%d cached, %.0f %%), $%.5f = %.2f× uncompacted",
					at, r.Calls, r.Summaries, r.Clearings, r.MaxPrompt, r.Totals.InputTokens, r.Totals.CachedTokens,
					100*float64(r.Totals.CachedTokens)/float64(max(r.Totals.InputTokens, 1)), r.Totals.Cost, ratio)
				checkPricedAt(t, at, r.Totals, prices)
				if r.Stop != agent.StopEndTurn || r.Calls != base.Calls {
					t.Errorf("%s: stopped with %s after %d calls, want end_turn after %d", at, r.Stop, r.Calls, base.Calls)
				}
				if r.MaxPrompt > budget {
					t.Errorf("%s: a request of %d tokens exceeds the budget", at, r.MaxPrompt)
				}
				if r.Compactions == 0 && float64(base.MaxPrompt) >= blockAt*float64(budget) {
					t.Errorf("%s: the uncompacted run reaches %d tokens, and nothing was cleared or summarized", at, base.MaxPrompt)
				}
				if float64(r.Totals.InputTokens) > 1.001*float64(base.Totals.InputTokens) {
					t.Errorf("%s: billed input %d exceeds the uncompacted run's %d", at, r.Totals.InputTokens, base.Totals.InputTokens)
				}
				limit := 1.20
				if float64(base.MaxPrompt) < blockAt*float64(budget) {
					limit = 1.02
				}
				if held, ok := openaiHeld[sc.Name][budget]; ok {
					t.Logf("%s: held to %.2f×, not %.2f× (see openaiHeld)", at, held, limit)
					limit = held
				}
				if ratio > limit {
					t.Errorf("%s: compaction costs %.2f× not compacting, want at most %.2f×", at, ratio, limit)
				}
				if want, ok := defaultBudgetCeilings[sc.Name]; ok && budget == contextwin.DefaultPolicy().ContextBudget && ratio > want {
					t.Errorf("%s: cost %.2f×, want at most %.2f× as on Gemini", at, ratio, want)
				}
			}
		})
	}
	if played == 0 {
		t.Fatal("no scenario was replayed on the OpenAI-compatible server")
	}
}

// checkPricedAt checks that totals are priced at p: the uncached input, the cached input and the
// output (thoughts included) at their rates.
func checkPricedAt(t *testing.T, at string, tot contextwin.Totals, p contextwin.Prices) {
	t.Helper()
	want := (float64(tot.InputTokens-tot.CachedTokens)*p.Input + float64(tot.CachedTokens)*p.CachedInput + float64(tot.OutputTokens)*p.Output) / 1e6
	if math.Abs(tot.Cost-want) > 1e-9+1e-6*want || tot.Unpriced > 0 || tot.Local > 0 {
		t.Errorf("%s: cost $%.6f, want $%.6f at %s's rates (%+v)", at, tot.Cost, want, openaiScenarioModel, tot)
	}
}
