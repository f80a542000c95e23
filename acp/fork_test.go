package acp

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
)

// TestACPFork: _reprise/fork saves a session from turn 2 of one; session/load opens it and replays
// turn 1 only, and its next prompt sends nothing of turn 2; bad params are InvalidParams.
func TestACPFork(t *testing.T) {
	ws := t.TempDir()
	model := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{text("One."), text("Two."), text("Another two.")}})
	t.Cleanup(model.Close)
	e := start(t, model, ws, t.TempDir(), true)
	id := e.open(sdk.ClientCapabilities{})
	ctx := t.Context()
	for _, q := range []string{"first", "second"} {
		if _, err := e.conn.Prompt(ctx, prompt(id, q)); err != nil {
			t.Fatal(err)
		}
	}
	ext := func(params any) (map[string]any, error) {
		raw, err := e.conn.CallExtension(ctx, MethodFork, params)
		if err != nil {
			return nil, err
		}
		var out map[string]any
		return out, json.Unmarshal(raw, &out)
	}
	for _, tt := range []struct {
		params map[string]any
		want   string
	}{
		{map[string]any{"sessionId": id, "turn": 5}, "no turn 5 (it has 2)"},
		{map[string]any{"sessionId": id, "turn": 1, "checkpoint": 1}, "give a checkpoint or a turn"},
		{map[string]any{"turn": 1}, "_reprise/fork: sessionId is required"},
	} {
		_, err := ext(tt.params)
		var re *sdk.RequestError
		if !errors.As(err, &re) || re.Code != -32602 || !strings.Contains(string(must(json.Marshal(re.Data))), tt.want) {
			t.Errorf("%v = %v, want -32602 %q", tt.params, err, tt.want)
		}
	}
	res, err := ext(map[string]any{"sessionId": id, "turn": 2})
	if err != nil {
		t.Fatal(err)
	}
	fork, _ := res["sessionId"].(string)
	if fork == "" || fork == string(id) || res["from"] != "turn 2" || !strings.Contains(res["note"].(string), "session/load") {
		t.Fatalf("%s = %v", MethodFork, res)
	}
	from := len(e.c.all())
	if _, err := e.conn.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: sdk.SessionId(fork), Cwd: ws, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	var replayed []string
	for _, n := range e.c.all()[from:] {
		if n.Update.UserMessageChunk != nil && n.Update.UserMessageChunk.Content.Text != nil {
			replayed = append(replayed, n.Update.UserMessageChunk.Content.Text.Text)
		}
	}
	if len(replayed) != 1 || replayed[0] != "first" {
		t.Errorf("the fork replays the user messages %q, want only the first", replayed)
	}
	if _, err := e.conn.Prompt(ctx, prompt(sdk.SessionId(fork), "second, another way")); err != nil {
		t.Fatal(err)
	}
	reqs := model.Requests()
	if body := string(reqs[len(reqs)-1].Body); strings.Contains(body, `"second"`) || !strings.Contains(body, "second, another way") {
		t.Errorf("the fork's call sends:\n%s", body)
	}
}
