package main

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/reprise-dev/reprise/contextwin"
)

// TestBestScheduleIsTheCheapest: bestSchedule equals the cheapest of every schedule of clearings,
// enumerated, on random sessions; a session that never reaches the floor gains nothing.
func TestBestScheduleIsTheCheapest(t *testing.T) {
	p := contextwin.Prices{Input: 0.75, CachedInput: 0.075, Output: 3.75}
	const floor, minCached = 4096, 4096
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		n := 1 + rng.IntN(11)
		prompts := make([]int, n)
		size := 800 + rng.IntN(3000)
		for i := range prompts {
			size += rng.IntN(4000)
			prompts[i] = size
		}
		got := bestSchedule(prompts, floor, minCached, 500, p)
		want := math.Inf(1)
		for mask := range 1 << (n - 1) { // bit i: call i+1 clears
			want = min(want, scheduleCost(prompts, mask, floor, minCached, p))
		}
		want += 500 * p.Output / 1e6
		if math.Abs(got-want) > 1e-12 {
			t.Fatalf("prompts %v: bestSchedule $%.8f, cheapest enumerated $%.8f", prompts, got, want)
		}
	}
	small := []int{1000, 1500, 2200, 3000, 4000}
	if got, want := bestSchedule(small, floor, minCached, 0, p), scheduleCost(small, 0, floor, minCached, p); got != want {
		t.Errorf("under the floor: $%.8f, want the uncompacted $%.8f", got, want)
	}
}

// scheduleCost bills one schedule call by call, as bestSchedule describes it.
func scheduleCost(prompts []int, mask, floor, minCached int, p contextwin.Prices) float64 {
	total, prompt, prev := 0.0, 0, 0
	for i, u := range prompts {
		grow := u
		if i > 0 {
			grow = u - prompts[i-1]
		}
		if i > 0 && mask&(1<<(i-1)) != 0 {
			prompt = min(floor+grow, u)
			total += float64(prompt) * p.Input / 1e6
		} else {
			prompt += grow
			if prev < minCached {
				total += float64(prompt) * p.Input / 1e6
			} else {
				total += (float64(prompt-prev)*p.Input + float64(prev)*p.CachedInput) / 1e6
			}
		}
		prev = prompt
	}
	return total
}
