package contextwin

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/contextwin/catalog"
)

func TestEstimateText(t *testing.T) {
	tests := []struct {
		in   string
		want float64
	}{
		{"", 0},
		{"abcd", 1},
		{"été", 2*1.3 + 0.25},
		{"中文", 2.6},
	}
	for _, tt := range tests {
		if got := EstimateText(tt.in); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("EstimateText(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestLedgerAnchorsOnUsage(t *testing.T) {
	var l Ledger
	l.SetFixed(100)
	l.Append(user(strings.Repeat("a", 400))) // ~104 estimated
	if _, src := l.Used(); src != "estimate" {
		t.Errorf("source before any count = %q, want estimate", src)
	}
	l.Observe(500) // the model says the prompt was 500 tokens
	if got, src := l.Used(); got != 500 || src != "usage" {
		t.Errorf("Used() = %d, %s; want 500, usage", got, src)
	}
	if f := l.Factor(); f < 2 || f > 3 {
		t.Errorf("Factor() = %v, want about 500/205", f)
	}
	l.Append(user(strings.Repeat("b", 400)))
	got, src := l.Used()
	if src != "estimate" || got <= 500 || got > 500+int(105*l.Factor())+1 {
		t.Errorf("Used() after append = %d, %s; want 500 + corrected estimate", got, src)
	}
	l.Reset([]*genai.Content{user("short")})
	if got, src := l.Used(); src != "estimate" || got >= 500 {
		t.Errorf("Used() after reset = %d, %s; want a small estimate", got, src)
	}
}

func TestEstimatorLearnClamps(t *testing.T) {
	var e Estimator
	e.Learn(100, 100000)
	if e.Factor() != 4 {
		t.Errorf("Factor() = %v, want clamped to 4", e.Factor())
	}
	e.Learn(0, 10) // ignored
	if e.Factor() != 4 {
		t.Errorf("Factor() changed on a zero estimate")
	}
}

func TestBreakdown(t *testing.T) {
	f := Fixed{SystemPrompt: 500, CustomInstructions: 200, Tools: 800}
	tests := []struct {
		name               string
		window, used, resv int
		want               Breakdown
	}{
		{"room", 24000, 10000, 1200, Breakdown{SystemPrompt: 500, CustomInstructions: 200, Tools: 800, Messages: 8500, Free: 12800, Buffer: 1200}},
		{"into the buffer", 24000, 23500, 1200, Breakdown{SystemPrompt: 500, CustomInstructions: 200, Tools: 800, Messages: 22000, Free: 0, Buffer: 500}},
		{"over", 24000, 25000, 1200, Breakdown{SystemPrompt: 500, CustomInstructions: 200, Tools: 800, Messages: 23500}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := NewBreakdown(tt.window, tt.used, tt.resv, f)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("NewBreakdown() mismatch (-want +got):\n%s", diff)
			}
			sum := got.SystemPrompt + got.CustomInstructions + got.Tools + got.MCPTools + got.Messages + got.Free + got.Buffer
			if tt.used <= tt.window && sum != tt.window {
				t.Errorf("categories sum to %d, want the window %d", sum, tt.window)
			}
		})
	}
}

func TestLargestItems(t *testing.T) {
	h := []*genai.Content{
		user("task"),
		call("1", "read_file", map[string]any{"path": "big.go"}, ""), response("1", "read_file", strings.Repeat("x", 4000)),
		call("2", "run_command", map[string]any{"command": "go test ./..."}, ""), response("2", "run_command", strings.Repeat("y", 800)),
	}
	got := LargestItems(h, 2, &Estimator{}, false)
	want := []Item{
		{Index: 2, Kind: "read_file", Label: "read_file big.go", Path: "big.go", Tokens: got[0].Tokens},
		{Index: 4, Kind: "run_command", Label: "run_command go test ./...", Tokens: got[1].Tokens},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("LargestItems() mismatch (-want +got):\n%s", diff)
	}
	if got[0].Tokens < 1000 {
		t.Errorf("big.go counted %d tokens, want about 1000", got[0].Tokens)
	}
}

