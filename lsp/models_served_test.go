package lsp

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/lsp/lsptest"
)

// showMessages are the window/showMessage texts the editor received that contain sub.
func (e *env) showMessages(sub string) []string {
	var out []string
	for _, raw := range e.ed.Notifications("window/showMessage") {
		var p struct {
			Type    int    `json:"type"`
			Message string `json:"message"`
		}
		if json.Unmarshal(raw, &p) == nil && strings.Contains(p.Message, sub) {
			out = append(out, p.Message)
		}
	}
	return out
}

// TestRoutedModelWarnsOnce: a session on a retired model that the API answers with another is
// told, once, through window/showMessage, which model answered; its totals are priced as that
// model, and the context view names it.
func TestRoutedModelWarnsOnce(t *testing.T) {
	usage := &geminitest.Usage{Prompt: 100_000, Candidates: 10_000}
	e := newEnv(t, envOpts{
		editor: lsptest.Options{Experimental: true, InitializationOptions: map[string]any{"model": "gemini-2.5-pro"}},
		routes: map[string]geminitest.Route{"gemini-2.5-pro": {To: "gemini-3.8-flash"}},
	}, geminitest.Turn{Parts: []geminitest.Part{{Text: "one"}}, Usage: usage}, geminitest.Turn{Parts: []geminitest.Part{{Text: "two"}}, Usage: usage})
	id := e.ask("first", "")
	if end := e.turnEnd(id); end.Update.StopReason != "end_turn" {
		t.Fatalf("first turn: %+v", end.Update)
	}
	e.ask("second", id)
	end := e.turnEnd(id)
	if end.Update.StopReason != "end_turn" {
		t.Fatalf("second turn: %+v", end.Update)
	}
	routed := e.showMessages("the API answered with gemini-3.8-flash")
	if len(routed) != 1 || !strings.Contains(routed[0], "gemini-2.5-pro is retired") {
		t.Errorf("routing messages %q, want one", routed)
	}
	if n := len(e.showMessages("gemini-2.5-pro was shut down on 2026-12-01")); n != 1 {
		t.Errorf("%d retirement messages, want one", n)
	}
	cost := end.Update.Turn.Totals.Cost
	if cost.Unknown || cost.Text != "$0.2250" { // 2 × (100,000 × $0.75 + 10,000 × $3.75) / 1M
		t.Errorf("turn cost %+v, want $0.2250 at gemini-3.8-flash's prices", cost)
	}
	var view contextResult
	if err := e.ed.Execute(e.ctx, CommandContext, SessionArgs{SessionID: id}, &view); err != nil {
		t.Fatal(err)
	}
	if view.Model != "gemini-2.5-pro" || view.ServedModel != "gemini-3.8-flash" {
		t.Errorf("context: model %q, served %q", view.Model, view.ServedModel)
	}
}

// TestRetiredModelEndsTheTurn: a retired model the API no longer serves ends the turn at its
// first call, with an error that names the replacement.
func TestRetiredModelEndsTheTurn(t *testing.T) {
	e := newEnv(t, envOpts{editor: lsptest.Options{Experimental: true, InitializationOptions: map[string]any{"model": "gemini-2.5-flash"}}}, text("never"))
	id := e.ask("hello", "")
	end := e.turnEnd(id)
	if end.Update.StopReason != "error" || !strings.Contains(end.Update.Error, "model gemini-2.5-flash is not available") || !strings.Contains(end.Update.Error, "use gemini-3.5-flash-lite") {
		t.Errorf("turn end %+v", end.Update)
	}
}

// TestUnknownModelCost: a model the catalogue lacks shows its cost as unknown in the meter's
// totals, never $0.
func TestUnknownModelCost(t *testing.T) {
	e := newEnv(t, envOpts{editor: lsptest.Options{Experimental: true, InitializationOptions: map[string]any{"model": "gemini-9-experimental"}}}, text("hi"))
	id := e.ask("hello", "")
	end := e.turnEnd(id)
	if c := end.Update.Turn.Totals.Cost; !c.Unknown || c.Text != "unknown" {
		t.Errorf("turn cost %+v, want unknown", c)
	}
	us := e.usages(id)
	if len(us) == 0 || !us[len(us)-1].Totals.Cost.Unknown || us[len(us)-1].Totals.Cost.Text != "unknown" {
		t.Errorf("last contextUsage totals %+v, want the cost unknown", us)
	}
}

// TestThinkingSetting: the thinking setting goes with every request of sessions created
// afterwards as the model takes it; a level the model does not accept is refused as a whole, with
// the levels it accepts.
func TestThinkingSetting(t *testing.T) {
	e := newEnv(t, envOpts{editor: lsptest.Options{Experimental: true, InitializationOptions: map[string]any{"thinking": "high"}}},
		geminitest.Turn{Parts: []geminitest.Part{{FunctionCall: &geminitest.FunctionCall{Name: "list_files", Args: map[string]any{}}, ThoughtSignature: "c2ln"}}},
		text("done"))
	id := e.ask("hello", "")
	if end := e.turnEnd(id); end.Update.StopReason != "end_turn" {
		t.Fatalf("turn %+v", end.Update)
	}
	for _, r := range e.srv.Requests() {
		if r.Method == "POST" && (r.ThinkingLevel != "HIGH" || r.ThinkingBudget != nil) {
			t.Errorf("request sent level %q, budget %v; want HIGH alone", r.ThinkingLevel, r.ThinkingBudget)
		}
	}

	bad := newEnv(t, envOpts{editor: lsptest.Options{Experimental: true, InitializationOptions: map[string]any{"thinking": "minimal"}}}, text("hi"))
	id = bad.ask("hello", "")
	bad.turnEnd(id)
	if got := bad.showMessages("settings not applied: gemini-3.8-flash does not accept thinking level minimal: it accepts low, medium, high"); len(got) != 1 {
		t.Errorf("warnings %q, want one listing the accepted levels", bad.showMessages(""))
	}
	for _, r := range bad.srv.Requests() {
		if r.Method == "POST" && (r.ThinkingLevel != "" || r.ThinkingBudget != nil) {
			t.Errorf("a refused setting was sent: level %q, budget %v", r.ThinkingLevel, r.ThinkingBudget)
		}
	}
}
