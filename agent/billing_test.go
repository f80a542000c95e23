package agent

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/contextwin"
)

// usageTurn answers text with a usage as the API would report it.
func usageTurn(text string, u geminitest.Usage) geminitest.Turn {
	t := textTurn(text)
	t.Usage = &u
	return t
}

// TestBilledAtTheCatalogueRates: a call to gemini-3.8-flash is priced at the catalogue's rates on
// the day it is made ($0.75 / $0.075 / $3.75 per million until 2026-12-31, double from
// 2027-01-01), thinking counted as output and shown apart.
func TestBilledAtTheCatalogueRates(t *testing.T) {
	u := geminitest.Usage{Prompt: 1_000_000, Cached: 400_000, Candidates: 50_000, Thoughts: 50_000}
	for _, tt := range []struct {
		day  time.Time
		want float64
	}{
		{time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), 0.6*0.75 + 0.4*0.075 + 0.1*3.75},
		{time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), 0.6*1.50 + 0.4*0.15 + 0.1*7.50},
	} {
		f := newFixture(t, fixtureOpts{model: "gemini-3.8-flash", now: func() time.Time { return tt.day }}, usageTurn("done", u))
		evs, err := f.run(t.Context(), "go")
		if err != nil {
			t.Fatal(err)
		}
		tot := lastEnd(t, evs).Totals
		if math.Abs(tot.Cost-tt.want) > 1e-9 || !tot.CostKnown() || tot.OutputTokens != 100_000 || tot.ThoughtTokens != 50_000 {
			t.Errorf("on %s: totals %+v, want $%.4f", tt.day.Format(time.DateOnly), tot, tt.want)
		}
		if w := ofType(evs, EventWarning); len(w) != 0 {
			t.Errorf("warnings on a current model: %+v", w)
		}
	}
}

// TestUnknownModelCostIsUnknown: a model the catalogue lacks is usable, and its cost is unknown
// (never $0); under a dollar cap it does not run at all (the cap could not be enforced), and the
// error says how to allow it. A price given by the user applies, and the cap with it.
func TestUnknownModelCostIsUnknown(t *testing.T) {
	p := contextwin.DefaultPolicy()
	u := geminitest.Usage{Prompt: 10_000, Candidates: 100}
	f := newFixture(t, fixtureOpts{model: "gemini-9-experimental", policy: p},
		callTurn("list_files", map[string]any{}, ""), usageTurn("done", u))
	evs, err := f.run(t.Context(), "go")
	if err != nil {
		t.Fatal(err)
	}
	tot := lastEnd(t, evs).Totals
	if tot.CostKnown() || tot.Unpriced != 2 || tot.Cost != 0 || tot.CostText() != "unknown" || tot.InputTokens == 0 {
		t.Errorf("totals %+v (%s), want 2 unpriced calls and the cost unknown", tot, tot.CostText())
	}
	if u := f.s.Usage(); u.Totals.CostKnown() {
		t.Errorf("usage totals claim a known cost: %+v", u.Totals)
	}

	p.MaxCostUSD = 1
	capped := newFixture(t, fixtureOpts{model: "gemini-9-experimental", policy: p}, usageTurn("done", u))
	evs, err = capped.run(t.Context(), "go")
	var unpriced *UnpricedError
	if !errors.As(err, &unpriced) || !strings.Contains(err.Error(), "gemini-9-experimental has no known price, so the dollar cap ($1.00) cannot be enforced: give it a price") ||
		!strings.Contains(err.Error(), "maxCostUSD 0") {
		t.Errorf("error %v, want the dollar cap refused with the way out", err)
	}
	if end := lastEnd(t, evs); end.StopReason != StopError || len(mainRequests(capped.srv)) != 0 || len(capped.s.Conversation().History()) != 0 {
		t.Errorf("turn end %+v after %d requests and %d messages, want an error before any", end, len(mainRequests(capped.srv)), len(capped.s.Conversation().History()))
	}

	priced := newFixture(t, fixtureOpts{model: "gemini-9-experimental", policy: p, prices: contextwin.PriceTable{"gemini-9-experimental": {Input: 1, CachedInput: 0.1, Output: 10}}},
		usageTurn("done", u))
	evs, err = priced.run(t.Context(), "go")
	if err != nil {
		t.Fatal(err)
	}
	if tot := lastEnd(t, evs).Totals; !tot.CostKnown() || math.Abs(tot.Cost-0.011) > 1e-9 || len(ofType(evs, EventWarning)) != 0 {
		t.Errorf("with a price given: totals %+v, warnings %+v", tot, ofType(evs, EventWarning))
	}
}

