package lsp

import (
	"context"
	"errors"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/runner"
	"github.com/reprise-dev/reprise/contextwin"
)

// ForgetNoteArgs are reprise.forgetNote's arguments.
type ForgetNoteArgs struct {
	SessionID string `json:"sessionId"`
	Key       string `json:"key"`
}

// notesResult answers reprise.forgetNote: the notes left, oldest first.
type notesResult struct {
	Notes []contextwin.Note `json:"notes"`
}

// forgetNote answers reprise.forgetNote: the user deletes a value the agent saved with
// save_note. The model is told at its next call; a note that is not there is InvalidParams.
func (s *server) forgetNote(ctx context.Context, a ForgetNoteArgs) (any, error) {
	if a.Key == "" {
		return nil, invalidParams("%s: key is required", CommandForgetNote)
	}
	l, err := s.sessions.use(a.SessionID)
	if err != nil {
		return nil, err
	}
	defer s.sessions.release(l)
	out, err := s.sessions.runner.Do(ctx, l, runner.Verb{Kind: runner.ForgetNote, NoteKey: a.Key}, s.verbEvents(l.ID()))
	var ne *agent.NoteError
	if errors.As(err, &ne) {
		return nil, invalidParams("%s: %s", CommandForgetNote, ne.Error())
	}
	if err != nil {
		return nil, err
	}
	if out.Notes == nil {
		out.Notes = []contextwin.Note{}
	}
	return notesResult{Notes: out.Notes}, nil
}
