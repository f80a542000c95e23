package acp

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/contextwin"
)

func TestUsageCarriesCacheHits(t *testing.T) {
	u := agent.Usage{Used: 100, Size: 1000, Totals: contextwin.Totals{CacheExpected: 20000, CacheReported: 11600}}
	got := usage(u).UsageUpdate.Meta
	want := map[string]any{"reprise": map[string]any{"cache": contextwin.CacheHits{Expected: 20000, Reported: 11600, HitRate: 0.58}}}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("_meta (-got +want):\n%s", diff)
	}
	md := contextMarkdown(agent.Report{Usage: u})
	if want := "Cache: 11.6k of 20k expected cached tokens reported (58 % of the expected hits)"; !strings.Contains(md, want) {
		t.Errorf("/context has no %q:\n%s", want, md)
	}
	if m := usage(agent.Usage{Size: 1000}).UsageUpdate.Meta; m != nil {
		t.Errorf("_meta %v before any call expected cached tokens", m)
	}
	// The uncached calls by cause, with the model's own minimum.
	u.Totals.Misses = contextwin.Misses{Calls: map[contextwin.MissCause]int{contextwin.MissFirst: 1, contextwin.MissBelow: 2}}
	md = contextMarkdown(agent.Report{Usage: u, Model: "gemini-3.8-flash"})
	if want := "\n3 uncached calls: 1 first call, 2 under the 4,096-token minimum\n"; !strings.Contains(md, want) {
		t.Errorf("/context has no %q:\n%s", want, md)
	}
}

// TestUsageOfALocalModel: a local model's calls cost their time: no cost is sent (a client would
// show $0), and the time rides in _meta.reprise.local.
func TestUsageOfALocalModel(t *testing.T) {
	u := agent.Usage{Used: 100, Size: 16384, Local: true, Totals: contextwin.Totals{Calls: 2, Local: 2, Time: contextwin.TimeTotals{Millis: 41_400}}}
	up := usage(u).UsageUpdate
	if up.Cost != nil {
		t.Errorf("cost %+v for a local model", up.Cost)
	}
	want := map[string]any{"reprise": map[string]any{"local": map[string]any{"millis": int64(41_400), "text": "local · 41 s"}}}
	if diff := cmp.Diff(up.Meta, want); diff != "" {
		t.Errorf("_meta (-got +want):\n%s", diff)
	}
}

// TestWorkspaceMapRow: /context has the map as a row of its own only when the head has one.
func TestWorkspaceMapRow(t *testing.T) {
	u := agent.Usage{Used: 6000, Size: 24000, Breakdown: contextwin.Breakdown{SystemPrompt: 1700, WorkspaceMap: 2100, Tools: 996, Messages: 1204}}
	if md := contextMarkdown(agent.Report{Usage: u}); !strings.Contains(md, "| Workspace map | 2.1k | 8.8% |\n| System tools |") {
		t.Errorf("no map row before the tools:\n%s", md)
	}
	u.Breakdown.WorkspaceMap = 0
	if md := contextMarkdown(agent.Report{Usage: u}); strings.Contains(md, "Workspace map") {
		t.Errorf("a map row without a map:\n%s", md)
	}
}