// TestRetiredModelWarnedBeforeTheFirstCall: a model the catalogue marks retired is named, with its
// replacement, before any call is made.
func TestRetiredModelWarnedBeforeTheFirstCall(t *testing.T) {
	f := newFixture(t, fixtureOpts{model: "gemini-3.7-flash", script: geminitest.Script{Routes: map[string]geminitest.Route{"gemini-3.7-flash": {To: "gemini-3.8-flash"}}}},
		textTurn("done"))
	evs, err := f.run(t.Context(), "go")
	if err != nil {
		t.Fatal(err)
	}
	first := -1
	for i, e := range evs {
		if e.Type == EventWarning && first < 0 {
			first = i
			if !strings.Contains(e.Text, "gemini-3.7-flash was shut down on 2026-10-08") || !strings.Contains(e.Text, "use gemini-3.8-flash instead") {
				t.Errorf("warning = %q", e.Text)
			}
		}
		if e.Type == EventModelCall && first < 0 {
			t.Fatalf("a call came before the warning: %v", types(evs))
		}
	}
	if first < 0 {
		t.Fatalf("no warning: %v", types(evs))
	}
}

// TestRoutedCallPricedAsServed: when the API answers with another model (a retired model's older
// keys), each call is priced at the served model's rates, recorded with it, and the user hears
// it once per session, naming both models.
func TestRoutedCallPricedAsServed(t *testing.T) {
	day := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	u := geminitest.Usage{Prompt: 100_000, Candidates: 10_000}
	f := newFixture(t, fixtureOpts{model: "gemini-2.5-pro", now: func() time.Time { return day }, journal: true,
		script: geminitest.Script{Routes: map[string]geminitest.Route{"gemini-2.5-pro": {To: "gemini-3.8-flash", Stage: "RETIRED"}}}},
		geminitest.Turn{Parts: []geminitest.Part{{FunctionCall: &geminitest.FunctionCall{Name: "list_files", Args: map[string]any{}}}}, Usage: &u},
		usageTurn("done", u))
	evs, err := f.run(t.Context(), "go")
	if err != nil {
		t.Fatal(err)
	}
	tot := lastEnd(t, evs).Totals
	want := 2 * (0.1*0.75 + 0.01*3.75) // gemini-3.8-flash's rates, not gemini-2.5-pro's (1.25 / 10.00)
	if math.Abs(tot.Cost-want) > 1e-9 || !tot.CostKnown() {
		t.Errorf("cost $%.4f, want $%.4f at gemini-3.8-flash's prices", tot.Cost, want)
	}
	var routed []string
	for _, w := range ofType(evs, EventWarning) {
		if strings.Contains(w.Text, "answered") {
			routed = append(routed, w.Text)
		}
	}
	if len(routed) != 1 || !strings.Contains(routed[0], "gemini-2.5-pro is retired: the API answered with gemini-3.8-flash; its calls are billed at gemini-3.8-flash's prices") {
		t.Errorf("routing warnings = %q, want one naming both models", routed)
	}
	if w := ofType(evs, EventWarning); len(w) != 2 || !strings.Contains(w[0].Text, "gemini-2.5-pro was shut down on 2026-12-01") {
		t.Errorf("warnings = %+v, want the retirement before the first call, then the routing once", w)
	}
	if r := f.s.Context(); r.Model != "gemini-2.5-pro" || r.ServedModel != "gemini-3.8-flash" {
		t.Errorf("context: model %q, served %q", r.Model, r.ServedModel)
	}
	// The journal keeps the served model of each call, and a resumed session its cost.
	snap := replayLog(t, f)
	if math.Abs(snap.Totals.Cost-want) > 1e-9 {
		t.Errorf("replayed cost $%.4f, want $%.4f", snap.Totals.Cost, want)
	}
	models := journalModels(t, f)
	if len(models) != 2 || models[0] != "gemini-3.8-flash" || models[1] != "gemini-3.8-flash" {
		t.Errorf("journalled served models %q", models)
	}
}

// TestRetiredModelEndsTheTurn: a retired model without routing (new keys) ends the turn at the
// first call, not retried, with one line naming the replacement.
func TestRetiredModelEndsTheTurn(t *testing.T) {
	f := newFixture(t, fixtureOpts{model: "gemini-2.5-flash"}, textTurn("never"))
	start := time.Now()
	evs, err := f.run(t.Context(), "go")
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("took %v", took)
	}
	end := lastEnd(t, evs)
	if end.StopReason != StopError || err == nil || !strings.Contains(end.Err, "model gemini-2.5-flash is not available") || !strings.Contains(end.Err, "use gemini-3.5-flash-lite") {
		t.Errorf("end %+v, err %v", end, err)
	}
	posts := slices.DeleteFunc(f.srv.Requests(), func(r geminitest.Request) bool { return r.Method != "POST" })
	if n := len(posts); n != 1 || len(ofType(evs, EventRetry)) != 0 {
		t.Errorf("%d requests, %d retries: want one, not retried", n, len(ofType(evs, EventRetry)))
	}
	if w := ofType(evs, EventWarning); len(w) != 1 || !strings.Contains(w[0].Text, "gemini-2.5-flash was shut down on 2026-12-01") {
		t.Errorf("warnings %+v, want the retirement before the call", w)
	}
}

