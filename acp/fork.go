package acp

import (
	"context"
	"encoding/json"
	"errors"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/journal"
)

// MethodFork saves a new session from a point of one, with the params of LSP's reprise.fork
// (sessionId required). The fork is saved, not opened: the client opens it with session/load,
// which replays its conversation, as for any saved session.
const MethodFork = "_reprise/fork"

type forkParams struct {
	SessionID  string `json:"sessionId"`
	Checkpoint int    `json:"checkpoint,omitempty"`
	Turn       int    `json:"turn,omitempty"`
}

// fork answers _reprise/fork: {sessionId, parent, from, note}.
func (s *server) fork(ctx context.Context, raw json.RawMessage) (any, error) {
	var p forkParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, invalid("%s: %v", MethodFork, err)
	}
	if p.SessionID == "" {
		return nil, invalid("%s: sessionId is required", MethodFork)
	}
	l, err := s.use(ctx, sdk.SessionId(p.SessionID))
	if err != nil {
		return nil, err
	}
	defer s.runner.Release(l)
	st, err := s.runner.Store(l.Workspace)
	if err != nil || st == nil {
		return nil, invalid("%s: sessions are not saved here, so none can be forked", MethodFork)
	}
	at := journal.ForkPoint{Checkpoint: p.Checkpoint, Turn: p.Turn}
	id := agent.NewID(timeNow())
	err = st.Fork(p.SessionID, at, journal.Meta{ID: id, Created: timeNow()})
	var fe *journal.ForkError
	switch {
	case errors.As(err, &fe):
		return nil, invalid("%s: %s", MethodFork, fe.Msg)
	case err != nil:
		return nil, err
	}
	return map[string]any{"sessionId": id, "parent": p.SessionID, "from": at.String(),
		"note": "Forked: open it with session/load. The files on disk are as the parent session left them, not as they were at " + at.String() + "."}, nil
}