// TestFirstMessageLabel: the first message is the user's task until a compaction makes it the
// head of summaries; only then is it labelled a summary.
func TestFirstMessageLabel(t *testing.T) {
	h := []*genai.Content{user(strings.Repeat("task ", 100)), user("short")}
	for _, c := range []struct {
		summarized bool
		want       string
	}{{false, "user message"}, {true, "summary message"}} {
		if got := LargestItems(h, 1, &Estimator{}, c.summarized)[0]; got.Index != 0 || got.Label != c.want {
			t.Errorf("summarized %v: %+v, want %q", c.summarized, got, c.want)
		}
	}
}

// today is the catalogue's date; gemini-3.8-flash doubles on 2027-01-01.
var today = time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)

func TestPricesAndTotals(t *testing.T) {
	p, ok := Pricing{}.At("models/gemini-3.8-flash-preview-09-2026", today, 1000)
	if !ok || p != (Prices{Input: 0.75, CachedInput: 0.075, Output: 3.75, CacheStorage: 0.50}) {
		t.Fatalf("At() = %+v, %v; want gemini-3.8-flash prices", p, ok)
	}
	if p, _ := (Pricing{}).At("gemini-3.8-flash", time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), 1000); p.Input != 1.50 {
		t.Errorf("gemini-3.8-flash on 2027-01-01: %+v, want the doubled prices", p)
	}
	if p, _ := (Pricing{}).At("gemini-3.1-pro-preview", today, 250_000); p.Input != 4.00 {
		t.Errorf("gemini-3.1-pro-preview above 200k: %+v, want the long tier", p)
	}
	override := Pricing{Overrides: PriceTable{"gemini-3.8-flash": {Input: 1, CachedInput: 0.1, Output: 2}}}
	if p, _ := override.At("gemini-3.8-flash-001", today, 1000); p.Input != 1 {
		t.Errorf("the override is not used: %+v", p)
	}
	if p, ok := (Pricing{}).At("acme-model", today, 1000); ok || p != (Prices{}) {
		t.Errorf("an unknown model is priced: %+v, %v", p, ok)
	}
	var tot Totals
	tot.Add(CallUsage{Prompt: 1_000_000, Cached: 500_000, Candidates: 100_000, Thoughts: 100_000}, p)
	want := 0.5*0.75 + 0.5*0.075 + 0.2*3.75
	if math.Abs(tot.Cost-want) > 1e-9 || tot.InputTokens != 1_000_000 || tot.CachedTokens != 500_000 || tot.OutputTokens != 200_000 || tot.ThoughtTokens != 100_000 {
		t.Errorf("Totals = %+v, want cost %v", tot, want)
	}
	if got := tot.CostText(); got != "$1.1625" {
		t.Errorf("CostText() = %q", got)
	}
	tot.AddUnpriced(CallUsage{Prompt: 1000, Candidates: 10})
	if got := tot.CostText(); got != "$1.1625 + unknown" || tot.CostKnown() || tot.Calls != 2 {
		t.Errorf("with an unpriced call: %q, %+v", got, tot)
	}
	var unknown Totals
	unknown.AddUnpriced(CallUsage{Prompt: 1000, Candidates: 10})
	if got := unknown.CostText(); got != "unknown" {
		t.Errorf("CostText() of unpriced calls = %q, want unknown (never $0)", got)
	}
	if !tot.Capped(DefaultPolicy()) || tot.Capped(Policy{SessionTokenCap: 2_000_000}) {
		t.Error("Capped() wrong against the cap")
	}
}

