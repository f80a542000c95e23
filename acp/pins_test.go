package acp

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
)

// TestACPPins: _reprise/pin, _reprise/pins and _reprise/unpin over a real connection, with the
// LSP commands' results; bad params are InvalidParams naming the problem; "/pin PATH" pins the
// file, "/pin TEXT" the text; the pins reach the next model call.
func TestACPPins(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n// pinned over ACP\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	model := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{text("Noted.")}})
	t.Cleanup(model.Close)
	e := start(t, model, ws, t.TempDir(), true)
	id := e.open(sdk.ClientCapabilities{})
	ctx := t.Context()
	ext := func(method string, params any) (map[string]any, error) {
		raw, err := e.conn.CallExtension(ctx, method, params)
		if err != nil {
			return nil, err
		}
		var out map[string]any
		return out, json.Unmarshal(raw, &out)
	}
	res, err := ext(MethodPin, map[string]any{"sessionId": id, "kind": "message", "text": "Use tabs."})
	if err != nil {
		t.Fatal(err)
	}
	if pin, _ := res["pin"].(map[string]any); pin["id"] != "p1" || pin["kind"] != "message" || len(res["pins"].([]any)) != 1 {
		t.Fatalf("%s = %v", MethodPin, res)
	}
	for _, tt := range []struct {
		method string
		params map[string]any
		want   string
	}{
		{MethodPin, map[string]any{"sessionId": id, "kind": "folder"}, `_reprise/pin: kind must be "file" or "message"`},
		{MethodPin, map[string]any{"sessionId": id, "kind": "file", "path": "/etc/passwd"}, "_reprise/pin: path is outside the workspace"},
		{MethodPin, map[string]any{"kind": "message", "text": "x"}, "_reprise/pin: sessionId is required"},
		{MethodUnpin, map[string]any{"sessionId": id, "id": "p9"}, `_reprise/unpin: no pin "p9"`},
	} {
		_, err := ext(tt.method, tt.params)
		var re *sdk.RequestError
		if !errors.As(err, &re) || re.Code != -32602 || !strings.Contains(string(must(json.Marshal(re.Data))), strings.ReplaceAll(tt.want, `"`, `\"`)) {
			t.Errorf("%s %v = %v, want -32602 %q", tt.method, tt.params, err, tt.want)
		}
	}
	if _, err := e.conn.Prompt(ctx, prompt(id, "/pin main.go")); err != nil {
		t.Fatal(err)
	}
	if _, err := e.conn.Prompt(ctx, prompt(id, "/pin Never rename exported names.")); err != nil {
		t.Fatal(err)
	}
	list, err := ext(MethodPins, map[string]any{"sessionId": id})
	if err != nil {
		t.Fatal(err)
	}
	pins := list["pins"].([]any)
	if len(pins) != 3 || pins[1].(map[string]any)["kind"] != "file" || pins[1].(map[string]any)["path"] != "main.go" || pins[2].(map[string]any)["kind"] != "message" {
		t.Fatalf("%s = %v", MethodPins, list)
	}
	if _, err := e.conn.Prompt(ctx, prompt(id, "Go.")); err != nil {
		t.Fatal(err)
	}
	reqs := model.Requests()
	body := string(reqs[len(reqs)-1].Body)
	for _, want := range []string{"Use tabs.", "pinned over ACP", "Never rename exported names."} {
		if !strings.Contains(body, want) {
			t.Errorf("the model call lacks the pin %q", want)
		}
	}
	if res, err := ext(MethodUnpin, map[string]any{"sessionId": id, "id": "p1"}); err != nil || len(res["pins"].([]any)) != 2 {
		t.Errorf("%s = %v, %v", MethodUnpin, res, err)
	}
	// Each change was told with the whole list, as LSP's pins update: 1, 2, 3 pins, then 2.
	for deadline := time.Now().Add(5 * time.Second); len(e.c.extNotes(NotifyPins)) < 4 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	var counts []int
	for _, raw := range e.c.extNotes(NotifyPins) {
		var n struct {
			SessionID string           `json:"sessionId"`
			Pins      []map[string]any `json:"pins"`
		}
		if err := json.Unmarshal(raw, &n); err != nil || n.SessionID != string(id) {
			t.Fatalf("%s %s: %v", NotifyPins, raw, err)
		}
		counts = append(counts, len(n.Pins))
	}
	if fmt.Sprint(counts) != "[1 2 3 2]" {
		t.Errorf("%s told %v pins, want [1 2 3 2]", NotifyPins, counts)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
