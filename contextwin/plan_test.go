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
	floors := []struct {
		name                string
		floor, target, want int
	}{
		{"more turns to stay above the floor", 5000, 10_000, 4},
		{"but never past the target", 5000, 3900, 2},
		{"as many as there are", 20_000, 30_000, 5},
	}
	for _, tt := range floors {
		t.Run(tt.name, func(t *testing.T) {
			in := in
			in.Target, in.Floor = tt.target, tt.floor
			p, ok := PlanCompaction(msgs, isModel, in)
			if !ok || p.Keep != tt.want || p.After != 850+500+tt.want*1020 {
				t.Errorf("plan = %+v, %v; want keep %d", p, ok, tt.want)
			}
		})
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
	saving, cost := p.Worth(flash, flash, 15_000, 1)
	// Summary: 250 uncached + 11,750 cached + 400 output; next call: 4,000 in full instead of
	// 15,000 cached and 1,000 new.
	wantCost := (250*0.30 + 11_750*0.03 + 400*2.50 + (4_000*0.30 - (1_000*0.30 + 15_000*0.03))) / 1e6
	if saving != 0 || math.Abs(cost-wantCost) > 1e-12 {
		t.Errorf("horizon 1: saving %g, cost %g; want 0, %g", saving, cost, wantCost)
	}
	saving, _ = p.Worth(flash, flash, 15_000, 11)
	if want := 10 * 12_000 * 0.03 / 1e6; math.Abs(saving-want) > 1e-12 {
		t.Errorf("horizon 11: saving %g, want %g (12,000 tokens freed on 10 calls at the cached price)", saving, want)
	}
	// A checkpoint that frees 147 tokens never pays for its summary.
	small := Plan{Before: 4_000, After: 3_853, SummaryInput: 3_000, SummaryCached: 2_750, SummaryOutput: 400}
	if saving, cost := small.Worth(flash, flash, 3_800, 50); saving >= cost {
		t.Errorf("freeing 147 tokens: saving %g ≥ cost %g", saving, cost)
	}
}

// TestPlanCold: a summary on another model shares none of the session's cache: its input is the
// rendered messages (and the summaries it merges), all billed in full at that model's prices;
// on the session's model the same summary reads its prefix at the cached rate.
func TestPlanCold(t *testing.T) {
	msgs, isModel := planHistory(1000, 1000, 1000, 1000)
	rendered := make([]int, len(msgs))
	for i := range rendered {
		rendered[i] = 150 // tool outputs cut to 600 characters
	}
	in := PlanInput{Fixed: 5000, Before: 9000, NewHead: 500, KeepRecentTurns: 1, MinCached: 1024, Target: 10_000, SummaryOutput: 400}
	warm, _ := PlanCompaction(msgs, isModel, in)
	in.Cold, in.Rendered, in.Merged = true, rendered, 300
	cold, _ := PlanCompaction(msgs, isModel, in)
	if want := 6*150 + 300 + summaryRequestTokens; cold.SummaryInput != want || cold.SummaryCached != 0 {
		t.Errorf("cold summary input %d, cached %d; want %d, none", cold.SummaryInput, cold.SummaryCached, want)
	}
	if cold.After != warm.After || cold.Split != warm.Split {
		t.Errorf("the cut moved: %+v vs %+v", cold, warm)
	}
	flash := Prices{Input: 0.75, CachedInput: 0.075, Output: 3.75}
	lite := Prices{Input: 0.25, CachedInput: 0.025, Output: 1.50}
	wantWarm := (250*0.75 + 8110*0.075 + 400*3.75) / 1e6 // 5,000 + 50 + 3×1,020 cached
	if got := warm.SummaryCost(flash); math.Abs(got-wantWarm) > 1e-12 {
		t.Errorf("warm summary $%g, want $%g", got, wantWarm)
	}
	wantCold := (1450*0.25 + 400*1.50) / 1e6
	if got := cold.SummaryCost(lite); math.Abs(got-wantCold) > 1e-12 {
		t.Errorf("cold summary $%g, want $%g", got, wantCold)
	}
	half := Prices{Input: lite.Input / 2, CachedInput: lite.CachedInput / 2, Output: lite.Output / 2}
	if got := cold.SummaryCost(half); math.Abs(got-wantCold/2) > 1e-12 {
		t.Errorf("on Flex $%g, want half of $%g", got, wantCold)
	}
	// The summary's price is a term of the decision: the same plan pays on the cheap summary and
	// not on a dear one.
	_, cheap := cold.Worth(flash, half, 8_000, 3)
	_, dear := cold.Worth(flash, Prices{Input: 10, CachedInput: 1, Output: 40}, 8_000, 3)
	if dear-cheap < (1450*10+400*40-1450*0.125-400*0.75)/1e6-1e-12 {
		t.Errorf("Worth ignores the summary's prices: cost %g vs %g", cheap, dear)
	}
}