// TestFlexPricing: a call served on Flex pays the catalogue's share of every rate, an override's
// too; summaries are counted apart, with their tier.
func TestFlexPricing(t *testing.T) {
	p, ok := Pricing{}.AtTier("gemini-3.8-flash", today, 1000, catalog.TierFlex)
	if !ok || p != (Prices{Input: 0.375, CachedInput: 0.0375, Output: 1.875}) {
		t.Errorf("flex: %+v, %v; want half of 0.75 / 0.075 / 3.75", p, ok)
	}
	if p, _ := (Pricing{}).AtTier("gemini-3.8-flash", today, 1000, catalog.TierStandard); p.Input != 0.75 {
		t.Errorf("standard: %+v", p)
	}
	override := Pricing{Overrides: PriceTable{"acme": {Input: 1, CachedInput: 0.1, Output: 2}}}
	if p, _ := override.AtTier("acme", today, 1000, catalog.TierFlex); p != (Prices{Input: 0.5, CachedInput: 0.05, Output: 1}) {
		t.Errorf("an override on Flex: %+v", p)
	}
	if _, ok := (Pricing{}).AtTier("acme", today, 1000, catalog.TierFlex); ok {
		t.Error("an unknown model is priced on Flex")
	}
	var tot Totals
	u := CallUsage{Prompt: 8_000, Candidates: 800}
	tot.Add(u, p)
	tot.AddSummary(u, u.Cost(p), true, true)
	tot.AddUnpriced(u)
	tot.AddSummary(u, 0, false, false)
	if got, want := tot.Summaries.Text(), "2 summaries $0.0045 + unknown (16,000 input, 0 cached; 1 on Flex)"; got != want {
		t.Errorf("summaries: %q, want %q", got, want)
	}
	if (SummaryTotals{}).Text() != "" {
		t.Error("no summary yet reads as something")
	}
}

// TestSessionCapWeighsCachedTokens: the cap counts tokens at their price, so a session that lives
// off the prefix cache runs longer than one that does not, and output and thinking count too, at
// their multiple of the input price; the dollar cap stops either.
func TestSessionCapWeighsCachedTokens(t *testing.T) {
	flash := Prices{Input: 0.30, CachedInput: 0.03, Output: 2.50}
	call := func(cached int) CallUsage { return CallUsage{Prompt: 10_000, Cached: cached, Candidates: 100} }
	tests := []struct {
		name   string
		cached int
		prices Prices
		policy Policy
		calls  int // calls until capped
		usage  *CallUsage
	}{
		{"uncached", 0, flash, Policy{SessionTokenCap: 400_000}, 37, nil},                                      // 10,000 + 100 × 8.33 per call
		{"90 % cached", 9_000, flash, Policy{SessionTokenCap: 400_000}, 147, nil},                              // 1,000 + 900 + 833
		{"unknown prices weigh a tenth and five", 9_000, Prices{}, Policy{SessionTokenCap: 400_000}, 167, nil}, // 1,900 + 500
		{"dollar cap first", 0, flash, Policy{SessionTokenCap: 400_000, MaxCostUSD: 0.01}, 4, nil},             // $0.00325 a call
		// a small prompt, long thinking: 1,000 + 8,000 × 8.33 per call
		{"thinking counts", 0, flash, Policy{SessionTokenCap: 400_000}, 6, &CallUsage{Prompt: 1_000, Thoughts: 7_900, Candidates: 100}},
	}
	for _, tt := range tests {
		var tot Totals
		n := 0
		for !tot.Capped(tt.policy) {
			u := call(tt.cached)
			if tt.usage != nil {
				u = *tt.usage
			}
			tot.Add(u, tt.prices)
			n++
		}
		if n != tt.calls {
			t.Errorf("%s: capped after %d calls, want %d (totals %+v)", tt.name, n, tt.calls, tot)
		}
	}
	old := Totals{InputTokens: 500_000} // saved before WeightedInput existed
	if !old.Capped(Policy{SessionTokenCap: 400_000}) {
		t.Error("totals without a weight are not counted at full price")
	}
	if old := (Totals{InputTokens: 300_000, OutputTokens: 100_000}); !old.Capped(Policy{SessionTokenCap: 400_000}) {
		t.Error("output saved without a weight is not counted")
	}
	bad := DefaultPolicy()
	bad.MaxCostUSD = -1
	if err := bad.Validate(); err == nil {
		t.Error("a negative maxCostUSD was accepted")
	}
}

