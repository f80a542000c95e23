package lsp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/session"
	"github.com/reprise-dev/reprise/agent/tools"
)

// sessionSet holds the connection's sessions; several can run turns at once.
type sessionSet struct {
	srv     *Server
	store   *session.Store // nil when the state directory is unusable: sessions are not saved
	mu      sync.Mutex     // guards byID, current and each live's turn fields
	byID    map[string]*live
	current string
	models  map[string]modelEntry // built clients by model name: one client and one Models.Get each
}

type modelEntry struct {
	m     agent.Model
	limit int
}

// model returns the client for a model name, building it once.
func (ss *sessionSet) model(ctx context.Context, name string) (agent.Model, int, error) {
	ss.mu.Lock()
	e, ok := ss.models[name]
	ss.mu.Unlock()
	if ok {
		return e.m, e.limit, nil
	}
	m, limit, err := ss.srv.opts.NewModel(ctx, name)
	if err != nil {
		return nil, 0, err // not cached: the user may set the key and try again
	}
	ss.mu.Lock()
	ss.models[name] = modelEntry{m, limit}
	ss.mu.Unlock()
	return m, limit, nil
}

// live is one session and its running turn, if any.
type live struct {
	s        *agent.Session
	commands *tools.Policy // the session's command policy ("always allow" lasts the session)
	title    string
	created  time.Time
	log      *session.Log       // nil when not saved
	cancel   context.CancelFunc // the running turn's, nil when idle
	done     chan struct{}      // closed when the running turn ends
}

func newSessionSet(srv *Server) *sessionSet {
	return &sessionSet{srv: srv, byID: map[string]*live{}, models: map[string]modelEntry{}}
}

// errModelUnavailable wraps a failure to build the model client (e.g. no API key).
type errModelUnavailable struct{ err error }

func (e errModelUnavailable) Error() string { return e.err.Error() }
func (e errModelUnavailable) Unwrap() error { return e.err }

// create starts a new session with the settings in force and makes it current.
func (ss *sessionSet) create(ctx context.Context) (*live, error) {
	srv := ss.srv
	c := srv.cfg.get()
	model, limit, err := ss.model(ctx, c.model)
	if err != nil {
		return nil, errModelUnavailable{err}
	}
	id := agent.NewID(time.Now())
	l := &live{commands: tools.NewPolicy(c.allow, nil), created: time.Now()}
	opts := ss.agentOptions(id, c, model, limit, l.commands)
	if ss.store != nil {
		log, err := ss.store.Create(session.Meta{ID: id, Workspace: srv.root, Model: c.model, Created: l.created})
		if err != nil {
			srv.log.Warn("session not saved", "session", id, "error", err)
		} else {
			l.log = log
			opts.Journal, opts.Blobs = log, log
		}
	}
	s, err := agent.New(opts)
	if err != nil {
		if l.log != nil {
			l.log.Close()
		}
		return nil, fmt.Errorf("new session: %w", err)
	}
	l.s = s
	ss.add(l)
	return l, nil
}

// agentOptions are the options every session of this connection gets.
func (ss *sessionSet) agentOptions(id string, c config, model agent.Model, limit int, commands *tools.Policy) agent.Options {
	srv := ss.srv
	dir := filepath.Join(os.TempDir(), "reprise-"+id)
	if ss.store != nil {
		dir = ss.store.Dir(id)
	}
	return agent.Options{
		ID:              id,
		Workspace:       srv.root,
		Model:           model,
		ModelName:       c.model,
		InputTokenLimit: limit,
		Policy:          c.policy,
		Prices:          c.prices,
		Commands:        commands,
		Sandbox:         srv.sandbox(c),
		Approver:        approver{srv: srv, sessionID: id},
		StateDir:        dir,
		Stream:          true,
		Overlay:         srv.docs.overlay,
		Guard:           srv.docs.guard,
		Logger:          srv.opts.Logger,
	}
}

func (ss *sessionSet) add(l *live) {
	ss.mu.Lock()
	ss.byID[l.s.ID()] = l
	ss.current = l.s.ID()
	ss.mu.Unlock()
}

// load resumes a saved session: its history as last sent, its checkpoints and state.
func (ss *sessionSet) load(ctx context.Context, id string) (*live, error) {
	if ss.store == nil {
		return nil, invalidParams("unknown session %q (sessions are not saved: see the server log)", id)
	}
	log, snap, err := ss.store.Resume(id)
	switch {
	case errors.Is(err, session.ErrNotFound):
		return nil, invalidParams("unknown session %q", id)
	case errors.Is(err, session.ErrLocked):
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, err.Error()+"; close it there first")
	case err != nil:
		return nil, err
	}
	for _, w := range snap.Warnings {
		ss.srv.log.Warn("session log damaged; skipped what could not be read", "session", id, "warning", w)
	}
	c := ss.srv.cfg.get()
	name := snap.Meta.Model
	if name == "" {
		name = c.model
	}
	model, limit, err := ss.model(ctx, name)
	if err != nil {
		log.Close()
		return nil, errModelUnavailable{err}
	}
	c.model = name
	l := &live{commands: tools.NewPolicy(c.allow, nil), created: snap.Meta.Created, title: snap.Title, log: log}
	opts := ss.agentOptions(id, c, model, limit, l.commands)
	opts.Journal, opts.Blobs = log, log
	s, err := agent.Resume(opts, snap)
	if err != nil {
		log.Close()
		return nil, err
	}
	l.s = s
	ss.add(l)
	return l, nil
}

