package lsp

import (
	"context"
	"errors"
	"fmt"

	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/agent/runner"
)

// ForkArgs are reprise.fork's arguments: the session (the current one by default) and where to
// fork it, right after checkpoint Checkpoint or just before turn Turn's message; neither: as it
// is now.
type ForkArgs struct {
	SessionID  string `json:"sessionId,omitempty"`
	Checkpoint int    `json:"checkpoint,omitempty"`
	Turn       int    `json:"turn,omitempty"`
}

// forkResult answers reprise.fork: the new session, now the current one, and what the editor
// says of the files, which a fork does not touch: the parent's turns from RestoreTurn on changed
// them since the fork's point (0: none did), and reprise.restore on the parent with that turn puts
// them back.
type forkResult struct {
	SessionID   string `json:"sessionId"`
	Parent      string `json:"parent"`
	From        string `json:"from"`
	RestoreTurn int    `json:"restoreTurn,omitempty"`
	Note        string `json:"note"`
}

// fork answers reprise.fork.
func (s *server) fork(ctx context.Context, a ForkArgs) (any, error) {
	if a.Checkpoint < 0 || a.Turn < 0 || a.Checkpoint > 0 && a.Turn > 0 {
		return nil, invalidParams("%s: give a checkpoint or a turn (1 or more), not both", CommandFork)
	}
	if s.sessions.store == nil {
		return nil, invalidParams("%s: sessions are not saved (see the server log), so none can be forked", CommandFork)
	}
	parent, err := s.sessions.use(a.SessionID)
	if err != nil {
		return nil, err
	}
	defer s.sessions.release(parent)
	pid, turns := parent.ID(), parent.Conversation().Turns()
	at := journal.ForkPoint{Checkpoint: a.Checkpoint, Turn: a.Turn}
	cfg := s.cfg.get()
	l, err := s.sessions.runner.Fork(ctx, pid, at, func(id string) runner.Spec { return s.sessions.spec(ctx, id, cfg) })
	var fe *journal.ForkError
	switch {
	case errors.As(err, &fe):
		return nil, invalidParams("%s: %s", CommandFork, fe.Msg)
	case err != nil:
		return nil, runnerError(err)
	}
	defer s.sessions.release(s.sessions.opened(l))
	out := forkResult{SessionID: l.ID(), Parent: pid, From: at.String(),
		Note: "Forked: the files on disk are as the parent session left them, not as they were at " + at.String() + "."}
	// The parent's turns after the fork's point may have changed files.
	if first := l.Conversation().Turns() + 1; first <= turns && len(parent.Files().ChangedPaths(first)) > 0 {
		out.RestoreTurn = first
		out.Note += fmt.Sprintf(" reprise.restore on the parent with turn %d puts back the files its later turns changed.", first)
	}
	return out, nil
}
