package gemini

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// TestFlexRequest: a request for the Flex tier goes out as serviceTier "flex", is served on Flex
// by a model that offers it and billed at half its standard price; a model that does not offer
// it serves it on the standard tier, and the response says so.
func TestFlexRequest(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{
				{Parts: []geminitest.Part{{Text: "summary on flex"}}},
				{Parts: []geminitest.Part{{Text: "summary on standard"}}},
			}})
			defer srv.Close()
			flash := newClient(t, srv)
			got := run(t.Context(), flash, &Request{Contents: userTurn("summarize"), Stream: mode.stream, Tier: catalog.TierFlex})
			if got.err != nil || got.done.Tier != catalog.TierFlex {
				t.Fatalf("flash on flex: %v, served %q", got.err, got.done.Tier)
			}
			argon := newClient(t, srv, func(c *Config) { c.Model = "gemini-4-argon" })
			got = run(t.Context(), argon, &Request{Contents: userTurn("summarize"), Stream: mode.stream, Tier: catalog.TierFlex})
			if got.err != nil || got.done.Tier != catalog.TierStandard {
				t.Fatalf("argon, which the catalogue says has no flex: %v, served %q", got.err, got.done.Tier)
			}
			reqs := srv.Requests()
			for i, r := range reqs {
				if r.Tier != "flex" || !strings.Contains(string(r.Body), `"serviceTier":"flex"`) {
					t.Errorf("request %d asked for tier %q: %s", i, r.Tier, r.Body)
				}
			}
			if reqs[0].ServedTier != catalog.TierFlex || reqs[1].ServedTier != catalog.TierStandard {
				t.Errorf("served %q, %q", reqs[0].ServedTier, reqs[1].ServedTier)
			}
			u := reqs[0].Usage
			m, _ := catalog.Builtin().Lookup("gemini-3.8-flash")
			r, _ := m.RatesAt(time.Now(), u.Prompt)
			standard := (float64(u.Prompt)*r.Input + float64(u.Candidates)*r.Output) / 1e6
			if !reqs[0].Priced || math.Abs(reqs[0].Cost-standard/2) > 1e-12 {
				t.Errorf("flex billed $%g, want half of $%g", reqs[0].Cost, standard)
			}
			checkRequests(t, srv)
		})
	}
}

// TestFlexShedIsNotRetried: a shed Flex request (429 RESOURCE_EXHAUSTED, or 503) fails at once
// with an error that says it was shed: the caller's fall back to the standard tier is the retry,
// not another wait on Flex. A standard request is still retried.
func TestFlexShedIsNotRetried(t *testing.T) {
	for _, status := range []int{429, 503} {
		srv := geminitest.New(geminitest.Script{Flex: geminitest.Flex{Shed: 1, Status: status}, Turns: []geminitest.Turn{
			{Parts: []geminitest.Part{{Text: "on standard"}}},
		}})
		c := newClient(t, srv)
		got := run(t.Context(), c, &Request{Contents: userTurn("summarize"), Tier: catalog.TierFlex})
		if !IsShed(got.err) || len(got.retries) != 0 {
			t.Errorf("%d: err %v, %d retries; want a shed error and none", status, got.err, len(got.retries))
		}
		if srv.Pending() != 1 {
			t.Errorf("%d: the shed request took a turn", status)
		}
		got = run(t.Context(), c, &Request{Contents: userTurn("summarize")})
		if got.err != nil || got.done.Tier != catalog.TierStandard {
			t.Errorf("%d: the standard request after it: %v", status, got.err)
		}
		if d, unpriced := srv.Billed(); d <= 0 || unpriced != 0 {
			t.Errorf("%d: billed $%g, %d unpriced: only the standard call is billed", status, d, unpriced)
		}
		srv.Close()
	}
}
