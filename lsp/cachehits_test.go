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
