//go:build unix

package mcp

import (
	"regexp"
	"strings"
	"testing"

	"github.com/reprise-dev/reprise/agent/mcp/mcptest"
)

// checkEverything lists the reference server's tools and calls two through the Manager.
func checkEverything(t *testing.T, cfg ServerConfig) {
	logger, logs := testLogger()
	m := New(Options{Servers: []ServerConfig{cfg}, Logger: logger})
	defer m.Close()
	mustStart(t, m)
	names := map[string]bool{}
	for _, d := range m.Declarations() {
		names[d.Name] = true
	}
	if s := m.Servers()[0]; s.State != StateRunning {
		t.Fatalf("the reference server did not start: %+v\nlog:\n%s", s, logs)
	}
	for _, want := range []string{"everything__echo", "everything__get-tiny-image", "everything__get-sum"} {
		if !names[want] {
			t.Errorf("%s is not declared; declared: %v", want, names)
		}
	}
	if strings.Contains(logs.String(), "left out") {
		t.Errorf("tools of the reference server were left out:\n%s", logs)
	}

	ctx := t.Context()
	if text, isErr := m.Call(ctx, "everything__echo", map[string]any{"message": "hi"}); text != "Echo: hi" || isErr {
		t.Errorf("echo = %q, %v", text, isErr)
	}
	text, isErr := m.Call(ctx, "everything__get-tiny-image", nil)
	image := regexp.MustCompile(`\[image image/png, [0-9,]+ bytes: not shown\]`)
	if isErr || !image.MatchString(text) || !strings.Contains(text, "MCP logo") {
		t.Errorf("get-tiny-image = %q, %v", text, isErr)
	}
	if text, isErr := m.Call(ctx, "everything__get-sum", map[string]any{"a": 2, "b": 3}); isErr || !strings.Contains(text, "5") {
		t.Errorf("get-sum = %q, %v", text, isErr)
	}
	// A call the server rejects comes back as an error for the model, not a failure of the server.
	if text, isErr := m.Call(ctx, "everything__echo", map[string]any{"wrong": 1}); !isErr {
		t.Errorf("echo without its argument = %q, not an error", text)
	}
	if s := m.Servers()[0]; s.State != StateRunning {
		t.Errorf("the server is %s after a rejected call: %s", s.State, s.Error)
	}
}

func TestEverythingStdio(t *testing.T) {
	t.Parallel()
	checkEverything(t, ServerConfig{Name: "everything", Type: TypeStdio, Command: "node",
		Args: []string{mcptest.Everything(t), "stdio"}, Source: "test"})
}

func TestEverythingStreamableHTTP(t *testing.T) {
	t.Parallel()
	checkEverything(t, ServerConfig{Name: "everything", Type: TypeHTTP, URL: mcptest.EverythingHTTP(t), Source: "test"})
}
