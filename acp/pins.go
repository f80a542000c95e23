package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/runner"
	"github.com/reprise-dev/reprise/contextwin"
)

// Pinned context over ACP: extension methods (names starting with "_", which ACP leaves to
// agents) with the params and results of the LSP commands reprise.pin, reprise.unpin and
// reprise.pins, sessionId required.
const (
	MethodPin   = "_reprise/pin"
	MethodUnpin = "_reprise/unpin"
	MethodPins  = "_reprise/pins"
	// NotifyPins is the notification (agent → client) that carries a session's pins whenever they
	// change, {sessionId, pins: [{id, kind, label, path?, tokens}]}, as LSP's pins update: a
	// client that shows them refreshes every view of the session.
	NotifyPins = "_reprise/pinsUpdate"
)

// pinParams are the params of the three methods.
type pinParams struct {
	SessionID string `json:"sessionId"`
	Kind      string `json:"kind,omitempty"`
	Path      string `json:"path,omitempty"`
	Text      string `json:"text,omitempty"`
	Turn      int    `json:"turn,omitempty"`
	ID        string `json:"id,omitempty"`
}

// HandleExtensionMethod answers the _reprise/ methods; any other is MethodNotFound.
func (s *server) HandleExtensionMethod(ctx context.Context, method string, raw json.RawMessage) (any, error) {
	switch method {
	case MethodFork:
		return s.fork(ctx, raw)
	case MethodCancelSubagent:
		return s.cancelSubagent(ctx, raw)
	}
	if method != MethodPin && method != MethodUnpin && method != MethodPins {
		return nil, sdk.NewMethodNotFound(method)
	}
	var p pinParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, invalid("%s: %v", method, err)
	}
	if p.SessionID == "" {
		return nil, invalid("%s: sessionId is required", method)
	}
	l, err := s.use(ctx, sdk.SessionId(p.SessionID))
	if err != nil {
		return nil, err
	}
	defer s.runner.Release(l)
	render := s.verbEvents(ctx, p.SessionID)
	switch method {
	case MethodPin:
		out, err := s.runner.Do(ctx, l, runner.Verb{Kind: runner.Pin, Pin: agent.PinRequest{Kind: p.Kind, Path: p.Path, Text: p.Text, Turn: p.Turn}}, render)
		if err != nil {
			return nil, pinFailure(method, err)
		}
		return map[string]any{"pin": out.Pin, "pins": out.Pins}, nil
	case MethodUnpin:
		if p.ID == "" {
			return nil, invalid("%s: id is required", method)
		}
		out, err := s.runner.Do(ctx, l, runner.Verb{Kind: runner.Unpin, PinID: p.ID}, render)
		if err != nil {
			return nil, pinFailure(method, err)
		}
		return map[string]any{"pins": out.Pins}, nil
	}
	return map[string]any{"pins": contextwin.PinInfos(l.Conversation().Pins())}, nil
}

func invalid(format string, a ...any) error {
	return sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf(format, a...)})
}

// pinFailure is a refused pin as InvalidParams naming the problem; anything else as it is.
func pinFailure(method string, err error) error {
	var pe *agent.PinError
	if errors.As(err, &pe) {
		return invalid("%s: %s", method, pe.Msg)
	}
	return err
}

// pinCommand runs "/pin ARG": a path that names a file of the workspace pins the file, anything
// else pins the text.
func (s *server) pinCommand(ctx context.Context, l *runner.Live, arg string, render func(agent.Event)) string {
	if arg == "" {
		return "/pin takes a file of the workspace or a text to keep in every prompt."
	}
	req := agent.PinRequest{Kind: contextwin.PinMessage, Text: arg}
	p := arg
	if !filepath.IsAbs(p) {
		p = filepath.Join(l.Workspace, p)
	}
	if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
		req = agent.PinRequest{Kind: contextwin.PinFile, Path: arg}
	}
	out, err := s.runner.Do(ctx, l, runner.Verb{Kind: runner.Pin, Pin: req}, render)
	if err != nil {
		return "Not pinned: " + err.Error()
	}
	return fmt.Sprintf("Pinned %s (%s, %s tokens): kept verbatim in every prompt, never cleared or summarized. %d pinned in all.",
		out.Pin.ID, out.Pin.Label, contextwin.Kilo(out.Pin.Tokens), len(out.Pins))
}

// notifyPins tells the client a session's pins after a change.
func (s *server) notifyPins(ctx context.Context, id string, pins []contextwin.PinInfo) {
	if pins == nil {
		pins = []contextwin.PinInfo{}
	}
	if err := s.conn.NotifyExtension(context.WithoutCancel(ctx), NotifyPins, map[string]any{"sessionId": id, "pins": pins}); err != nil {
		s.log.Debug("pins update not sent", "session", id, "error", err)
	}
}
