package lsp

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/agent/runner"
)

// sessionSet is the connection's view of the runner's sessions: the current one, and the
// runner's errors worded for the editor. Several sessions can run turns at once; at most
// limits.MaxSessions are open (the runner's cap).
type sessionSet struct {
	srv    *server
	store  *journal.Store // nil when the state directory is unusable: sessions are not saved
	runner *runner.Runner // hosts the sessions
	models *modelCache    // the clients by model name
	// providerModels are the clients of another provider's models, by providerKey.
	providerModels *modelCache

	mu      sync.Mutex // guards current
	current string
}

func newSessionSet(srv *server) *sessionSet {
	ss := &sessionSet{srv: srv, models: newModelCache(srv.opts.NewModel), providerModels: newModelCache(srv.buildProviderModel)}
	ss.runner = &runner.Runner{
		StateHome: srv.opts.StateHome, Models: ss.model, Observe: srv.opts.Observe, ObserveEvents: srv.opts.ObserveEvents,
		MaxSessions: srv.opts.limits.MaxSessions, IdleAfter: srv.opts.IdleAfter, Logger: srv.log,
		Events: func(id string, ev agent.Event) { srv.verbEvents(id)(ev) },
	}
	return ss
}

// errModelUnavailable wraps a failure to build the model client (e.g. no API key).
type errModelUnavailable struct{ err error }

func (e errModelUnavailable) Error() string { return e.err.Error() }
func (e errModelUnavailable) Unwrap() error { return e.err }

// create starts a new session with the settings in force and makes it current. The caller
// uses it until it calls release.
func (ss *sessionSet) create(ctx context.Context) (*runner.Live, error) {
	c := ss.srv.cfg.get()
	id := agent.NewID(time.Now())
	// On disk with the first turn (Lazy): reprise.newSession in a loop leaves no directories.
	l, err := ss.runner.Open(ctx, ss.spec(ctx, id, c))
	if err != nil {
		return nil, runnerError(err)
	}
	return ss.opened(l), nil
}

// spec is what every session of this connection gets, with the settings c. The MCP servers
// start with the first session that needs them; they are the connection's, shared.
func (ss *sessionSet) spec(ctx context.Context, id string, c config) runner.Spec {
	srv := ss.srv
	spec := runner.Spec{
		Config: agent.Config{
			ContextPolicy: c.policy, Prices: c.prices, Catalog: c.catalog, Secrets: srv.secretsFor(c),
			Approver: approver{srv: srv, sessionID: id}, Stream: true, MaxTurnRequests: c.maxTurnRequests,
			Overlay: srv.docs.overlay, Guard: srv.docs.guard, Logger: srv.opts.Logger, Subagents: c.subagents,
		},
		ID: id, Workspace: srv.root, Model: c.model, Thinking: c.thinking, CompactionModel: c.compactionModel,
		Allow: c.allow, Sandbox: c.sandboxConfig(srv.root), Lazy: true,
	}
	if m := srv.mcp.external(ctx, c); m != nil {
		spec.External = m
	}
	return spec
}

// opened makes l, just opened or reopened, current, and tells the sandbox's notices.
func (ss *sessionSet) opened(l *runner.Live) *runner.Live {
	ss.srv.sandboxNotices(l.Sandbox)
	for _, w := range l.Warnings {
		ss.srv.log.Warn("session log damaged; skipped what could not be read", "session", l.ID(), "warning", w)
	}
	ss.setCurrent(l.ID())
	return l
}

func (ss *sessionSet) setCurrent(id string) {
	ss.mu.Lock()
	ss.current = id
	ss.mu.Unlock()
}

// runnerError words what the runner could not do for the editor.
func runnerError(err error) error {
	var me runner.ModelError
	var full runner.FullError
	switch {
	case errors.As(err, &me):
		return errModelUnavailable{me.Err}
	case errors.As(err, &full):
		return jsonrpc2.NewError(jsonrpc2.InvalidRequest, full.Error()+"; cancel a turn or wait for its turn_end, then try again")
	}
	return err
}

// release ends a use of l begun by use, create or resume.
func (ss *sessionSet) release(l *runner.Live) { ss.runner.Release(l) }

// use returns the open session with id, or the current one when id is empty; it is not closed
// to make room for another until the caller calls release. A session the runner closed while
// idle or at the cap is reopened, within the connection's context: the commands that use a
// session have no request context of their own to give.
func (ss *sessionSet) use(id string) (*runner.Live, error) {
	ss.mu.Lock()
	cur := ss.current
	ss.mu.Unlock()
	if id == "" && cur == "" {
		return nil, errNoSession
	}
	l, err := ss.runner.Use(ss.srv.ctx, cmp.Or(id, cur))
	switch {
	case err == nil:
		return l, nil
	case id == "" && (errors.Is(err, runner.ErrNotOpen) || errors.Is(err, journal.ErrNotFound)):
		return nil, errNoSession // the current session is gone: its log was deleted
	case !errors.Is(err, runner.ErrNotOpen): // it could not be reopened
		return nil, runnerError(err)
	case ss.saved(id):
		return nil, invalidParams("session %s is not open (it is saved): reprise.resume reopens it", id)
	}
	return nil, invalidParams("unknown session %q", id)
}

