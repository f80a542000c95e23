package lsp

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/reprise-dev/reprise/agent"
)

// TestWarningBetweenTurns: a warning a session tells between turns (its explicit cache could not
// be kept alive while idle) reaches the editor as a turn's does: window/showMessage, Warning.
func TestWarningBetweenTurns(t *testing.T) {
	between := make(chan func(agent.Event), 1)
	e := newEnv(t, envOpts{server: func(s *server) {
		s.sessions.runner.Observe = func(o agent.Options) { between <- o.Between }
	}})
	var res SessionResult
	if err := e.ed.Execute(e.ctx, CommandNewSession, nil, &res); err != nil {
		t.Fatal(err)
	}
	tell := <-between
	const text = "the explicit cache could not be kept alive while the session is idle"
	tell(agent.Event{Type: agent.EventWarning, Text: text})
	shown, err := e.ed.AwaitNotification(e.ctx, "window/showMessage", func(p json.RawMessage) bool {
		return strings.Contains(string(p), text)
	})
	if err != nil {
		t.Fatal(err)
	}
	var msg struct {
		Type int `json:"type"`
	}
	if err := json.Unmarshal(shown, &msg); err != nil || msg.Type != 2 {
		t.Errorf("shown as %s, want type 2 (Warning)", shown)
	}
}
