package lsp

import (
	"strings"
	"testing"

	"github.com/reprise-dev/reprise/lsp/lsptest"
)

// TestPinsOverLSP: reprise.pin with no session creates one; the pins reach the next model call;
// each change is a "pins" session update; reprise.context counts them; bad arguments are
// InvalidParams naming the problem; after a restart the resumed session has the same pins, and
// reprise.history lists them.
func TestPinsOverLSP(t *testing.T) {
	opts := envOpts{editor: lsptest.Options{Experimental: true}, files: map[string]string{
		"src/a.go": "package a\n\n// The pinned file.\n", ".env": "TOKEN=x\n",
	}}
	e := newEnv(t, opts, text("Noted."))
	var first pinResult
	if err := e.ed.Execute(e.ctx, CommandPin, PinArgs{Kind: "message", Text: "Keep the public API stable."}, &first); err != nil {
		t.Fatal(err)
	}
	if first.Pin.ID != "p1" || first.Pin.Kind != "message" || first.Pin.Text != "Keep the public API stable." || first.Pin.Tokens == 0 || len(first.Pins) != 1 {
		t.Fatalf("reprise.pin = %+v", first)
	}
	var list pinsResult
	if err := e.ed.Execute(e.ctx, CommandPins, SessionArgs{}, &list); err != nil || len(list.Pins) != 1 {
		t.Fatalf("reprise.pins = %+v, %v", list, err)
	}
	id := e.ask("Go on.", "")
	var second pinResult
	if err := e.ed.Execute(e.ctx, CommandPin, PinArgs{SessionID: id, Kind: "file", Path: "src/a.go"}, &second); err != nil {
		t.Fatal(err)
	}
	// A file's content stays off the wire; a message's text is on it, to tell which message it is.
	if second.Pin.ID != "p2" || second.Pin.Path != "src/a.go" || second.Pin.Label != "src/a.go" || second.Pin.Text != "" || len(second.Pins) != 2 {
		t.Fatalf("reprise.pin file = %+v", second)
	}
	e.turnEnd(id)
	if body := requestText(e.srv.Requests()[len(e.srv.Requests())-1]); !strings.Contains(body, "[Pinned by the user: p1 message.") {
		t.Errorf("the pinned message is not in the request: %s", body)
	}
	if ups := e.updates(id, UpdatePins); len(ups) < 1 || ups[len(ups)-1].Pins == nil || len(*ups[len(ups)-1].Pins) != 2 {
		t.Errorf("pins updates %+v", ups)
	}
	for _, tt := range []struct {
		cmd  string
		arg  any
		want string
	}{
		{CommandPin, PinArgs{SessionID: id, Kind: "folder"}, `reprise.pin: kind must be "file" or "message"`},
		{CommandPin, PinArgs{SessionID: id, Kind: "message"}, "reprise.pin: text is required"},
		{CommandPin, PinArgs{SessionID: id, Kind: "file", Path: "../x.go"}, "reprise.pin: path is outside the workspace"},
		{CommandPin, PinArgs{SessionID: id, Kind: "file", Path: ".env"}, "reprise.pin: .env is a secrets file"},
		{CommandUnpin, UnpinArgs{SessionID: id, ID: "p7"}, `reprise.unpin: no pin "p7"`},
		{CommandUnpin, UnpinArgs{SessionID: id}, "reprise.unpin: id is required"},
	} {
		err := e.ed.Execute(e.ctx, tt.cmd, tt.arg, nil)
		if err == nil {
			t.Errorf("%s %+v: no error", tt.cmd, tt.arg)
			continue
		}
		if code, msg := rpcError(t, err); code != -32602 || !strings.HasPrefix(msg, tt.want) {
			t.Errorf("%s %+v = %d %q, want -32602 %q", tt.cmd, tt.arg, code, msg, tt.want)
		}
	}
	var ctx contextResult
	if err := e.ed.Execute(e.ctx, CommandContext, SessionArgs{SessionID: id}, &ctx); err != nil {
		t.Fatal(err)
	}
	if len(ctx.Pins) != 2 || ctx.PinnedTokens != first.Pin.Tokens+second.Pin.Tokens || !strings.Contains(ctx.Text, "Pinned: 2 items, ") || !strings.Contains(ctx.Text, "tokens (counted in messages)") {
		t.Errorf("reprise.context pins %+v %d\n%s", ctx.Pins, ctx.PinnedTokens, ctx.Text)
	}
	b := ctx.Breakdown
	if sum := b.SystemPrompt + b.CustomInstructions + b.Tools + b.MCPTools + b.Messages + b.Free + b.Buffer; sum != ctx.Size {
		t.Errorf("the breakdown sums to %d, not the window %d", sum, ctx.Size)
	}
	var un pinsResult
	if err := e.ed.Execute(e.ctx, CommandUnpin, UnpinArgs{SessionID: id, ID: "p1"}, &un); err != nil || len(un.Pins) != 1 || un.Pins[0].ID != "p2" {
		t.Fatalf("reprise.unpin = %+v, %v", un, err)
	}

	e2 := e.restart(opts)
	var res SessionResult
	if err := e2.ed.Execute(e2.ctx, CommandResume, SessionArgs{SessionID: id}, &res); err != nil {
		t.Fatal(err)
	}
	var after pinsResult
	if err := e2.ed.Execute(e2.ctx, CommandPins, SessionArgs{SessionID: id}, &after); err != nil || len(after.Pins) != 1 || after.Pins[0] != second.Pin {
		t.Fatalf("after a restart: %+v, %v", after, err)
	}
	var h historyResult
	if err := e2.ed.Execute(e2.ctx, CommandHistory, SessionArgs{SessionID: id}, &h); err != nil || len(h.Pins) != 1 || h.Pins[0].ID != "p2" {
		t.Errorf("reprise.history pins %+v, %v", h.Pins, err)
	}
}
