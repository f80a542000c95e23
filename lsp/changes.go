package lsp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/runner"
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
	cs, err := l.HunkReview().Changes(turn, "")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", CommandChanges, err)
	}
	return changesResult{SessionID: l.ID(), Turn: turn, Files: fileChangesOf(s.root, cs)}, nil
}

// keep answers reprise.keep: the files, or the hunks, are recorded kept in their turn, for a
// reopened chat.
func (s *server) keep(a KeepArgs) (any, error) {
	switch {
	case a.Turn < 1:
		return nil, invalidParams("%s: turn must be a turn number (1 or more)", CommandKeep)
	case len(a.Paths) == 0 && len(a.Hunks) == 0:
		return nil, invalidParams("%s: paths or hunks is required", CommandKeep)
	case len(a.Paths) > 0 && len(a.Hunks) > 0:
		return nil, invalidParams("%s: give paths or hunks, not both", CommandKeep)
	case slices.ContainsFunc(a.Paths, func(p string) bool { return strings.TrimSpace(p) == "" }):
		return nil, invalidParams("%s: paths must not hold an empty path", CommandKeep)
	case slices.ContainsFunc(a.Hunks, func(p string) bool { return strings.TrimSpace(p) == "" }):
		return nil, invalidParams("%s: hunks must not hold an empty id", CommandKeep)
	}
	l, err := s.sessions.use(a.SessionID)
	if err != nil {
		return nil, err
	}
	defer s.sessions.release(l)
	out, err := s.sessions.runner.Do(context.Background(), l, runner.Verb{Kind: runner.Keep, Turn: a.Turn, Paths: a.Paths, Hunks: a.Hunks}, nil)
	if err != nil {
		return nil, restoreError(CommandKeep, err)
	}
	return keepResult{Kept: out.Files}, nil
}

// restoreHunks answers reprise.restore with hunks: each is undone or refused on its own, and a
// call that undoes nothing is an error that says why.
func (s *server) restoreHunks(ctx context.Context, l *runner.Live, a RestoreArgs) (any, error) {
	switch {
	case a.Paths != nil:
		return nil, invalidParams("%s: give paths or hunks, not both", CommandRestore)
	case len(a.Hunks) == 0:
		return nil, invalidParams("%s: hunks is empty; omit it to restore every file", CommandRestore)
	case slices.ContainsFunc(a.Hunks, func(p string) bool { return strings.TrimSpace(p) == "" }):
		return nil, invalidParams("%s: hunks must not hold an empty id", CommandRestore)
	}
	did, err := s.sessions.runner.Do(ctx, l, runner.Verb{Kind: runner.Restore, Turn: a.Turn, Hunks: a.Hunks}, nil)
	if err != nil {
		return nil, restoreError(CommandRestore, err)
	}
	out := restoreResult{Restored: []string{}, Hunks: did.Hunks}
	var why []string
	for _, r := range did.Refused {
		out.Refused = append(out.Refused, refusal{Path: r.Path, Hunk: r.Hunk, Reason: r.Reason})
		why = append(why, r.Hunk+": "+r.Reason)
	}
	if len(did.Hunks) == 0 {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, fmt.Sprintf("%s: nothing undone: %s", CommandRestore, strings.Join(why, "; ")))
	}
	return out, nil
}

