package lsp

import (
	"errors"

	"github.com/reprise-dev/reprise/agent/journal"
)

// CancelSubagentArgs are reprise.cancelSubagent's arguments: the session (the current one by
// default) and the subagent, as its subagent updates name it.
type CancelSubagentArgs struct {
	SessionID  string `json:"sessionId,omitempty"`
	SubagentID string `json:"subagentId"`
}

// cancelSubagent stops one subagent of a running turn: its task call answers that the user
// stopped it, and the turn goes on.
func (s *server) cancelSubagent(a CancelSubagentArgs) (any, error) {
	if a.SubagentID == "" {
		return nil, invalidParams("%s: subagentId is required", CommandCancelSubagent)
	}
	l, err := s.sessions.use(a.SessionID)
	if err != nil {
		return nil, err
	}
	defer s.sessions.release(l)
	return map[string]bool{"cancelled": l.Subagents().Cancel(a.SubagentID)}, nil
}

// subagentOf checks that sub is a subagent of session parent, by its saved meta, and returns it:
// an export names a subagent through its parent, never any session by id.
func (s *server) subagentOf(parent, sub string) (string, error) {
	if err := journal.CheckID(sub); err != nil {
		return "", invalidParams("%s: subagentId: %v", CommandExport, err)
	}
	snap, err := s.sessions.store.Load(sub)
	if errors.Is(err, journal.ErrNotFound) {
		return "", invalidParams("%s: subagent %s has nothing saved", CommandExport, sub)
	}
	if err != nil {
		return "", err
	}
	if snap.Meta.Parent != parent || snap.Meta.Subagent == "" {
		return "", invalidParams("%s: %s is not a subagent of session %s", CommandExport, sub, parent)
	}
	return sub, nil
}