// journalRecords reads the session's event log as written so far.
func journalRecords(t *testing.T, f *fixture) []journal.Record {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.state, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var recs []journal.Record
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r journal.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	return recs
}

func replayLog(t *testing.T, f *fixture) *journal.Snapshot {
	return journal.Replay(journalRecords(t, f))
}

// journalModels are the served models of the usage records, in order.
func journalModels(t *testing.T, f *fixture) []string {
	var out []string
	for _, r := range journalRecords(t, f) {
		if r.Kind == journal.KindUsage {
			out = append(out, r.Model)
		}
	}
	return out
}

// TestModelStatusWarnedOnce: a modelStatus saying the model is deprecated, with its retirement
// time, is told once per session, however many calls carry it.
func TestModelStatusWarnedOnce(t *testing.T) {
	route := geminitest.Route{To: "gemini-3.8-flash", Stage: "DEPRECATED", RetirementTime: "2027-06-01T00:00:00Z", Message: "migrate to gemini-4-hydrogen"}
	f := newFixture(t, fixtureOpts{script: geminitest.Script{Routes: map[string]geminitest.Route{"gemini-3.8-flash": route}}},
		callTurn("list_files", map[string]any{}, ""), textTurn("done"))
	evs, err := f.run(t.Context(), "go")
	if err != nil {
		t.Fatal(err)
	}
	w := ofType(evs, EventWarning)
	if len(w) != 1 || w[0].Text != "the API reports gemini-3.8-flash as deprecated, retiring on 2027-06-01: migrate to gemini-4-hydrogen" {
		t.Errorf("warnings = %+v", w)
	}
}

// TestSmallBudgetWarned: a budget whose compaction threshold sits near the model's cache minimum
// is told once, with the budget that keeps the cache working; the default budget is not.
func TestSmallBudgetWarned(t *testing.T) {
	for _, tc := range []struct {
		budget int
		warned bool
	}{{5000, true}, {24000, false}} {
		p := contextwin.DefaultPolicy()
		p.ContextBudget = tc.budget
		f := newFixture(t, fixtureOpts{policy: p}, textTurn("ok"), textTurn("ok"))
		var got []string
		for range 2 {
			evs, err := f.run(t.Context(), "hi")
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ofType(evs, EventWarning) {
				got = append(got, e.Text)
			}
		}
		if tc.warned != (len(got) == 1 && strings.Contains(got[0], "contextBudget 5000 is small for gemini-3.8-flash") && strings.Contains(got[0], "at least 9000")) || !tc.warned && len(got) > 0 {
			t.Errorf("budget %d: warnings %q", tc.budget, got)
		}
	}
}

// TestRoutedToUnpricedModelUnderCap: a call the API answers with a model that has no known price
// is the last one under a dollar cap: the turn stops before the next call, saying why.
func TestRoutedToUnpricedModelUnderCap(t *testing.T) {
	p := contextwin.DefaultPolicy()
	p.MaxCostUSD = 1
	f := newFixture(t, fixtureOpts{model: "gemini-3.8-flash", policy: p,
		script: geminitest.Script{Routes: map[string]geminitest.Route{"gemini-3.8-flash": {To: "gemini-9-experimental"}}}},
		callTurn("list_files", map[string]any{}, ""), textTurn("done"))
	evs, err := f.run(t.Context(), "go")
	var unpriced *UnpricedError
	if !errors.As(err, &unpriced) || unpriced.Model != "gemini-9-experimental" {
		t.Fatalf("error %v, want the routed model's missing price", err)
	}
	if n := len(mainRequests(f.srv)); n != 1 || len(toolResults(evs)) != 1 {
		t.Errorf("%d requests and %d tool results, want the one call and its tool run", n, len(toolResults(evs)))
	}
}

// TestPlansWeighTheMeasuredHits: the plans price a cached token at the session's measured implicit
// hit rate; from nine tenths up, at the catalogue's cached price.
func TestPlansWeighTheMeasuredHits(t *testing.T) {
	f := newFixture(t, fixtureOpts{model: "gemini-3.8-flash"}, textTurn("x"))
	b := &f.s.bill
	full, _, _, _ := b.forPlan()
	for _, tt := range []struct {
		expected, reported int
		want               float64
	}{
		{0, 0, full.CachedInput},
		{10_000, 9_500, full.CachedInput},
		{10_000, 5_000, 0.5*full.CachedInput + 0.5*full.Input},
		{10_000, 0, full.Input},
	} {
		b.mu.Lock()
		b.totals.CacheExpected, b.totals.CacheReported = tt.expected, tt.reported
		b.mu.Unlock()
		if p, _, _, _ := b.forPlan(); math.Abs(p.CachedInput-tt.want) > 1e-12 || p.Input != full.Input {
			t.Errorf("%d of %d expected hits: cached input weighed at %g, want %g", tt.reported, tt.expected, p.CachedInput, tt.want)
		}
	}
}
