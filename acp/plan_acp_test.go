package acp

import (
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/google/go-cmp/cmp"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
)

// TestACPPlanOfTheAgent: a plan the agent writes reaches the client as ACP's own plan update, the
// item in progress first in priority, a cancelled one shown completed and saying so; the call
// itself is a tool call of kind think.
func TestACPPlanOfTheAgent(t *testing.T) {
	ws := t.TempDir()
	todos := []any{
		map[string]any{"description": "Read the handler", "status": "completed"},
		map[string]any{"description": "Fix the threshold", "status": "in_progress"},
		map[string]any{"description": "Rewrite the module", "status": "cancelled"},
		map[string]any{"description": "Run the tests", "status": "pending"},
	}
	model := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{call("write_todos", map[string]any{"todos": todos}), text("Planned.")}})
	t.Cleanup(model.Close)
	e := start(t, model, ws, t.TempDir(), true)
	ctx := t.Context()
	sess := e.open(sdk.ClientCapabilities{})
	if res, err := e.conn.Prompt(ctx, prompt(sess, "Plan the fix.")); err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt: %+v, %v", res, err)
	}
	plan := e.c.waitFor(t, "plan", func(u sdk.SessionUpdate) bool { return u.Plan != nil })
	want := []sdk.PlanEntry{
		{Content: "Read the handler", Priority: sdk.PlanEntryPriorityMedium, Status: sdk.PlanEntryStatusCompleted},
		{Content: "Fix the threshold", Priority: sdk.PlanEntryPriorityHigh, Status: sdk.PlanEntryStatusInProgress},
		{Content: "Rewrite the module (cancelled)", Priority: sdk.PlanEntryPriorityMedium, Status: sdk.PlanEntryStatusCompleted},
		{Content: "Run the tests", Priority: sdk.PlanEntryPriorityMedium, Status: sdk.PlanEntryStatusPending},
	}
	if d := cmp.Diff(want, plan.Plan.Entries); d != "" {
		t.Errorf("plan entries (-want +got):\n%s", d)
	}
	tc := e.c.waitFor(t, "tool_call", func(u sdk.SessionUpdate) bool { return u.ToolCall != nil })
	if tc.ToolCall.Kind != sdk.ToolKindThink || tc.ToolCall.Title != "Update the plan (4 items)" {
		t.Errorf("tool call %+v", tc.ToolCall)
	}
}

// TestACPNotesListedAndForgotten: /context lists the plan and the agent's notes; /forget KEY
// deletes one and says so, the model is told at its next call; an unknown key or none deletes
// nothing and says why.
func TestACPNotesListedAndForgotten(t *testing.T) {
	ws := t.TempDir()
	model := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{
		call("save_note", map[string]any{"key": "rule", "value": "dès 50 unités"}),
		call("save_note", map[string]any{"key": "error", "value": "got 0, want 0.05"}),
		text("Noted."), text("Going on.")}})
	t.Cleanup(model.Close)
	e := start(t, model, ws, t.TempDir(), true)
	ctx := t.Context()
	sess := e.open(sdk.ClientCapabilities{})
	say := func(text string) string {
		from := len(e.c.all())
		if res, err := e.conn.Prompt(ctx, prompt(sess, text)); err != nil || res.StopReason != sdk.StopReasonEndTurn {
			t.Fatalf("%s: %+v, %v", text, res, err)
		}
		return messageText(e.c.all(), from)
	}
	say("Keep the rule.")
	if got := say("/context"); !strings.Contains(got, "**Notes** (restated after each compaction; /forget KEY deletes one)\n\n  - rule: dès 50 unités\n  - error: got 0, want 0.05\n") {
		t.Errorf("/context = %q", got)
	}
	for text, want := range map[string]string{
		"/forget nope": `Nothing deleted: there is no note "nope".`,
		"/forget":      "/forget takes the key of a note: /context lists them.",
		"/forget rule": `Note "rule" deleted; the agent is told at its next call. 1 left.`,
	} {
		if got := say(text); got != want {
			t.Errorf("%s = %q, want %q", text, got, want)
		}
	}
	say("Go on.")
	reqs := model.Requests()
	last := reqs[len(reqs)-1].Contents
	if got := last[len(last)-1].Parts; len(got) != 2 || got[1].Text != `[The user deleted your note "rule": do not rely on its value.]` {
		t.Errorf("the last user message: %+v", got)
	}
}
