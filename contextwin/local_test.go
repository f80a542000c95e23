package contextwin

import (
	"testing"
	"time"

	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// TestPricingLocal: on a local server a model neither the user nor the catalogue prices is free
// and known; one they price keeps its price; elsewhere an unknown model stays unknown.
func TestPricingLocal(t *testing.T) {
	now := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	local := Pricing{Local: true, Overrides: PriceTable{"priced-local": {Input: 0.1, CachedInput: 0.01, Output: 0.4}}}
	for _, c := range []struct {
		p           Pricing
		model       string
		free, known bool
	}{
		{local, "qwen3:8b", true, true},
		{local, "priced-local", false, true},
		{local, catalog.Builtin().DefaultModel(), false, true},
		{Pricing{}, "qwen3:8b", false, false},
	} {
		pr, known := c.p.At(c.model, now, 1000)
		if free := c.p.Free(c.model); free != c.free || known != c.known {
			t.Errorf("%s (local %v): free %v known %v, want %v %v", c.model, c.p.Local, free, known, c.free, c.known)
		}
		if c.free && pr != (Prices{}) {
			t.Errorf("%s: a free model priced %+v", c.model, pr)
		}
	}
}

// TestLocalCostWords: a local model's calls cost their time, never "$0" or "unknown"; beside
// priced or unpriced calls, both are said.
func TestLocalCostWords(t *testing.T) {
	var tot Totals
	if got := tot.CostWords(false, true); got != "local" {
		t.Errorf("before the first call: %q", got)
	}
	tot.Add(CallUsage{Prompt: 2000, Candidates: 50, Local: true, WaitMillis: 9_000, GenMillis: 32_400}, Prices{})
	if got := tot.CostText(); got != "local · 41 s" {
		t.Errorf("one local call: %q", got)
	}
	tot.Add(CallUsage{Prompt: 1e6}, Prices{Input: 0.75, Output: 3.75})
	if got := tot.CostText(); got != "$0.7500 + local 41 s" {
		t.Errorf("beside a priced call: %q", got)
	}
	tot.AddUnpriced(CallUsage{Prompt: 10})
	if got := tot.CostText(); got != "$0.7500 + unknown + local 41 s" {
		t.Errorf("beside an unpriced call: %q", got)
	}
	for ms, want := range map[int64]string{40: "<0.1 s", 400: "0.4 s", 41_400: "41 s", 192_000: "3 min 12 s", 3_840_000: "1 h 04 min"} {
		if got := Elapsed(ms); got != want {
			t.Errorf("Elapsed(%d) = %q, want %q", ms, got, want)
		}
	}
}

// TestPace: the pace is measured from the streamed calls once enough time was, each half apart;
// until then the assumed one stands. As prices, a second is a dollar and a cached token weighs
// as much as the others.
func TestPace(t *testing.T) {
	assumed := Pace{Prompt: 200, Output: 20}
	var tt TimeTotals
	tt.add(CallUsage{Prompt: 50, Candidates: 2, WaitMillis: 100, GenMillis: 50})
	if got := tt.Pace(assumed); got != assumed {
		t.Errorf("too little measured: %+v", got)
	}
	tt.add(CallUsage{Prompt: 4000, Cached: 1000, Candidates: 98, WaitMillis: 900, GenMillis: 1950})
	tt.add(CallUsage{Prompt: 900, Candidates: 10, WaitMillis: 300}) // unary: not split
	got := tt.Pace(assumed)
	if got.Prompt != 3050.0/1.0 || got.Output != 100.0/2.0 || tt.Millis != 3300 {
		t.Errorf("pace %+v, time %+v", got, tt)
	}
	p := got.Prices()
	if p.Input != 1e6/3050.0 || p.CachedInput != p.Input || p.Output != 1e6/50.0 {
		t.Errorf("prices %+v", p)
	}
	c := CallUsage{Prompt: 3050, Candidates: 50}
	if secs := c.Cost(p); secs < 1.999 || secs > 2.001 {
		t.Errorf("a call of 3,050 prompt and 50 output tokens weighs %.3f s, want 2", secs)
	}
}
