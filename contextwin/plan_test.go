package contextwin

import (
	"math"
	"testing"
)

// history of task + n turns of (model call, response), the responses of the given sizes.
func planHistory(sizes ...int) ([]int, func(int) bool) {
	msgs := []int{50}
	for _, s := range sizes {
		msgs = append(msgs, 20, s)
	}
	return msgs, func(i int) bool { return i%2 == 1 }
}

func TestPlanCompactionAdaptsKeep(t *testing.T) {
	msgs, isModel := planHistory(1000, 1000, 1000, 1000, 1000, 1000)
	in := PlanInput{Fixed: 850, Before: 7000, NewHead: 500, KeepRecentTurns: 3, MinCached: 1024}
	tests := []struct {
		name     string
		target   int
		keep     int
		after    int
		splitMsg int
	}{
		{"the setting when it fits", 5000, 3, 850 + 500 + 3*1020, 7},
		{"fewer turns when the kept ones fill the budget", 3000, 1, 850 + 500 + 1020, 11},
		{"as many as fit", 3500, 2, 850 + 500 + 2*1020, 9},
		{"one turn at least", 100, 1, 850 + 500 + 1020, 11},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := in
			in.Target = tt.target
			p, ok := PlanCompaction(msgs, isModel, in)
			if !ok || p.Keep != tt.keep || p.After != tt.after || p.Split != tt.splitMsg {
				t.Errorf("plan = %+v, %v; want keep %d, after %d, split %d", p, ok, tt.keep, tt.after, tt.splitMsg)
			}
		})
	}
	if _, ok := PlanCompaction([]int{50, 20, 100}, isModel, in); ok {
		t.Error("a history of one turn was planned, want nothing to compact")
	}
}

func TestPlanCachedParts(t *testing.T) {
	msgs, isModel := planHistory(1000, 1000, 1000, 1000)
	in := PlanInput{Fixed: 850, Before: 5000, HeadKept: 100, NewHead: 500, KeepRecentTurns: 1, MinCached: 1024, Target: 10_000, SummaryOutput: 300}
	p, _ := PlanCompaction(msgs, isModel, in)
	if p.AfterCached != 0 {
		t.Errorf("AfterCached = %d: system, tools and task (950) are under the minimum", p.AfterCached)
	}
	if want := 850 + 50 + 3*1020; p.SummaryCached != want || p.SummaryInput != want+summaryRequestTokens {
		t.Errorf("summary input %d, cached %d; want the prefix %d cached", p.SummaryInput, p.SummaryCached, want)
	}
	in.HeadKept = 400 // a summary already there, kept
	if p, _ := PlanCompaction(msgs, isModel, in); p.AfterCached != 1250 {
		t.Errorf("AfterCached = %d, want 1250", p.AfterCached)
	}
}

func TestWorth(t *testing.T) {
	flash := Prices{Input: 0.30, CachedInput: 0.03, Output: 2.50} // the rates these figures were worked out at
	p := Plan{Before: 16_000, After: 4_000, SummaryInput: 12_000, SummaryCached: 11_750, SummaryOutput: 400}
	saving, cost := p.Worth(flash, 15_000, 1)
	// Summary: 250 uncached + 11,750 cached + 400 output; next call: 4,000 in full instead of
	// 15,000 cached and 1,000 new.
	wantCost := (250*0.30 + 11_750*0.03 + 400*2.50 + (4_000*0.30 - (1_000*0.30 + 15_000*0.03))) / 1e6
	if saving != 0 || math.Abs(cost-wantCost) > 1e-12 {
		t.Errorf("horizon 1: saving %g, cost %g; want 0, %g", saving, cost, wantCost)
	}
	saving, _ = p.Worth(flash, 15_000, 11)
	if want := 10 * 12_000 * 0.03 / 1e6; math.Abs(saving-want) > 1e-12 {
		t.Errorf("horizon 11: saving %g, want %g (12,000 tokens freed on 10 calls at the cached price)", saving, want)
	}
	// A checkpoint that frees 147 tokens never pays for its summary.
	small := Plan{Before: 4_000, After: 3_853, SummaryInput: 3_000, SummaryCached: 2_750, SummaryOutput: 400}
	if saving, cost := small.Worth(flash, 3_800, 50); saving >= cost {
		t.Errorf("freeing 147 tokens: saving %g ≥ cost %g", saving, cost)
	}
}
