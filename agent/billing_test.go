package agent

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
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

// TestUnknownModelCostIsUnknown: a model the catalogue lacks is usable, its cost is unknown (never
// $0), and a dollar cap says it cannot be enforced, once. A price given by the user applies.
func TestUnknownModelCostIsUnknown(t *testing.T) {
	p := contextwin.DefaultPolicy()
	p.MaxCostUSD = 1
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
	w := ofType(evs, EventWarning)
	if len(w) != 1 || !strings.Contains(w[0].Text, "dollar cap ($1.00) cannot be enforced: gemini-9-experimental has no known price") {
		t.Errorf("warnings = %+v, want one about the dollar cap", w)
	}
	if u := f.s.Usage(); u.Totals.CostKnown() {
		t.Errorf("usage totals claim a known cost: %+v", u.Totals)
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
	f := newFixture(t, fixtureOpts{model: "gemini-3.7-flash"}, textTurn("done"))
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
