package contextwin

import (
	"math"
	"slices"
	"strings"
	"testing"

	"google.golang.org/genai"
)

var flash = Prices{Input: 0.75, CachedInput: 0.075, Output: 3.75}

// TestStubNamesTheCallAndTheWayBack: a stub says which call it was and how to see its result.
func TestStubNamesTheCallAndTheWayBack(t *testing.T) {
	call := &genai.FunctionCall{Name: "read_file", Args: map[string]any{"path": "src/a.go", "offset": 10, "limit": 200}}
	got := Stub(call, "")
	want := `[cleared to free context: read_file limit="200" offset="10" path="src/a.go". Call it again to see it as it is now.]`
	if got != want {
		t.Errorf("stub\n got %s\nwant %s", got, want)
	}
	saved := Stub(&genai.FunctionCall{Name: "run_command", Args: map[string]any{"command": "go test ./..."}}, `read_file path=".reprise/outputs/call-3.txt"`)
	if !strings.Contains(saved, `run_command command="go test ./..."`) || !strings.Contains(saved, `The full result is saved: read_file path=".reprise/outputs/call-3.txt" to see it again.`) {
		t.Errorf("saved stub: %s", saved)
	}
	long := DescribeCall(&genai.FunctionCall{Name: "search", Args: map[string]any{"pattern": strings.Repeat("x", 300)}})
	if len([]rune(long)) > 100 {
		t.Errorf("a long argument is not clipped: %d runes", len([]rune(long)))
	}
}

// TestClearResultsKeepsPairs: clearing replaces outputs only: every response keeps its call's
// id and name, the model's parts (and their thought signatures) are untouched, errors stay
// errors, a cleared result is not cleared again, and the input history is not changed.
func TestClearResultsKeepsPairs(t *testing.T) {
	sig := []byte("signature")
	h := []*genai.Content{
		{Role: genai.RoleUser, Parts: []*genai.Part{{Text: "task"}}},
		{Role: genai.RoleModel, Parts: []*genai.Part{
			{FunctionCall: &genai.FunctionCall{ID: "a", Name: "read_file", Args: map[string]any{"path": "x.go"}}, ThoughtSignature: sig},
			{FunctionCall: &genai.FunctionCall{ID: "b", Name: "run_command", Args: map[string]any{"command": "make"}}},
		}},
		{Role: genai.RoleUser, Parts: []*genai.Part{
			{FunctionResponse: &genai.FunctionResponse{ID: "a", Name: "read_file", Response: map[string]any{"output": strings.Repeat("code ", 500)}}},
			{FunctionResponse: &genai.FunctionResponse{ID: "b", Name: "run_command", Response: map[string]any{"error": "make: *** no rule"}}},
		}},
	}
	orig := h[2].Parts[0].FunctionResponse.Response["output"]
	out := ClearResults(h, []int{2}, func(fr *genai.FunctionResponse) string {
		if fr.ID == "b" {
			return "read_file path=\"saved/b.txt\""
		}
		return ""
	})
	if h[2].Parts[0].FunctionResponse.Response["output"] != orig {
		t.Fatal("the input history was changed")
	}
	a, b := out[2].Parts[0].FunctionResponse, out[2].Parts[1].FunctionResponse
	if a.ID != "a" || a.Name != "read_file" || !IsCleared(a) || !strings.Contains(a.Response["output"].(string), `read_file path="x.go"`) {
		t.Errorf("a = %+v", a)
	}
	if b.ID != "b" || !IsCleared(b) || b.Response["error"] == nil || !strings.Contains(b.Response["error"].(string), "saved/b.txt") {
		t.Errorf("b = %+v", b)
	}
	if out[1] != h[1] || string(out[1].Parts[0].ThoughtSignature) != "signature" {
		t.Error("the model's message was rewritten")
	}
	again := ClearResults(out, []int{2}, func(*genai.FunctionResponse) string { return "other" })
	if again[2].Parts[0].FunctionResponse.Response["output"] != a.Response["output"] {
		t.Error("a cleared result was cleared again")
	}
}

// TestPlanClearingWeighsTheCache: clearing pays when the freed tokens, no longer paid on each
// later call, outweigh the rebuild from the first cleared result; results kept are never
// cleared; with a short horizon nothing pays; a prompt pushed below the cache minimum costs
// more per call, not less.
func TestPlanClearingWeighsTheCache(t *testing.T) {
	msgs := []int{500, 200, 6000, 200, 5000, 200, 4000, 200, 300}
	before := 16600 + 4000
	in := ClearInput{Messages: msgs, Fixed: 4000, Before: before, Cached: before - 300, MinCached: 4096, Horizon: 20, Prices: flash}
	items := []ClearItem{{Index: 2, Tokens: 6000, StubTokens: 30}, {Index: 4, Tokens: 5000, StubTokens: 30}, {Index: 6, Tokens: 4000, StubTokens: 30, Keep: true}}
	p, ok := PlanClearing(items, in)
	if !ok || len(p.Indexes) != 2 || p.Indexes[0] != 2 || p.Indexes[1] != 4 || p.From != 2 {
		t.Fatalf("plan %+v, ok %v; want messages 2 and 4 cleared", p, ok)
	}
	if p.Freed != 10940 || p.After != before-10940 || p.AfterCached != 4700 {
		t.Errorf("freed %d, after %d (cached %d)", p.Freed, p.After, p.AfterCached)
	}
	in.Horizon = 1
	if p, ok := PlanClearing(items, in); ok {
		t.Errorf("with no call after the next one, clearing paid: %+v", p)
	}
	// A small prompt: clearing takes it below the minimum; every later call pays it in full.
	small := ClearInput{Messages: []int{300, 100, 1200, 100, 300}, Fixed: 2500, Before: 4500, Cached: 4300, MinCached: 4096, Horizon: 20, Prices: flash}
	if p, ok := PlanClearing([]ClearItem{{Index: 2, Tokens: 1200, StubTokens: 30}}, small); ok {
		t.Errorf("clearing below the cache minimum paid: %+v", p)
	}
	if _, ok := PlanClearing(nil, in); ok {
		t.Error("a plan with nothing to clear")
	}
}

