package acp

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
)

// TestACPSubagent: a task call is a tool call whose content streams its subagent's progress (the
// subagent's id in _meta), whose final update is the report; _reprise/cancelSubagent stops another
// one while the prompt goes on; /context counts them apart.
func TestACPSubagent(t *testing.T) {
	ws := t.TempDir()
	hang := geminitest.Turn{Agent: "TASK-H", Delay: "30s", Parts: []geminitest.Part{{Text: "never"}}}
	model := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{
		{Parts: []geminitest.Part{
			{FunctionCall: &geminitest.FunctionCall{Name: "task", Args: map[string]any{"description": "list the files", "prompt": "TASK-L list"}}},
			{FunctionCall: &geminitest.FunctionCall{Name: "task", Args: map[string]any{"description": "wait forever", "prompt": "TASK-H wait"}}},
		}},
		{Agent: "TASK-L", Parts: []geminitest.Part{{FunctionCall: &geminitest.FunctionCall{Name: "list_files", Args: map[string]any{"path": "."}}}}},
		{Agent: "TASK-L", Parts: []geminitest.Part{{Text: "REPORT-L: one file"}}},
		hang,
		text("Both answered."),
	}})
	t.Cleanup(model.Close)
	e := start(t, model, ws, t.TempDir(), true)
	ctx := t.Context()
	sess := e.open(sdk.ClientCapabilities{})
	done := make(chan error, 1)
	go func() {
		res, err := e.conn.Prompt(ctx, prompt(sess, "Look around."))
		if err == nil && res.StopReason != sdk.StopReasonEndTurn {
			err = fmt.Errorf("stop %s", res.StopReason)
		}
		done <- err
	}()
	// The waiting one is told running; its id comes in _meta.
	var hangID string
	e.c.waitFor(t, "the hanging subagent", func(u sdk.SessionUpdate) bool {
		if u.ToolCallUpdate == nil || u.ToolCallUpdate.Meta == nil {
			return false
		}
		sa, _ := u.ToolCallUpdate.Meta["reprise"].(map[string]any)["subagent"].(map[string]any)
		if sa == nil || sa["status"] != "running" || len(u.ToolCallUpdate.Content) == 0 {
			return false
		}
		if tc := u.ToolCallUpdate.Content[0].Content; tc == nil || tc.Content.Text == nil || !strings.HasPrefix(tc.Content.Text.Text, "Subagent running on ") {
			return false
		}
		for _, n := range e.c.all() {
			if c := n.Update.ToolCall; c != nil && c.ToolCallId == u.ToolCallUpdate.ToolCallId && c.Title == "Subagent: wait forever" {
				hangID, _ = sa["subagentId"].(string)
				return true
			}
		}
		return false
	})
	raw, err := e.conn.CallExtension(ctx, MethodCancelSubagent, map[string]any{"sessionId": sess, "subagentId": hangID})
	var out map[string]bool
	if err != nil || json.Unmarshal(raw, &out) != nil || !out["cancelled"] {
		t.Fatalf("%s: %s, %v", MethodCancelSubagent, raw, err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	e.c.waitFor(t, "the report", func(u sdk.SessionUpdate) bool {
		c := u.ToolCallUpdate
		return c != nil && c.Status != nil && *c.Status == sdk.ToolCallStatusCompleted && len(c.Content) > 0 &&
			c.Content[0].Content != nil && strings.HasPrefix(c.Content[0].Content.Content.Text.Text, "REPORT-L: one file")
	})
	e.c.waitFor(t, "the stopped one", func(u sdk.SessionUpdate) bool {
		c := u.ToolCallUpdate
		return c != nil && c.Status != nil && *c.Status == sdk.ToolCallStatusFailed && len(c.Content) > 0 &&
			c.Content[0].Content != nil && strings.Contains(c.Content[0].Content.Content.Text.Text, "the user stopped this subagent")
	})
	from := len(e.c.all())
	if _, err := e.conn.Prompt(ctx, prompt(sess, "/context")); err != nil {
		t.Fatal(err)
	}
	if got := messageText(e.c.all(), from); !strings.Contains(got, "Subagents: 2 subagents, 2 calls $") {
		t.Errorf("/context = %q", got)
	}
}