var errNoSession = invalidParams("no session yet: send reprise.ask or reprise.newSession first")

// saved reports whether id, a valid id, has a log on disk.
func (ss *sessionSet) saved(id string) bool {
	return ss.store != nil && ss.store.Saved(id)
}

// resume makes id the current session, loading it from disk if it is not open. The caller uses
// it until it calls release.
func (ss *sessionSet) resume(ctx context.Context, id string) (*runner.Live, error) {
	if l, err := ss.runner.Use(ctx, id); err == nil {
		ss.setCurrent(id)
		return l, nil
	}
	if ss.store == nil {
		return nil, invalidParams("unknown session %q (sessions are not saved: see the server log)", id)
	}
	l, err := ss.runner.Resume(ctx, id, ss.spec(ctx, id, ss.srv.cfg.get()))
	switch {
	case err == nil:
		return ss.opened(l), nil
	case errors.Is(err, journal.ErrNotFound):
		return nil, invalidParams("unknown session %q", id)
	case errors.Is(err, journal.ErrLocked):
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, err.Error()+"; close it there first")
	}
	return nil, runnerError(err)
}

// startTurn runs text as a turn of l in the background; its events are forwarded to the client.
func (ss *sessionSet) startTurn(l *runner.Live, text string) error {
	srv := ss.srv
	t, err := ss.runner.Start(srv.ctx, l, false)
	if errors.Is(err, runner.ErrBusy) {
		return invalidParams("session %s is already running a turn: cancel it or wait for turn_end", l.ID())
	}
	if err != nil {
		return err
	}
	events := t.Run(text)
	// The plain client's progress meter is created before reprise.ask is answered: some clients
	// (Emacs 28's jsonrpc) stop reading right after a reply and would hold the create request.
	out := srv.newTurnOutput(l.ID())
	out.begin(l.Usage())
	spawned := srv.spawn(func() { // ends when the turn ends: on its own, by reprise.cancel, or at shutdown
		defer t.End()
		for ev, err := range events {
			if err != nil { // a model error also ends the turn with turn_end, which says it
				continue
			}
			out.event(ev)
		}
	})
	if !spawned { // the server is stopping
		t.End()
		return jsonrpc2.NewError(jsonrpc2.InvalidRequest, "the server is shutting down")
	}
	return nil
}

// cancelTurn cancels l's running turn and waits for it to end; false if none was running.
func (ss *sessionSet) cancelTurn(ctx context.Context, l *runner.Live) bool {
	return ss.runner.Stop(ctx, l)
}

// isOpen reports whether id is open in this connection.
func (ss *sessionSet) isOpen(id string) bool { return ss.runner.Lookup(id) != nil }

// list describes the sessions, most recent activity first. Only the set of open sessions is
// read under ss.mu: the sessions' own state and the saved ones' summaries on disk are read after,
// so a listing never holds up a command or a turn that needs the set. A session opened or closed
// meanwhile is listed as it was when the set was read, or as saved.
func (ss *sessionSet) list() []SessionInfo {
	ss.mu.Lock()
	current := ss.current
	ss.mu.Unlock()
	live := ss.runner.List()
	open := make(map[string]bool, len(live))
	out := make([]SessionInfo, 0, len(live))
	for _, l := range live {
		id := l.ID()
		open[id] = true
		r := l.Context()
		out = append(out, SessionInfo{
			SessionID:    id,
			Title:        ss.runner.Title(l),
			LastActivity: l.LastActivity().UTC().Format(time.RFC3339),
			Turns:        r.Turns,
			Calls:        r.Calls,
			Used:         r.Used,
			Size:         r.Size,
			Percent:      r.Percent,
			Running:      ss.runner.Running(l),
			Current:      id == current,
		})
	}
	if ss.store != nil {
		saved, err := ss.store.List(func(id string) bool { return open[id] })
		if err != nil {
			ss.srv.log.Warn("saved sessions not listed", "error", err)
		}
		for _, sv := range saved {
			if sv.Subagent != "" {
				continue // its parent's: reprise.export with subagentId gives its transcript
			}
			// The current session may be closed while idle: it is still the one commands address.
			info := SessionInfo{SessionID: sv.ID, Title: sv.Title, Turns: sv.Turns, Calls: sv.Calls, Used: sv.LastPrompt, Saved: true, Error: sv.Err,
				Current: sv.ID == current}
			if !sv.LastActivity.IsZero() {
				info.LastActivity = sv.LastActivity.UTC().Format(time.RFC3339)
			}
			out = append(out, info)
		}
	}
	slices.SortFunc(out, func(a, b SessionInfo) int {
		return strings.Compare(b.LastActivity+b.SessionID, a.LastActivity+a.SessionID)
	})
	return out
}

// all returns every open session.
func (ss *sessionSet) all() []*runner.Live { return ss.runner.List() }

// applyConfig gives every session the new settings; the runner tells their usage.
func (ss *sessionSet) applyConfig(c config) {
	ss.runner.Reconfigure(runner.Settings{Policy: c.policy, Sandbox: ss.srv.sandbox(c), Allow: c.allow})
}
