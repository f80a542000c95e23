package acp

import (
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
	if _, err := e.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	sess, err := e.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: ws, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := e.conn.Prompt(ctx, prompt(sess.SessionId, "Plan the fix.")); err != nil || res.StopReason != sdk.StopReasonEndTurn {
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
