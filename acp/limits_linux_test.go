package acp

import (
	"os"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/agent/sandbox"
)

// TestACPSandboxNoProcessLimit: as root without a pids cgroup, the client's user is told once,
// as the other sandbox notices are, that commands get no process limit; an ordinary user keeps
// RLIMIT_NPROC and is told nothing.
func TestACPSandboxNoProcessLimit(t *testing.T) {
	t.Setenv(sandbox.NoCgroupEnv, "simulated: read-only cgroups")
	model := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{text("done")}})
	t.Cleanup(model.Close)
	e := start(t, model, t.TempDir(), t.TempDir(), true)
	id := e.open(sdk.ClientCapabilities{})
	if _, err := e.conn.Prompt(t.Context(), prompt(id, "hello")); err != nil {
		t.Fatal(err)
	}
	second, err := e.conn.NewSession(t.Context(), sdk.NewSessionRequest{Cwd: e.ws, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	// The notice comes before a session's commands: once both sessions' are there, all are in.
	e.c.waitFor(t, "both sessions' commands", func(sdk.SessionUpdate) bool {
		seen := map[sdk.SessionId]bool{}
		for _, n := range e.c.all() {
			if n.Update.AvailableCommandsUpdate != nil {
				seen[n.SessionId] = true
			}
		}
		return seen[id] && seen[second.SessionId]
	})
	want := 0
	if os.Getuid() == 0 {
		want = 1
	}
	var told int
	for _, n := range e.c.all() {
		if m := n.Update.AgentMessageChunk; m != nil && m.Content.Text != nil && strings.Contains(m.Content.Text.Text, "without a process limit here") {
			told++
		}
	}
	if told != want {
		t.Errorf("told %d times that commands get no process limit (uid %d), want %d", told, os.Getuid(), want)
	}
}
