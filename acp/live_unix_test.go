//go:build unix

package acp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
)

// TestACPLiveOutput: while a command runs, the client gets tool_call_update in_progress whose
// content is the output so far (elapsed time in _meta), and the completed update replaces it with
// the result. The command waits for the file "go", created once the output was seen.
func TestACPLiveOutput(t *testing.T) {
	ws := t.TempDir()
	command := "echo tick-1; while [ ! -f go ]; do sleep 0.05; done; echo tick-2"
	model := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{call("run_command", map[string]any{"command": command, "timeout_s": 60}), text("ran")}})
	t.Cleanup(model.Close)
	e := start(t, model, ws, t.TempDir(), true)
	id := e.open(sdk.ClientCapabilities{})
	e.c.answers = []string{optionAllowOnce}
	done := make(chan error, 1)
	go func() { // ends when the prompt does: the command is released below, or the test's context ends
		_, err := e.conn.Prompt(t.Context(), prompt(id, "tick"))
		done <- err
	}()
	content := func(u *sdk.SessionToolCallUpdate) string {
		if len(u.Content) == 0 || u.Content[0].Content == nil || u.Content[0].Content.Content.Text == nil {
			return ""
		}
		return u.Content[0].Content.Content.Text.Text
	}
	live := e.c.waitFor(t, "a live update", func(u sdk.SessionUpdate) bool {
		up := u.ToolCallUpdate
		return up != nil && up.Status != nil && *up.Status == sdk.ToolCallStatusInProgress && content(up) == "tick-1\n"
	}).ToolCallUpdate
	if err := os.WriteFile(filepath.Join(ws, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	r, _ := live.Meta["reprise"].(map[string]any)
	if _, ok := r["elapsedMs"]; !ok || r["bytes"] != float64(len("tick-1\n")) || live.RawOutput != nil {
		t.Errorf("live update: _meta %v, rawOutput %v", live.Meta, live.RawOutput)
	}
	final := e.c.waitFor(t, "the completed update", func(u sdk.SessionUpdate) bool {
		up := u.ToolCallUpdate
		return up != nil && up.Status != nil && *up.Status == sdk.ToolCallStatusCompleted
	}).ToolCallUpdate
	if got := content(final); got != "tick-1\ntick-2\nexit status 0" || final.ToolCallId != live.ToolCallId {
		t.Errorf("completed content %q (call %s, live %s)", got, final.ToolCallId, live.ToolCallId)
	}
	if strings.Contains(messageText(e.c.all(), 0), "tick") {
		t.Error("the output reached the agent's message")
	}
}