// TestClearingDueWhenWaitingCostsARebuild: a clearing that pays over the horizon is due only
// once the results it frees have cost, call after call, as much as the rebuild of the prompt;
// one that does not pay is never due.
func TestClearingDueWhenWaitingCostsARebuild(t *testing.T) {
	msgs := []int{500, 200, 6000, 200, 5000, 200, 300}
	before := 12400 + 1000
	in := ClearInput{Messages: msgs, Fixed: 1000, Before: before, Cached: before - 300, MinCached: 4096, Horizon: 20, Prices: flash}
	p, ok := PlanClearing([]ClearItem{{Index: 2, Tokens: 6000, StubTokens: 30}}, in)
	if !ok {
		t.Fatalf("no plan: %+v", p)
	}
	// The prefix before message 2 is under the minimum: the next call pays the whole prompt.
	wantRebuild := float64(p.After)*flash.Input/1e6 - (300*flash.Input+float64(before-300)*flash.CachedInput)/1e6
	if math.Abs(p.Rebuild-wantRebuild) > 1e-9 || math.Abs(p.PerCall-float64(p.Freed)*flash.CachedInput/1e6) > 1e-9 {
		t.Errorf("rebuild $%.6f (want $%.6f), per call $%.6f for %d freed", p.Rebuild, wantRebuild, p.PerCall, p.Freed)
	}
	items := func(held float64) []ClearItem {
		return []ClearItem{{Index: 2, Tokens: 6000, StubTokens: 30, Held: held}}
	}
	if d, ok := DueClearing(items(p.Rebuild-1e-6), in); ok {
		t.Errorf("due before waiting had cost a rebuild: %+v", d)
	}
	d, ok := DueClearing(items(p.Rebuild), in)
	if !ok || d.Held != p.Rebuild || !slices.Equal(d.Indexes, []int{2}) {
		t.Errorf("not due once waiting had cost a rebuild: %+v", d)
	}
	atLeast := in
	atLeast.MinFreed = 6000
	if d, ok := DueClearing(items(1), atLeast); ok {
		t.Errorf("due though it frees less than asked: %+v", d)
	}
	// A clearing that brings the prompt under the minimum makes every later call dearer.
	under := ClearInput{Messages: msgs, Fixed: 1000, Before: 7500, Cached: 7200, MinCached: 4096, Horizon: 20, Prices: flash}
	if d, ok := DueClearing(items(1), under); ok {
		t.Errorf("due though every later call pays more: %+v", d)
	}
}

// TestClearingKeepsACachedPrefix: when the prompt before the oldest result is under the cache
// minimum, clearing from it bills the whole prompt in full; leaving it and clearing from the first
// result after the minimum keeps the prefix cached, and pays at once.
func TestClearingKeepsACachedPrefix(t *testing.T) {
	msgs := []int{500, 200, 6000, 200, 5000, 200, 300}
	before := 12400 + 1000
	in := ClearInput{Messages: msgs, Fixed: 1000, Before: before, Cached: before - 300, MinCached: 4096, Horizon: 20, Prices: flash}
	p, ok := PlanClearing([]ClearItem{{Index: 2, Tokens: 6000, StubTokens: 30}, {Index: 4, Tokens: 5000, StubTokens: 30}}, in)
	if !ok || !slices.Equal(p.Indexes, []int{4}) || p.From != 4 || p.AfterCached != 7900 || p.Rebuild >= 0 {
		t.Errorf("want message 4 cleared over a cached prefix of 7,900 tokens, paying at once; got %+v", p)
	}
	// Past the minimum from the start, the oldest is where the batch begins.
	in.Fixed = 4000
	in.Before += 3000
	in.Cached += 3000
	if p, ok := PlanClearing([]ClearItem{{Index: 2, Tokens: 6000, StubTokens: 30}, {Index: 4, Tokens: 5000, StubTokens: 30}}, in); !ok || p.From != 2 {
		t.Errorf("with a cached prefix before the oldest, the batch should start there: %+v", p)
	}
}

// TestGrowthWeighsTheCacheMinimum: a prompt just under the cache minimum soon passes it. Weighed
// as if it stayed there, clearing it looks like it saves the full price at every call; weighed
// at the sizes the prompt will have, it only keeps the prompt under the minimum longer.
func TestGrowthWeighsTheCacheMinimum(t *testing.T) {
	in := ClearInput{Messages: []int{300, 100, 1500, 100, 300}, Fixed: 1800, Before: 4000, Cached: 0, MinCached: 4096, Horizon: 10, Prices: flash}
	items := []ClearItem{{Index: 2, Tokens: 1500, StubTokens: 30}}
	if _, ok := PlanClearing(items, in); !ok {
		t.Fatal("a prompt that stays under the minimum: clearing should pay")
	}
	in.Growth = 600
	if p, ok := PlanClearing(items, in); ok {
		t.Errorf("growing 600 a call, the prompt passes the minimum next call; clearing paid: %+v", p)
	}
}