func TestPolicyValidate(t *testing.T) {
	if err := DefaultPolicy().Validate(); err != nil {
		t.Fatalf("default policy invalid: %v", err)
	}
	p := DefaultPolicy()
	p.BlockAt = 0.5
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "blockAt") {
		t.Errorf("Validate() = %v, want an error naming blockAt", err)
	}
	if got := (Policy{ContextBudget: 24000, CompactAt: 0.7, BlockAt: 0.95}).Check(17000, 24000); got != StartCompaction {
		t.Errorf("Check(17000) = %v, want StartCompaction", got)
	}
	if got := DefaultPolicy().Check(23000, 24000); got != Block {
		t.Errorf("Check(23000) = %v, want Block", got)
	}
	if got := DefaultPolicy().Window(8000); got != 8000 {
		t.Errorf("Window(8000) = %d, want the model's limit", got)
	}
}

// BenchmarkLedgerAppend appends to and accounts histories of 1,000 and 10,000 messages; the cost
// per message must not grow with the history.
func BenchmarkLedgerAppend(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		msgs := session(n / 2)
		b.Run(fmt.Sprintf("messages=%d", n), func(b *testing.B) {
			for b.Loop() {
				var l Ledger
				l.SetFixed(1500)
				for i, c := range msgs {
					l.Append(c)
					if i%2 == 1 {
						l.Observe(1000 + i)
					}
					l.Used()
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(msgs)), "ns/message")
		})
	}
}

// TestLargestItemsOneLine: a view lists an item a line: a multi-line command, or arguments that
// run long, are labelled on one line, clipped; a path is kept whole.
func TestLargestItemsOneLine(t *testing.T) {
	long := strings.Repeat("a/", 50) + "end.go"
	todos := []any{map[string]any{"description": "Read\nthe notes", "status": "pending"}, map[string]any{"description": strings.Repeat("x", 80), "status": "pending"}}
	h := []*genai.Content{
		user("task"),
		call("1", "run_command", map[string]any{"command": "set -e\n  go vet ./...\n  go test ./..."}, ""), response("1", "run_command", "ok"),
		call("2", "write_todos", map[string]any{"todos": todos}, ""), response("2", "write_todos", "Plan saved."),
		call("3", "read_file", map[string]any{"path": long}, ""), response("3", "read_file", "x"),
	}
	for _, it := range LargestItems(h, 10, &Estimator{}, false) {
		if strings.ContainsAny(it.Label, "\n\r\t") || strings.Contains(it.Label, "  ") {
			t.Errorf("label %q is not one line", it.Label)
		}
		switch it.Kind {
		case "run_command":
			if it.Label != "run_command set -e go vet ./... go test ./..." {
				t.Errorf("command label %q", it.Label)
			}
		case "write_todos":
			if n := len([]rune(it.Label)); n != len("write_todos ")+60 || !strings.HasSuffix(it.Label, "…") {
				t.Errorf("arguments label %q (%d runes)", it.Label, n)
			}
		case "read_file":
			if it.Label != "read_file "+long {
				t.Errorf("path label %q", it.Label)
			}
		}
	}
}

// TestMissesSnapshotsStay: Totals handed out by value (an event, a subagent's figures read by its
// parent while it runs) keep their miss counts while the session goes on counting; read outside
// the lock they were taken under, they race with nothing (go test -race).
func TestMissesSnapshotsStay(t *testing.T) {
	var (
		mu  sync.Mutex
		tot Totals
	)
	tot.Misses.add(MissFirst)
	first := tot
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 500 {
			mu.Lock()
			tot.Misses.add(MissBelow)
			mu.Unlock()
		}
	}()
	for range 500 {
		mu.Lock()
		snap := tot
		mu.Unlock()
		if _, err := json.Marshal(snap); err != nil {
			t.Fatal(err)
		}
	}
	<-done
	if first.Misses.Total() != 1 || tot.Misses.Calls[MissBelow] != 500 {
		t.Errorf("the first snapshot counts %d misses, the live totals %v", first.Misses.Total(), tot.Misses.Calls)
	}
}
