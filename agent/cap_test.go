package agent

import (
	"testing"

	"github.com/reprise-dev/reprise/contextwin"
)

// TestDollarCapStopsTheSession: with maxCostUSD set, the session stops as capped once its cost
// reaches it, after the call that crossed it, and stays capped.
func TestDollarCapStopsTheSession(t *testing.T) {
	p := contextwin.DefaultPolicy()
	p.MaxCostUSD = 1e-7 // crossed by the first call
	f := newFixture(t, fixtureOpts{policy: p, files: map[string]string{"a.txt": "a\n"}},
		callTurn("read_file", map[string]any{"path": "a.txt"}, ""), textTurn("never reached"))
	evs, err := f.run(t.Context(), "read a")
	if err != nil {
		t.Fatal(err)
	}
	if end := lastEnd(t, evs); end.StopReason != StopCapped || end.Totals.Cost < p.MaxCostUSD || end.Calls != 1 {
		t.Errorf("turn end %+v, want capped after one call", end)
	}
	evs, err = f.run(t.Context(), "go on")
	if err != nil {
		t.Fatal(err)
	}
	if end := lastEnd(t, evs); end.StopReason != StopCapped || end.Calls != 1 {
		t.Errorf("second turn end %+v, want capped at once", end)
	}
}
