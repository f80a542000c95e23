package lsp

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/contextwin"
)

func TestCacheHitsOnTheWire(t *testing.T) {
	u := agent.Usage{Used: 100, Size: 1000, Totals: contextwin.Totals{InputTokens: 30000, CachedTokens: 11600, CacheExpected: 20000, CacheReported: 11600}}
	p := usageParams("s", u)
	if diff := cmp.Diff(p.Cache, &contextwin.CacheHits{Expected: 20000, Reported: 11600, HitRate: 0.58}); diff != "" {
		t.Errorf("cache (-got +want):\n%s", diff)
	}
	text := renderContext(contextResult{contextUsageParams: p})
	if want := "Cache: 11.6k of 20k expected cached tokens reported (58 % of the expected hits)"; !strings.Contains(text, want) {
		t.Errorf("the context view has no %q:\n%s", want, text)
	}
	if p := usageParams("s", agent.Usage{Size: 1000}); p.Cache != nil {
		t.Errorf("cache %+v before any call expected cached tokens", p.Cache)
	}
	end := &agent.TurnEnd{StopReason: agent.StopEndTurn, Calls: 3, Totals: u.Totals}
	if got := meterTotals(end); !strings.HasSuffix(got, " · cache: 58 % of the expected hits") {
		t.Errorf("meter totals %q do not end with the hit rate", got)
	}
}

// TestMissesOnTheWire: the uncached calls, by cause, in the usage's totals and the context view.
func TestMissesOnTheWire(t *testing.T) {
	misses := contextwin.Misses{Calls: map[contextwin.MissCause]int{contextwin.MissFirst: 1, contextwin.MissRewritten: 2, contextwin.MissBelow: 1}}
	u := agent.Usage{Used: 100, Size: 1000, Totals: contextwin.Totals{Calls: 9, Misses: misses}}
	p := usageParams("s", u)
	want := &missTotals{Calls: misses.Calls, Text: "4 uncached calls: 1 first call, 2 after a clearing or summary, 1 under the cache minimum"}
	if diff := cmp.Diff(p.Totals.Misses, want); diff != "" {
		t.Errorf("misses (-got +want):\n%s", diff)
	}
	if text := renderContext(contextResult{contextUsageParams: p}); !strings.Contains(text, "\n"+want.Text+"\n") {
		t.Errorf("the context view has no %q:\n%s", want.Text, text)
	}
	if p := usageParams("s", agent.Usage{Size: 1000}); p.Totals.Misses != nil {
		t.Errorf("misses %+v before any call", p.Totals.Misses)
	}
}

// TestWorkspaceMapRow: the context view has the map as its own row, between the instructions and
// the tools, only when the head has one.
func TestWorkspaceMapRow(t *testing.T) {
	u := agent.Usage{Used: 6000, Size: 24000, Breakdown: contextwin.Breakdown{SystemPrompt: 1700, CustomInstructions: 40, WorkspaceMap: 2100, Tools: 996, Messages: 1164}}
	text := renderContext(contextResult{contextUsageParams: usageParams("s", u)})
	i, j, k := strings.Index(text, "Custom instructions"), strings.Index(text, "Workspace map"), strings.Index(text, "System tools")
	if i < 0 || j < i || k < j || !strings.Contains(text, "Workspace map           2.1k    8.8%") {
		t.Errorf("the view lacks the map's row in its place:\n%s", text)
	}
	u.Breakdown.WorkspaceMap = 0
	if text := renderContext(contextResult{contextUsageParams: usageParams("s", u)}); strings.Contains(text, "Workspace map") {
		t.Errorf("a map row without a map:\n%s", text)
	}
}