// get returns the session with id, or the current one when id is empty.
func (ss *sessionSet) get(id string) (*live, error) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if id == "" {
		id = ss.current
	}
	l, ok := ss.byID[id]
	if !ok {
		if id == "" {
			return nil, errNoSession
		}
		return nil, invalidParams("unknown session %q", id)
	}
	return l, nil
}

var errNoSession = invalidParams("no session yet: send reprise.ask or reprise.newSession first")

// resume makes id the current session, loading it from disk if it is not live.
func (ss *sessionSet) resume(ctx context.Context, id string) (*live, error) {
	l, err := ss.get(id)
	if err != nil {
		if l, err = ss.load(ctx, id); err != nil {
			return nil, err
		}
	}
	ss.mu.Lock()
	ss.current = l.s.ID()
	ss.mu.Unlock()
	return l, nil
}

// startTurn runs text as a turn of l in the background; its events are forwarded to the client.
func (ss *sessionSet) startTurn(l *live, text string) error {
	srv := ss.srv
	ss.mu.Lock()
	if l.cancel != nil {
		ss.mu.Unlock()
		return invalidParams("session %s is already running a turn: cancel it or wait for turn_end", l.s.ID())
	}
	if l.title == "" {
		l.title = titleOf(text)
	}
	ctx, cancel := context.WithCancel(srv.ctx)
	done := make(chan struct{})
	l.cancel, l.done = cancel, done
	ss.mu.Unlock()
	// The plain client's progress meter is created before reprise.ask is answered: some clients
	// (Emacs 28's jsonrpc) stop reading right after a reply and would hold the create request.
	out := srv.newTurnOutput(l.s.ID())
	out.begin(l.s.Usage())
	srv.spawn(func() { // ends when the turn ends: on its own, by reprise.cancel, or at shutdown
		defer close(done)
		defer cancel()
		for ev, err := range l.s.Run(ctx, text) {
			if err != nil { // a model error also ends the turn with turn_end, which says it
				continue
			}
			if ev.Type == agent.EventTurnEnd { // idle before the client hears of it
				ss.mu.Lock()
				l.cancel = nil
				ss.mu.Unlock()
			}
			out.event(ev)
		}
	})
	return nil
}

// cancelTurn cancels l's running turn and waits for it to end; false if none was running.
func (ss *sessionSet) cancelTurn(ctx context.Context, l *live) bool {
	ss.mu.Lock()
	cancel, done := l.cancel, l.done
	ss.mu.Unlock()
	if cancel == nil {
		return false
	}
	cancel()
	select {
	case <-done:
	case <-ctx.Done():
	}
	return true
}

// cancelAll cancels every running turn (shutdown).
func (ss *sessionSet) cancelAll() {
	ss.mu.Lock()
	for _, l := range ss.byID {
		if l.cancel != nil {
			l.cancel()
		}
	}
	ss.mu.Unlock()
}

// closeAll stops background compactions once the turns are done.
func (ss *sessionSet) closeAll() {
	ss.mu.Lock()
	all := make([]*live, 0, len(ss.byID))
	for _, l := range ss.byID {
		all = append(all, l)
	}
	ss.mu.Unlock()
	for _, l := range all {
		l.s.Close()
		if l.log != nil {
			if err := l.log.Close(); err != nil {
				ss.srv.log.Warn("session log not closed cleanly", "session", l.s.ID(), "error", err)
			}
		}
	}
}

// list describes the sessions, most recent activity first.
func (ss *sessionSet) list() []SessionInfo {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	out := make([]SessionInfo, 0, len(ss.byID))
	for id, l := range ss.byID {
		r := l.s.Context()
		out = append(out, SessionInfo{
			SessionID:    id,
			Title:        l.title,
			LastActivity: l.s.LastActivity().UTC().Format(time.RFC3339),
			Turns:        r.Calls,
			Used:         r.Used,
			Size:         r.Size,
			Percent:      r.Percent,
			Running:      l.cancel != nil,
			Current:      id == ss.current,
		})
	}
	if ss.store != nil {
		saved, err := ss.store.List()
		if err != nil {
			ss.srv.log.Warn("saved sessions not listed", "error", err)
		}
		for _, sv := range saved {
			if _, live := ss.byID[sv.ID]; live {
				continue
			}
			info := SessionInfo{SessionID: sv.ID, Title: sv.Title, Turns: sv.Calls, Used: sv.LastPrompt, Saved: true, Error: sv.Err}
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

// all returns every session.
func (ss *sessionSet) all() []*live {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	out := make([]*live, 0, len(ss.byID))
	for _, l := range ss.byID {
		out = append(out, l)
	}
	return out
}

// applyConfig gives every session the new settings and re-emits its usage.
func (ss *sessionSet) applyConfig(c config) {
	for _, l := range ss.all() {
		if err := l.s.SetPolicy(c.policy); err != nil {
			ss.srv.log.Warn("settings not applied", "session", l.s.ID(), "error", err)
			continue
		}
		l.s.SetSandbox(ss.srv.sandbox(c))
		for _, a := range c.allow {
			l.commands.AllowAlways(a)
		}
		ss.srv.emitUsage(l.s.ID(), l.s.Usage())
	}
}

// titleOf makes a session title from its first request.
func titleOf(text string) string {
	line := strings.TrimSpace(text)
	if i := strings.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	if r := []rune(line); len(r) > 60 {
		line = string(r[:59]) + "…"
	}
	return line
}
