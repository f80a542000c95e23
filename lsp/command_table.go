package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"go.lsp.dev/jsonrpc2"

	"github.com/reprise-dev/reprise/agent/runner"
	"github.com/reprise-dev/reprise/contextwin"
)

// handler runs one workspace/executeCommand. Each is built by one of the adapters below, which
// decode the argument object one way (decodeArg) and hand the handler a typed value.
type handler func(s *server, ctx context.Context, name string, arg json.RawMessage) (any, error)

// command is one entry of the command table.
type command struct {
	run handler
	// anyWorkspace: the command reads only the server's own state, so it runs whatever the
	// workspace, before the user has confirmed a broad one (roots.go).
	anyWorkspace bool
}

// commands is the table executeCommand dispatches on; serverCommands lists the same names in
// the order the server announces them (TestCommandTableMatchesAnnounced).
var commands = map[string]command{
	CommandAsk: {run: args(true, (*server).ask)},
	CommandCancel: {run: withSession(func(s *server, ctx context.Context, l *runner.Live) (any, error) {
		return map[string]bool{"cancelled": s.sessions.cancelTurn(ctx, l)}, nil
	})},
	CommandCompact: {run: args(false, (*server).compact)}, // every field optional: some clients send {} back as null
	CommandContext: {run: withSession(func(s *server, _ context.Context, l *runner.Live) (any, error) { return s.contextReport(l), nil })},
	CommandCheckpoints: {run: args(false, func(s *server, _ context.Context, a SessionArgs) (any, error) {
		return s.checkpointList(a)
	})},
	CommandCheckpoint:     {run: args(true, func(s *server, _ context.Context, a checkpointArgs) (any, error) { return s.checkpoint(a) })},
	CommandSessions:       {run: noArgs(func(s *server, _ context.Context) (any, error) { return s.sessions.list(), nil }), anyWorkspace: true},
	CommandNewSession:     {run: noArgs((*server).newSession)},
	CommandResume:         {run: args(true, (*server).resume)},
	CommandRestore:        {run: args(true, (*server).restore)},
	CommandChanges:        {run: args(false, func(s *server, _ context.Context, a ChangesArgs) (any, error) { return s.changes(a) })},
	CommandUndoFile:       {run: args(true, func(s *server, _ context.Context, a UndoFileArgs) (any, error) { return s.undoFile(a) })},
	CommandKeep:           {run: args(true, func(s *server, _ context.Context, a KeepArgs) (any, error) { return s.keep(a) })},
	CommandUndoHunk:       {run: args(true, func(s *server, ctx context.Context, a HunkArgs) (any, error) { return s.reviewHunk(ctx, a, false) })},
	CommandKeepHunk:       {run: args(true, func(s *server, ctx context.Context, a HunkArgs) (any, error) { return s.reviewHunk(ctx, a, true) })},
	CommandShowChanges:    {run: withSession(func(s *server, _ context.Context, l *runner.Live) (any, error) { return s.showChanges(l) })},
	CommandUndoCompaction: {run: withSession((*server).undoCompaction)},
	CommandHistory: {run: withSession(func(s *server, _ context.Context, l *runner.Live) (any, error) {
		return historyResult{SessionID: l.ID(), Entries: historyOf(s.root, l.Transcript()), Pins: contextwin.PinInfos(l.Conversation().Pins())}, nil
	})},
	CommandShowContext: {run: withSession(func(s *server, _ context.Context, l *runner.Live) (any, error) { return s.showContext(l), nil })},
	CommandMCP:         {run: noArgs(func(s *server, _ context.Context) (any, error) { return s.mcp.status(), nil }), anyWorkspace: true},
	CommandModels:      {run: args(false, (*server).models), anyWorkspace: true},
	CommandPin:         {run: args(true, (*server).pin)},
	CommandUnpin:       {run: args(true, (*server).unpin)},
	CommandForgetNote:  {run: args(true, (*server).forgetNote)},
	CommandFork:        {run: args(false, (*server).fork)},
	CommandExport:      {run: args(false, (*server).export)},
	CommandCancelSubagent: {run: args(true, func(s *server, _ context.Context, a CancelSubagentArgs) (any, error) {
		return s.cancelSubagent(a)
	})},
	CommandPins: {run: withSession(func(s *server, _ context.Context, l *runner.Live) (any, error) {
		return pinsResult{Pins: contextwin.PinInfos(l.Conversation().Pins())}, nil
	})},
}

// args adapts a handler of a typed argument object; required says whether it may be absent.
func args[A any, R any](required bool, fn func(*server, context.Context, A) (R, error)) handler {
	return func(s *server, ctx context.Context, name string, raw json.RawMessage) (any, error) {
		var a A
		if err := decodeArg(name, raw, &a, required); err != nil {
			return nil, err
		}
		return fn(s, ctx, a)
	}
}

// withSession adapts a handler of one session, {sessionId?} (empty: the current one), held in
// use while it runs.
func withSession(fn func(*server, context.Context, *runner.Live) (any, error)) handler {
	return func(s *server, ctx context.Context, name string, raw json.RawMessage) (any, error) {
		l, err := s.sessionArg(name, raw)
		if err != nil {
			return nil, err
		}
		defer s.sessions.release(l)
		return fn(s, ctx, l)
	}
}

// noArgs adapts a handler that reads no argument; one sent anyway must still be an object.
func noArgs(fn func(*server, context.Context) (any, error)) handler {
	return args(false, func(s *server, ctx context.Context, _ struct{}) (any, error) { return fn(s, ctx) })
}

// commandError maps what a handler returned to the one shape the editors get: a protocol error
// as it is; a failure to reach the model as CodeModelUnavailable; anything else InvalidRequest,
// prefixed with the command's name.
func commandError(name string, err error) error {
	var rpc *jsonrpc2.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &rpc):
		return err
	case errors.As(err, new(errModelUnavailable)):
		return modelError(err)
	}
	return jsonrpc2.NewError(jsonrpc2.InvalidRequest, fmt.Sprintf("%s: %v", name, err))
}
