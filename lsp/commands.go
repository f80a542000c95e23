package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/agent/runner"
	"github.com/reprise-dev/reprise/contextwin"
)

// executeCommand runs one of the commands of the table (command_table.go). Arguments are
// [ {…} ]; anything wrong with them is InvalidParams with a message that names the problem.
func (s *server) executeCommand(ctx context.Context, raw json.RawMessage) (any, error) {
	var p struct {
		Command   string            `json:"command"`
		Arguments []json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, invalidParams("workspace/executeCommand: %v", err)
	}
	if p.Command == "" {
		return nil, invalidParams("workspace/executeCommand: command is required")
	}
	c, ok := commands[p.Command]
	if !ok {
		return nil, invalidParams("unknown command %q; the server offers %s", p.Command, strings.Join(serverCommands, ", "))
	}
	var arg json.RawMessage
	if len(p.Arguments) > 0 {
		arg = p.Arguments[0]
	}
	if err := checkSessionID(p.Command, arg); err != nil {
		return nil, err
	}
	if !c.anyWorkspace {
		if ask, err := s.roots.check(p.Command); err != nil {
			if ask {
				s.askRoot()
			}
			return nil, err
		}
	}
	res, err := c.run(s, ctx, p.Command, arg)
	if err != nil {
		return nil, commandError(p.Command, err)
	}
	return res, nil
}

// checkpointList answers reprise.checkpoints: a session's checkpoints, live or saved.
func (s *server) checkpointList(a SessionArgs) ([]CheckpointInfo, error) {
	cps, _, err := s.checkpointsOf(a.SessionID)
	if err != nil {
		return nil, err
	}
	out := []CheckpointInfo{}
	for _, cp := range cps {
		out = append(out, checkpointInfo(cp))
	}
	return out, nil
}

// checkpoint answers reprise.checkpoint: one checkpoint with its summary.
func (s *server) checkpoint(a checkpointArgs) (checkpointResult, error) {
	cps, id, err := s.checkpointsOf(a.SessionID)
	if err != nil {
		return checkpointResult{}, err
	}
	if a.N < 1 || a.N > len(cps) {
		return checkpointResult{}, invalidParams("%s: no checkpoint %d in session %s (it has %d)", CommandCheckpoint, a.N, id, len(cps))
	}
	cp := cps[a.N-1]
	return checkpointResult{CheckpointInfo: checkpointInfo(cp), Summary: cp.Summary, Markdown: cp.Markdown()}, nil
}

// newSession answers reprise.newSession: a session that becomes the current one.
func (s *server) newSession(ctx context.Context) (any, error) {
	l, err := s.sessions.create(ctx)
	if err != nil {
		return nil, err
	}
	defer s.sessions.release(l)
	return SessionResult{SessionID: l.ID()}, nil
}

// resume answers reprise.resume: a saved session loaded and made current.
func (s *server) resume(ctx context.Context, a SessionArgs) (any, error) {
	if a.SessionID == "" {
		return nil, invalidParams("%s: sessionId is required", CommandResume)
	}
	l, err := s.sessions.resume(ctx, a.SessionID)
	if err != nil {
		return nil, err
	}
	defer s.sessions.release(l)
	return SessionResult{SessionID: l.ID()}, nil
}

// restore answers reprise.restore: the files as they were before a turn, all or some.
func (s *server) restore(ctx context.Context, a RestoreArgs) (any, error) {
	if a.Turn < 1 {
		return nil, invalidParams("%s: turn must be a turn number (1 or more)", CommandRestore)
	}
	l, err := s.sessions.use(a.SessionID)
	if err != nil {
		return nil, err
	}
	defer s.sessions.release(l)
	if a.Hunks != nil {
		return s.restoreHunks(ctx, l, a)
	}
	if a.Paths != nil {
		return s.restorePaths(ctx, l, a)
	}
	out, err := s.sessions.runner.Do(ctx, l, runner.Verb{Kind: runner.Restore, Turn: a.Turn}, nil)
	if err != nil {
		return nil, err
	}
	return restoreResult{Restored: out.Files}, nil
}

// undoCompaction answers reprise.undoCompaction: the last compaction taken back.
func (s *server) undoCompaction(ctx context.Context, l *runner.Live) (any, error) {
	out, err := s.sessions.runner.Do(ctx, l, runner.Verb{Kind: runner.UndoCompaction}, s.verbEvents(l.ID()))
	if err != nil {
		return nil, err
	}
	return map[string]any{"undone": checkpointInfo(out.Checkpoint)}, nil
}

// checkSessionID refuses a sessionId that could not be one, whatever the command: ids end up in
// paths under the session store, and "../x" must never reach one. Empty means the current
// session. Decoding errors are left to decodeArg, which words them per command.
func checkSessionID(command string, arg json.RawMessage) error {
	var a struct {
		SessionID *string `json:"sessionId"`
	}
	if len(arg) == 0 || arg[0] != '{' || json.Unmarshal(arg, &a) != nil || a.SessionID == nil || *a.SessionID == "" {
		return nil
	}
	if err := journal.CheckID(*a.SessionID); err != nil {
		return invalidParams("%s: invalid sessionId %s: %v", command, clip(strconv.Quote(*a.SessionID), 80), err)
	}
	return nil
}

