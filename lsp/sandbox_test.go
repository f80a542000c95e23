package lsp

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/reprise-dev/reprise/agent/sandbox"
	"github.com/reprise-dev/reprise/contextwin"
	"github.com/reprise-dev/reprise/lsp/lsptest"
)

// TestSandboxUnavailableAsksAndTellsOnce: on a machine without a sandbox, an allowlisted command
// is put to the user with the reason, and the user is told why once per connection, not per session.
func TestSandboxUnavailableAsksAndTellsOnce(t *testing.T) {
	t.Setenv(sandbox.UnavailableEnv, "simulated old kernel")
	var mu sync.Mutex
	var asked []string
	e := newEnv(t, envOpts{editor: lsptest.Options{Experimental: true, Approve: func(params json.RawMessage) any {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, string(params))
		return nil // rejected
	}}},
		call("run_command", map[string]any{"command": "go version"}), text("refused"),
		call("run_command", map[string]any{"command": "go version"}), text("refused again"))
	for _, prompt := range []string{"one", "two"} {
		id := e.ask(prompt, "")
		if end := e.turnEnd(id); end.Update.StopReason != "end_turn" {
			t.Fatalf("turn %q ended with %+v", prompt, end.Update)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 2 || !strings.Contains(asked[0], "cannot be sandboxed") {
		t.Errorf("approvals asked: %q, want two saying the sandbox is missing", asked)
	}
	var told int
	for _, raw := range e.ed.Notifications("window/showMessage") {
		if strings.Contains(string(raw), "cannot be sandboxed") {
			told++
		}
	}
	if told != 1 {
		t.Errorf("the user was told %d times that commands cannot be sandboxed, want once", told)
	}
}

func TestSandboxSettings(t *testing.T) {
	on, off, bad := "workspace-write", "off", "read-only"
	yes := true
	c := config{policy: contextwin.DefaultPolicy()}
	n, err := c.apply(Settings{Sandbox: &off, AllowNetwork: &yes})
	if err != nil || n.sandbox != sandbox.Off || !n.allowNetwork {
		t.Errorf("apply(off, network) = %+v, %v", n, err)
	}
	if n, err = n.apply(Settings{Sandbox: &on}); err != nil || n.sandbox != sandbox.WorkspaceWrite || !n.allowNetwork {
		t.Errorf("apply(workspace-write) = %+v, %v", n, err)
	}
	if kept, err := n.apply(Settings{Sandbox: &bad}); err == nil || kept.sandbox != sandbox.WorkspaceWrite {
		t.Errorf("apply(%q) = %+v, %v; want an error and the settings kept", bad, kept, err)
	}
}

// TestAllowNetworkSaysWhatItOpens: allowing the network is the user's choice, made knowingly: the
// server says once what it opens.
func TestAllowNetworkSaysWhatItOpens(t *testing.T) {
	e := newEnv(t, envOpts{editor: lsptest.Options{Experimental: true, InitializationOptions: map[string]any{"allowNetwork": true}}},
		text("one"), text("two"))
	for _, prompt := range []string{"one", "two"} {
		e.turnEnd(e.ask(prompt, ""))
	}
	var told int
	for _, raw := range e.ed.Notifications("window/showMessage") {
		if strings.Contains(string(raw), "may use the network") && strings.Contains(string(raw), "loopback") {
			told++
		}
	}
	if ok, _ := sandbox.New(sandbox.Config{Workspace: e.ws}).Confined(); ok && told != 1 {
		t.Errorf("told %d times what allowing the network opens, want once", told)
	}
}
