package lsp

import (
	"context"
	"errors"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/runner"
	"github.com/reprise-dev/reprise/contextwin"
	"go.lsp.dev/protocol"
)

// PinArgs are reprise.pin's arguments. A file pin names Path; a message pin gives Text, and Turn when it is an
// earlier message of the chat.
type PinArgs struct {
	SessionID string `json:"sessionId"`
	Kind      string `json:"kind"`
	Path      string `json:"path,omitempty"`
	Text      string `json:"text,omitempty"`
	Turn      int    `json:"turn,omitempty"`
}

// UnpinArgs are reprise.unpin's arguments.
type UnpinArgs struct {
	SessionID string `json:"sessionId"`
	ID        string `json:"id"`
}

// pinResult answers reprise.pin: the new pin and all of them.
type pinResult struct {
	Pin  contextwin.PinInfo   `json:"pin"`
	Pins []contextwin.PinInfo `json:"pins"`
}

// pinsResult answers reprise.unpin and reprise.pins.
type pinsResult struct {
	Pins []contextwin.PinInfo `json:"pins"`
}

// pin answers reprise.pin. With no session yet it creates one, as reprise.ask does: a user pins
// the files a task needs before asking it, as Copilot's and Claude Code's users add context.
// While a turn runs the pin goes in at its next model call.
func (s *server) pin(ctx context.Context, a PinArgs) (any, error) {
	l, err := s.sessions.use(a.SessionID)
	if a.SessionID == "" && errors.Is(err, errNoSession) {
		l, err = s.sessions.create(ctx)
	}
	if err != nil {
		return nil, err
	}
	defer s.sessions.release(l)
	out, err := s.sessions.runner.Do(ctx, l, runner.Verb{Kind: runner.Pin, Pin: agent.PinRequest{Kind: a.Kind, Path: a.Path, Text: a.Text, Turn: a.Turn}}, s.verbEvents(l.ID()))
	if err != nil {
		return nil, pinFailure(CommandPin, err)
	}
	return pinResult{Pin: out.Pin, Pins: out.Pins}, nil
}

// unpin answers reprise.unpin.
func (s *server) unpin(ctx context.Context, a UnpinArgs) (any, error) {
	if a.ID == "" {
		return nil, invalidParams("%s: id is required", CommandUnpin)
	}
	l, err := s.sessions.use(a.SessionID)
	if err != nil {
		return nil, err
	}
	defer s.sessions.release(l)
	out, err := s.sessions.runner.Do(ctx, l, runner.Verb{Kind: runner.Unpin, PinID: a.ID}, s.verbEvents(l.ID()))
	if err != nil {
		return nil, pinFailure(CommandUnpin, err)
	}
	return pinsResult{Pins: out.Pins}, nil
}

// verbEvents renders what happens to a session outside its turns (agent/runner's verbs and its
// Events): the pins as a "pins" session update, the usage, a compaction once done (its start is
// the command's progress, its failure the command's error).
func (s *server) verbEvents(sessionID string) func(agent.Event) {
	return func(ev agent.Event) {
		switch {
		case ev.Type == agent.EventUsage:
			s.emitUsage(sessionID, *ev.Usage)
		case ev.Type == agent.EventWarning: // as a turn's: once per session, for every client
			s.showMessage(protocol.MessageTypeWarning, "Reprise: "+ev.Text)
			s.logMessage(protocol.MessageTypeWarning, "Reprise: "+ev.Text)
		case !s.client.reprise:
		case ev.Type == agent.EventPins:
			pins := ev.Pins
			s.notify(MethodSessionUpdate, sessionUpdateParams{SessionID: sessionID, Update: update{SessionUpdate: UpdatePins, Pins: &pins}})
		case ev.Type == agent.EventCompaction && ev.Compaction.State == agent.CompactionDone:
			s.notify(MethodSessionUpdate, sessionUpdateParams{SessionID: sessionID, Update: update{SessionUpdate: UpdateCompaction, Compaction: compactionUpdateOf(ev.Compaction)}})
		}
	}
}

// pinFailure is a refused pin as InvalidParams naming the problem; anything else as it is.
func pinFailure(command string, err error) error {
	var pe *agent.PinError
	if errors.As(err, &pe) {
		return invalidParams("%s: %s", command, pe.Msg)
	}
	return err
}