// restorePaths answers reprise.restore with paths: each file is restored or refused on its own.
// A call that restores nothing is an error, so that an editor undoing one file shows why.
func (s *server) restorePaths(ctx context.Context, l *runner.Live, a RestoreArgs) (any, error) {
	if len(*a.Paths) == 0 {
		return nil, invalidParams("%s: paths is empty; omit it to restore every file", CommandRestore)
	}
	for _, p := range *a.Paths {
		if strings.TrimSpace(p) == "" {
			return nil, invalidParams("%s: paths must not hold an empty path", CommandRestore)
		}
	}
	did, err := s.sessions.runner.Do(ctx, l, runner.Verb{Kind: runner.Restore, Turn: a.Turn, Paths: *a.Paths}, nil)
	if err != nil {
		return nil, restoreError(CommandRestore, err)
	}
	restored, refused := did.Files, did.Refused
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

// restoreError is a failed RestorePaths as command answers it: a path outside the workspace or
// not changed is a mistake in the request (-32602), the rest a state of the session (-32600).
func restoreError(command string, err error) error {
	if errors.Is(err, agent.ErrOutside) || errors.Is(err, agent.ErrNotChanged) || errors.Is(err, agent.ErrNoHunk) {
		return invalidParams("%s: %v", command, err)
	}
	return jsonrpc2.NewError(jsonrpc2.InvalidRequest, fmt.Sprintf("%s: %v", command, err))
}

// changeActions offers, on a document the agent changed in the current session, an undo and a
// keep for each of its hunks on the lines of r, an action undoing the whole file, and an action
// listing every change. A file the user edited since is offered too: the undo then says why it is
// refused, which tells more than a missing action.
func (s *server) changeActions(uri string, r lspRange) []protocol.CodeAction {
	l, err := s.sessions.use("")
	if err != nil {
		return nil
	}
	defer s.sessions.release(l)
	// Paths first: a code action request comes with every cursor move, and only the document's
	// own file is diffed for it.
	paths := l.Files().ChangedPaths(1)
	if len(paths) == 0 {
		return nil
	}
	var out []protocol.CodeAction
	if rel, inside := s.docs.rel(uri); inside && slices.Contains(paths, rel) {
		out = append(out, hunkActions(l, rel, r)...)
		out = append(out, commandAction(undoFileTitle, CommandUndoFile, UndoFileArgs{SessionID: l.ID(), Path: rel}))
	}
	return append(out, commandAction(showChangesTitle, CommandShowChanges, SessionArgs{SessionID: l.ID()}))
}

// hunkActions are an undo and a keep for each hunk of rel whose lines meet r; a hunk that only
// removes lines meets the lines on either side of the gap.
func hunkActions(l *runner.Live, rel string, r lspRange) []protocol.CodeAction {
	cs, err := l.HunkReview().Changes(1, rel)
	if err != nil || len(cs) != 1 {
		return nil
	}
	var out []protocol.CodeAction
	for _, h := range cs[0].Hunks {
		from, to := h.NewStart, h.NewStart+h.NewLines-1 // 1-based, inclusive
		if h.NewLines == 0 {
			from, to = max(h.NewStart, 1), h.NewStart+1
		}
		if r.End.Line+1 < from || r.Start.Line+1 > to {
			continue
		}
		where := hunkLines(h)
		args := HunkArgs{SessionID: l.ID(), Turn: 1, Hunk: h.ID, Path: rel}
		out = append(out, commandAction(fmt.Sprintf("Reprise: undo the agent's change at %s", where), CommandUndoHunk, args))
		if !h.Kept {
			out = append(out, commandAction(fmt.Sprintf("Reprise: keep the agent's change at %s", where), CommandKeepHunk, args))
		}
	}
	return out
}

// hunkLines names a hunk's lines in the file now: "line 4", "lines 4–9", or "line 4 (removed
// lines)" for one that only removes.
func hunkLines(h agent.Hunk) string {
	switch {
	case h.NewLines == 0:
		return fmt.Sprintf("line %d (%d removed)", max(h.NewStart, 1), h.OldLines)
	case h.NewLines == 1:
		return fmt.Sprintf("line %d", h.NewStart)
	}
	return fmt.Sprintf("lines %d–%d", h.NewStart, h.NewStart+h.NewLines-1)
}

// reviewHunk answers reprise.undoHunk (keep false) and reprise.keepHunk: one hunk undone or kept,
// and the user told which with window/showMessage, or why not.
func (s *server) reviewHunk(ctx context.Context, a HunkArgs, keep bool) (any, error) {
	command := CommandUndoHunk
	if keep {
		command = CommandKeepHunk
	}
	switch {
	case strings.TrimSpace(a.Hunk) == "":
		return nil, invalidParams("%s: hunk is required", command)
	case a.Turn < 0:
		return nil, invalidParams("%s: turn must be a turn number (1 or more)", command)
	case a.Turn == 0:
		a.Turn = 1
	}
	l, err := s.sessions.use(a.SessionID)
	if err != nil {
		return nil, err
	}
	defer s.sessions.release(l)
	what := "the change"
	if a.Path != "" {
		what += " in " + a.Path
	}
	if keep {
		out, err := s.sessions.runner.Do(ctx, l, runner.Verb{Kind: runner.Keep, Turn: a.Turn, Hunks: []string{a.Hunk}}, nil)
		if err != nil {
			s.showMessage(protocol.MessageTypeWarning, fmt.Sprintf("Reprise: %s not kept: %v", what, err))
			return nil, restoreError(command, err)
		}
		s.showMessage(protocol.MessageTypeInfo, fmt.Sprintf("Reprise: kept %s", what))
		return keepResult{Kept: out.Files}, nil
	}
	did, err := s.sessions.runner.Do(ctx, l, runner.Verb{Kind: runner.Restore, Turn: a.Turn, Hunks: []string{a.Hunk}}, nil)
	if err == nil && len(did.Hunks) == 0 {
		err = errors.New("nothing to undo")
		if len(did.Refused) > 0 {
			err = errors.New(did.Refused[0].Reason)
		}
	}
	if err != nil {
		s.showMessage(protocol.MessageTypeWarning, fmt.Sprintf("Reprise: %s not undone: %v", what, err))
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, fmt.Sprintf("%s: %v", command, err))
	}
	s.showMessage(protocol.MessageTypeInfo, fmt.Sprintf("Reprise: undid %s", what))
	return restoreResult{Restored: []string{}, Hunks: did.Hunks}, nil
}

