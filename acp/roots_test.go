package acp

import (
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
)

// TestAttackACPBroadWorkspace: session/new with cwd / (or the home directory) made the whole disk
// the workspace, with no warning. session/new and session/load refuse such a cwd with an error
// that says why and how to allow it; an agent started with --allow-broad-workspace takes it.
func TestAttackACPBroadWorkspace(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	model := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{text("done")}})
	t.Cleanup(model.Close)
	e := start(t, model, "/", t.TempDir(), true)
	ctx := t.Context()
	if _, err := e.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	for cwd, why := range map[string]string{"/": "is the root of the file system", home: "is your home directory", "/etc": "is a system directory"} {
		_, err := e.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: cwd, McpServers: []sdk.McpServer{}})
		if err == nil || !strings.Contains(err.Error(), why) || !strings.Contains(err.Error(), "--allow-broad-workspace") {
			t.Errorf("session/new in %s: %v, want a refusal saying it %s", cwd, err, why)
		}
		_, err = e.conn.LoadSession(ctx, sdk.LoadSessionRequest{Cwd: cwd, SessionId: "20261201-000000-abcdef", McpServers: []sdk.McpServer{}})
		if err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("session/load in %s: %v, want a refusal saying it %s", cwd, err, why)
		}
	}
	if n := len(model.Requests()); n != 0 {
		t.Errorf("the model was reached %d times", n)
	}

	allowed := startModel(t, model, home, t.TempDir(), true, "gemini-3.8-flash", func(o *Options) { o.AllowBroadWorkspace = true })
	id := allowed.open(sdk.ClientCapabilities{})
	if _, err := allowed.conn.Prompt(ctx, prompt(id, "hello")); err != nil {
		t.Errorf("with --allow-broad-workspace, a prompt in the home directory: %v", err)
	}
}
