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
