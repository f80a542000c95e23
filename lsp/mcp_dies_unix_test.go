//go:build unix

package lsp

import (
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reprise-dev/reprise/agent/mcp/mcptest"
	"github.com/reprise-dev/reprise/lsp/lsptest"
)

// TestMCPServerDies: a server killed mid-session turns its tools into errors the model reads, the
// user is told once, and the session goes on.
func TestMCPServerDies(t *testing.T) {
	e := newEnv(t, envOpts{
		editor: lsptest.Options{Experimental: true, Approve: answerMCP(true), InitializationOptions: map[string]any{
			"mcpServers": map[string]any{"tools": mcptest.JSON(nil)},
		}},
	},
		call("tools__pid", map[string]any{}), text("got it"),
		call("tools__echo", map[string]any{"text": "still there?"}), text("it died"),
	)
	id := e.ask("pid", "")
	e.turnEnd(id)
	pid, err := strconv.Atoi(e.updates(id, UpdateToolCallUpdate)[0].RawOutput.Output)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The manager notices the death when the connection to the child ends.
	deadline := time.Now().Add(10 * time.Second)
	for {
		var st mcpResult
		if err := e.ed.Execute(e.ctx, CommandMCP, nil, &st); err != nil {
			t.Fatal(err)
		}
		if st.Servers[0].State == MCPStateFailed || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	e.ask("again", id)
	if end := e.turnEnd(id); end.Update.StopReason != "end_turn" {
		t.Fatalf("turn ended %+v", end.Update)
	}
	ups := e.updates(id, UpdateToolCallUpdate)
	if o := ups[len(ups)-1]; o.Status != "failed" || !strings.Contains(o.RawOutput.Output, "not running") {
		t.Errorf("a call to the dead server = %+v %q", o.Status, o.RawOutput.Output)
	}
	warned := 0
	for _, raw := range e.ed.Notifications("window/showMessage") {
		if strings.Contains(string(raw), `MCP server \"tools\"`) {
			warned++
		}
	}
	if warned != 1 {
		t.Errorf("the user was told %d times that the server died, want once", warned)
	}
}
