package lsp

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"go.lsp.dev/jsonrpc2"

	"github.com/reprise-dev/reprise/agent"
)

// changes answers reprise.changes: the files the agent changed from a turn on, with bounded diffs.
func (s *server) changes(a ChangesArgs) (any, error) {
	turn := 1
	if a.Turn != nil {
		if *a.Turn < 1 {
			return nil, invalidParams("%s: turn must be a turn number (1 or more)", CommandChanges)
		}
		turn = *a.Turn
	}
	l, err := s.sessions.use(a.SessionID)
	if err != nil {
		return nil, err
	}
	defer s.sessions.release(l)
	cs, err := l.s.Changes(turn)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", CommandChanges, err)
	}
	out := changesResult{SessionID: l.s.ID(), Turn: turn, Files: []fileChange{}}
	for _, c := range cs {
		out.Files = append(out.Files, fileChange{
			Path: c.Path, AbsPath: filepath.Join(s.root, filepath.FromSlash(c.Path)), Turn: c.Turn,
			State: string(c.State), Added: c.Added, Removed: c.Removed, Diff: c.Diff,
			Binary: c.Binary, Note: c.Note, UserChanged: c.UserChanged,
		})
	}
	return out, nil
}

// restorePaths answers reprise.restore with paths: each file is restored or refused on its own.
// A call that restores nothing is an error, so that an editor undoing one file shows why.
func restorePaths(l *live, a RestoreArgs) (any, error) {
	if len(*a.Paths) == 0 {
		return nil, invalidParams("%s: paths is empty; omit it to restore every file", CommandRestore)
	}
	for _, p := range *a.Paths {
		if strings.TrimSpace(p) == "" {
			return nil, invalidParams("%s: paths must not hold an empty path", CommandRestore)
		}
	}
	restored, refused, err := l.s.RestorePaths(a.Turn, *a.Paths)
	switch {
	case errors.Is(err, agent.ErrOutside), errors.Is(err, agent.ErrNotChanged):
		return nil, invalidParams("%s: %v", CommandRestore, err)
	case err != nil:
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, fmt.Sprintf("%s: %v", CommandRestore, err))
	}
	out := restoreResult{Restored: restored}
	if out.Restored == nil {
		out.Restored = []string{}
	}
	var why []string
	for _, r := range refused {
		out.Refused = append(out.Refused, refusal{Path: r.Path, Reason: r.Reason})
		why = append(why, r.Path+": "+r.Reason)
	}
	if len(restored) == 0 {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, fmt.Sprintf("%s: nothing restored: %s", CommandRestore, strings.Join(why, "; ")))
	}
	return out, nil
}
