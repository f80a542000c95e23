package acp

import (
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
)

// TestACPRoutedModel: a session on a retired model that the API answers with another hears it
// once, as an agent message, and its usage is priced as the model that answered.
func TestACPRoutedModel(t *testing.T) {
	u := &geminitest.Usage{Prompt: 100_000, Candidates: 10_000}
	model := geminitest.New(geminitest.Script{
		Routes: map[string]geminitest.Route{"gemini-2.5-pro": {To: "gemini-3.8-flash"}},
		Turns:  []geminitest.Turn{{Parts: []geminitest.Part{{Text: "one"}}, Usage: u}, {Parts: []geminitest.Part{{Text: "two"}}, Usage: u}},
	})
	t.Cleanup(model.Close)
	e := startModel(t, model, t.TempDir(), t.TempDir(), true, "gemini-2.5-pro")
	id := e.open(sdk.ClientCapabilities{})
	for _, p := range []string{"first", "second"} {
		if res, err := e.conn.Prompt(t.Context(), prompt(id, p)); err != nil || res.StopReason != sdk.StopReasonEndTurn {
			t.Fatalf("prompt %s: %+v %v", p, res, err)
		}
	}
	text := messageText(e.c.all(), 0)
	if n := strings.Count(text, "the API answered with gemini-3.8-flash"); n != 1 || !strings.Contains(text, "[Reprise: warning: gemini-2.5-pro is retired") {
		t.Errorf("%d routing warnings in %q, want one", n, text)
	}
	last := e.c.waitFor(t, "usage_update priced", func(u sdk.SessionUpdate) bool {
		return u.UsageUpdate != nil && u.UsageUpdate.Cost != nil && u.UsageUpdate.Cost.Amount > 0.2
	})
	if c := last.UsageUpdate.Cost.Amount; c < 0.2249 || c > 0.2251 { // 2 × (100,000 × $0.75 + 10,000 × $3.75) / 1M
		t.Errorf("cost %v, want $0.225 at gemini-3.8-flash's prices", c)
	}
}

// TestACPUnknownModelCost: a model the catalogue lacks sends its usage without a cost, which
// ACP allows, rather than $0.
func TestACPUnknownModelCost(t *testing.T) {
	model := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{text("hi")}})
	t.Cleanup(model.Close)
	e := startModel(t, model, t.TempDir(), t.TempDir(), true, "gemini-9-experimental")
	id := e.open(sdk.ClientCapabilities{})
	if res, err := e.conn.Prompt(t.Context(), prompt(id, "hello")); err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	e.c.waitFor(t, "usage_update after the call", func(u sdk.SessionUpdate) bool { return u.UsageUpdate != nil && u.UsageUpdate.Used > 0 })
	for _, n := range e.c.all() {
		if u := n.Update.UsageUpdate; u != nil && u.Cost != nil {
			t.Errorf("usage_update with a cost %+v for an unpriced model", u.Cost)
		}
	}
}