// undoFile answers reprise.undoFile: the file is restored to before the agent's first change to
// it in the session, or refused, and the user is told which with window/showMessage.
func (s *server) undoFile(a UndoFileArgs) (any, error) {
	if strings.TrimSpace(a.Path) == "" {
		return nil, invalidParams("%s: path is required", CommandUndoFile)
	}
	l, err := s.sessions.use(a.SessionID)
	if err != nil {
		return nil, err
	}
	defer s.sessions.release(l)
	did, err := s.sessions.runner.Do(context.Background(), l, runner.Verb{Kind: runner.Restore, Turn: 1, Paths: []string{a.Path}}, nil)
	restored, refused := did.Files, did.Refused
	switch {
	case err != nil:
		s.showMessage(protocol.MessageTypeWarning, fmt.Sprintf("Reprise: %s not undone: %v", a.Path, err))
		return nil, restoreError(CommandUndoFile, err)
	case len(restored) == 0:
		why := "nothing to restore"
		if len(refused) > 0 {
			why = refused[0].Reason
		}
		s.showMessage(protocol.MessageTypeWarning, fmt.Sprintf("Reprise: %s not undone: %s", a.Path, why))
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, fmt.Sprintf("%s: %s not undone: %s", CommandUndoFile, a.Path, why))
	}
	s.showMessage(protocol.MessageTypeInfo, fmt.Sprintf("Reprise: undid the agent's change to %s", strings.Join(restored, ", ")))
	return restoreResult{Restored: restored}, nil
}

// showChanges answers reprise.showChanges: the files changed since the session began, one a line
// with their state and counts, shown with window/showMessage and returned as text.
func (s *server) showChanges(l *runner.Live) (any, error) {
	cs, err := l.Files().Changes(1)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", CommandShowChanges, err)
	}
	var b strings.Builder
	if len(cs) == 0 {
		b.WriteString("Reprise: the agent changed no file in this session.")
	} else {
		fmt.Fprintf(&b, "Reprise: the agent changed %d file(s):", len(cs))
		for _, c := range cs {
			fmt.Fprintf(&b, "\n%s (%s) +%d −%d", c.Path, c.State, c.Added, c.Removed)
			if c.UserChanged {
				b.WriteString(", edited since by the user")
			}
		}
	}
	s.showMessage(protocol.MessageTypeInfo, b.String())
	return map[string]string{"text": b.String()}, nil
}
