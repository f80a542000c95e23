package acp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/google/go-cmp/cmp"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/agent/runner"
	"github.com/reprise-dev/reprise/agent/tools"
)

// TestACPNewSessionUpdatesFollowResponse: the updates a new session starts with (its usage, told
// by the runner as it opens, then its commands) are written after the session/new response, the only place the client learns the
// session's id from; before it, a client drops them as updates of an unknown session.
func TestACPNewSessionUpdatesFollowResponse(t *testing.T) {
	model := geminitest.New(geminitest.Script{})
	t.Cleanup(model.Close)
	home, ws := t.TempDir(), t.TempDir() // removed after the agent stopped: cleanups run last first
	agentIn, clientOut := io.Pipe()
	clientIn, agentOut := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = Serve(t.Context(), agentIn, agentOut, Options{Version: "test", Model: "gemini-3.8-flash", StateHome: home,
			ContextPolicy: policy(), Logger: slog.New(slog.DiscardHandler), NewModel: models(model)})
		agentOut.Close()
	}()
	t.Cleanup(func() {
		clientOut.Close()
		<-done
	})
	// Each request is written from a goroutine: the pipe blocks until the agent reads, and the
	// agent's answers must be read meanwhile. session/new is sent once initialize is answered, as
	// a client does: the connection handles requests concurrently, so two sent at once may be
	// answered in either order.
	send := func(req map[string]any) {
		b, _ := json.Marshal(req)
		go clientOut.Write(append(b, '\n'))
	}
	send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{"protocolVersion": sdk.ProtocolVersionNumber}})

	var got []string // each message: "response N" or the update's kind
	lines := bufio.NewScanner(clientIn)
	for lines.Scan() {
		var m struct {
			ID     *int   `json:"id"`
			Method string `json:"method"`
			Params struct {
				Update struct {
					Kind string `json:"sessionUpdate"`
				} `json:"update"`
			} `json:"params"`
		}
		if err := json.Unmarshal(lines.Bytes(), &m); err != nil {
			t.Fatalf("%s: %v", lines.Bytes(), err)
		}
		if m.Method == "" {
			got = append(got, fmt.Sprintf("response %d", *m.ID))
		} else {
			got = append(got, m.Params.Update.Kind)
		}
		if m.Method == "" && *m.ID == 1 {
			send(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": map[string]any{"cwd": ws, "mcpServers": []any{}}})
		}
		if m.Params.Update.Kind == "available_commands_update" { // the last update of the setup
			break
		}
	}
	want := []string{"response 1", "response 2", "usage_update", "available_commands_update"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}

// TestACPCancelClosesOpenToolCalls: a turn that stops without a tool call's last update (a
// cancel) still ends that call for the client, failed, so that the editor does not show it
// running forever. The agent sends the last update of every call today; this holds the ACP side
// to it whatever the agent does.
func TestACPCancelClosesOpenToolCalls(t *testing.T) {
	c := &client{notify: make(chan struct{}, 1)}
	s, conn := connected(t, c)
	ctx, cancel := context.WithCancel(t.Context())
	events := func(yield func(agent.Event, error) bool) {
		call := &agent.ToolEvent{ID: "call-1", Name: "run_command", Title: "sleep 30", Kind: tools.KindExecute, Status: agent.ToolInProgress}
		if !yield(agent.Event{Type: agent.EventToolCall, Tool: call}, nil) {
			return
		}
		cancel() // the user cancels while the command runs
		yield(agent.Event{Type: agent.EventTurnEnd, End: &agent.TurnEnd{StopReason: agent.StopCancelled}}, nil)
	}
	if got := s.stream(ctx, "s1", &runner.Live{Workspace: t.TempDir()}, events); got != sdk.StopReasonCancelled {
		t.Errorf("stop reason = %q, want cancelled", got)
	}
	// A response is handed over only after the notifications written before it.
	if _, err := conn.Initialize(t.Context(), sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range c.all() {
		switch u := n.Update; {
		case u.ToolCall != nil:
			got = append(got, fmt.Sprintf("%s %s %s", u.ToolCall.ToolCallId, u.ToolCall.Status, u.ToolCall.Title))
		case u.ToolCallUpdate != nil && u.ToolCallUpdate.Status != nil:
			var text []string
			for _, c := range u.ToolCallUpdate.Content {
				if c.Content != nil && c.Content.Content.Text != nil {
					text = append(text, c.Content.Content.Text.Text)
				}
			}
			got = append(got, fmt.Sprintf("%s %s %s", u.ToolCallUpdate.ToolCallId, *u.ToolCallUpdate.Status, strings.Join(text, " ")))
		}
	}
	want := []string{"call-1 in_progress sleep 30", "call-1 failed cancelled"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tool call updates (-want +got):\n%s", diff)
	}
}

// connected is a server with no session yet, connected to c over pipes.
func connected(t *testing.T, c *client) (*server, *sdk.ClientSideConnection) {
	t.Helper()
	agentIn, clientOut := io.Pipe()
	clientIn, agentOut := io.Pipe()
	log := slog.New(slog.DiscardHandler)
	s := &server{log: log, ctx: t.Context(), wire: newWire(agentOut), runner: &runner.Runner{}}
	s.conn = sdk.NewAgentSideConnection(s, s.wire, agentIn)
	s.conn.SetLogger(log)
	conn := sdk.NewClientSideConnection(c, clientOut, clientIn)
	conn.SetLogger(log)
	t.Cleanup(func() {
		clientOut.Close()
		agentOut.Close()
		<-s.conn.Done()
		<-conn.Done()
	})
	return s, conn
}

func TestWire(t *testing.T) {
	var out bytes.Buffer
	w := newWire(&out)
	note := func(id string) sdk.SessionNotification {
		return sdk.SessionNotification{SessionId: sdk.SessionId(id), Update: sdk.UpdateAgentMessageText("for " + id)}
	}
	if w.hold(note("a")) {
		t.Error("an update of a session not pending was held")
	}
	w.expect("a")
	if !w.hold(note("a")) {
		t.Error("an update of a pending session was not held")
	}
	for _, msg := range []string{
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"b"}}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"a"}}`,
		`{"jsonrpc":"2.0","id":3,"result":{"sessionId":"b"}}`,
		`{"jsonrpc":"2.0","id":4,"method":"session/request_permission","params":{"sessionId":"a"}}`,
	} {
		w.Write([]byte(msg + "\n"))
		if strings.Contains(out.String(), "for a") {
			t.Fatalf("the held update went out after %s", msg)
		}
	}
	w.Write([]byte(`{"jsonrpc":"2.0","id":5,"result":{"sessionId":"a"}}` + "\n"))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 7 || !strings.Contains(lines[5], `"id":5`) || !strings.Contains(lines[6], `"text":"for a"`) || !strings.Contains(lines[6], `"method":"session/update"`) {
		t.Errorf("written:\n%s", out.String())
	}
	if w.hold(note("a")) {
		t.Error("an update was held after its session's response")
	}
}