// decodeArg decodes a command's argument object, turning decoding errors into messages a user can
// act on.
func decodeArg(command string, raw json.RawMessage, v any, required bool) error {
	if len(raw) == 0 || string(raw) == "null" {
		if required {
			return invalidParams("%s: missing argument object (arguments: [ {…} ])", command)
		}
		return nil
	}
	if raw[0] != '{' {
		return invalidParams("%s: the argument must be an object, got %s", command, clip(string(raw), 40))
	}
	if err := json.Unmarshal(raw, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			kind := "a " + te.Type.Kind().String()
			if te.Type.Kind() == reflect.Slice { // JSON's word, not Go's
				kind = "an array"
			}
			return invalidParams("%s: %s must be %s, got a %s", command, te.Field, kind, te.Value)
		}
		return invalidParams("%s: %v", command, err)
	}
	return nil
}

// sessionArg reads {sessionId} (empty means the current session) and returns that session in
// use: the caller releases it.
func (s *server) sessionArg(command string, arg json.RawMessage) (*runner.Live, error) {
	var a SessionArgs
	if err := decodeArg(command, arg, &a, false); err != nil {
		return nil, err
	}
	return s.sessions.use(a.SessionID)
}

// ask starts a turn and answers at once with the session id; the turn streams.
func (s *server) ask(ctx context.Context, a AskArgs) (any, error) {
	if strings.TrimSpace(a.Text) == "" {
		return nil, invalidParams("%s: text is required", CommandAsk)
	}
	var l *runner.Live
	var err error
	if a.SessionID != "" {
		l, err = s.sessions.use(a.SessionID)
	} else if l, err = s.sessions.use(""); errors.Is(err, errNoSession) {
		l, err = s.sessions.create(ctx)
	}
	if err != nil {
		return nil, err
	}
	defer s.sessions.release(l)
	if err := s.sessions.startTurn(l, a.Text); err != nil {
		return nil, err
	}
	return SessionResult{SessionID: l.ID()}, nil
}

// compact runs a manual compaction with work-done progress; cancelling the progress or the
// request abandons it and leaves the history as it was.
func (s *server) compact(ctx context.Context, a compactArgs) (any, error) {
	l, err := s.sessions.use(a.SessionID)
	if err != nil {
		return nil, err
	}
	defer s.sessions.release(l)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	tok := s.createProgress("Reprise: compacting", "starting", 0, true, cancel)
	if split, ok := contextwin.SplitPoint(l.Conversation().History(), l.Context().Policy.KeepRecentTurns); ok {
		tok.report(fmt.Sprintf("summarizing %d messages", split-1), 10)
	}
	out, err := s.sessions.runner.Do(cctx, l, runner.Verb{Kind: runner.Compact, Focus: a.Focus}, s.verbEvents(l.ID()))
	switch {
	case errors.Is(err, contextwin.ErrNothingToCompact):
		tok.end("nothing to compact")
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidRequest, "nothing to compact: session %s has no turns older than the %d kept verbatim", l.ID(), l.Context().Policy.KeepRecentTurns)
	case err != nil && cctx.Err() != nil:
		tok.end("cancelled: the history is unchanged")
		return nil, jsonrpc2.NewError(CodeRequestCancelled, "compaction cancelled: the history is unchanged")
	case err != nil:
		tok.end("failed")
		return nil, err
	}
	cp := out.Checkpoint
	tok.end(fmt.Sprintf("checkpoint %d «%s»: %s → %s tokens", cp.N, cp.Title, contextwin.Kilo(out.Before), contextwin.Kilo(out.After)))
	if !s.client.reprise {
		// Plain clients drop a code action's command result: say it.
		s.showMessage(protocol.MessageTypeInfo, fmt.Sprintf("Reprise: compacted %d messages into checkpoint %d «%s»: %s → %s tokens", cp.Replaced, cp.N, cp.Title, contextwin.Kilo(out.Before), contextwin.Kilo(out.After)))
	}
	return compactResult{Checkpoint: checkpointInfo(cp), Before: out.Before, After: out.After}, nil
}

// checkpointsOf returns a session's checkpoints: a live session's, or a saved one's read from
// its log without loading it (an editor reopening a checkpoint preview after a restart).
func (s *server) checkpointsOf(id string) ([]contextwin.Checkpoint, string, error) {
	l, err := s.sessions.use(id)
	if err == nil {
		defer s.sessions.release(l)
		out, err := s.sessions.runner.Do(context.Background(), l, runner.Verb{Kind: runner.Checkpoints}, nil)
		return out.Checkpoints, l.ID(), err
	}
	if id == "" || s.sessions.store == nil {
		return nil, "", err
	}
	snap, lerr := s.sessions.store.Load(id)
	if lerr != nil {
		return nil, "", err
	}
	return snap.Checkpoints, id, nil
}

// modelError gives a failure to reach the model its own code, so an editor can say "set your key".
func modelError(err error) error {
	var mu errModelUnavailable
	if errors.As(err, &mu) {
		return jsonrpc2.NewError(CodeModelUnavailable, mu.Error())
	}
	return err
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
