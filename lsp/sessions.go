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
	"github.com/reprise-dev/reprise/agent/cmdpolicy"
	"github.com/reprise-dev/reprise/agent/host"
	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/agent/mcp"
)

// sessionSet holds the connection's sessions; several can run turns at once. At most
// limits.MaxSessions are open: each holds a log, its lock and its history.
type sessionSet struct {
	srv    *server
	store  *journal.Store // nil when the state directory is unusable: sessions are not saved
	host   *host.Host     // opens the sessions: set at initialize, with the store
	models *modelCache    // the clients by model name
	// mu guards byID, current, admitted and each live's cancel, done, title, users and touched.
	mu       sync.Mutex
	byID     map[string]*live
	current  string
	admitted int // sessions being created or loaded, counted against the cap
}

// live is one session and its running turn, if any.
type live struct {
	s        *agent.Session
	commands *cmdpolicy.Policy // the session's command policy ("always allow" lasts the session)
	title    string
	created  time.Time
	log      *journal.Log       // nil when not saved
	mcp      *mcp.Manager       // the MCP servers whose tools the session declared; nil = none
	cancel   context.CancelFunc // the running turn's, nil when idle
	done     chan struct{}      // closed when the running turn ends
	users    int                // commands using the session now: it is not closed under them
	touched  time.Time          // when a command last used it
}

// busy reports whether l must stay open: a turn is running or ending, or a command uses it.
// ss.mu must be held.
func (l *live) busy() bool {
	if l.cancel != nil || l.users > 0 {
		return true
	}
	if l.done != nil {
		select {
		case <-l.done:
		default:
			return true // the turn goroutine is still finishing after turn_end
		}
	}
	return false
}

// activity is when l was last used, by a turn or by a command (a session just resumed has an
// old LastActivity). ss.mu must be held.
func (l *live) activity() time.Time {
	if a := l.s.LastActivity(); a.After(l.touched) {
		return a
	}
	return l.touched
}

func newSessionSet(srv *server) *sessionSet {
	return &sessionSet{srv: srv, byID: map[string]*live{}, models: newModelCache(srv.opts.NewModel)}
}

// errModelUnavailable wraps a failure to build the model client (e.g. no API key).
type errModelUnavailable struct{ err error }

func (e errModelUnavailable) Error() string { return e.err.Error() }
func (e errModelUnavailable) Unwrap() error { return e.err }

// create starts a new session with the settings in force and makes it current. The caller
// uses it until it calls release.
func (ss *sessionSet) create(ctx context.Context) (*live, error) {
	c := ss.srv.cfg.get()
	if err := ss.admit(); err != nil {
		return nil, err
	}
	id := agent.NewID(time.Now())
	// On disk with the first turn (Lazy): reprise.newSession in a loop leaves no directories.
	spec := ss.spec(ctx, id, c)
	o, err := ss.host.New(ctx, spec)
	if err != nil {
		ss.unadmit()
		return nil, hostError(err)
	}
	return ss.attach(o, spec, o.Created, ""), nil
}

// spec is what every session of this connection gets, with the settings c. The MCP servers
// start with the first session that needs them.
func (ss *sessionSet) spec(ctx context.Context, id string, c config) host.Spec {
	srv := ss.srv
	spec := host.Spec{
		ID: id, Workspace: srv.root, Model: c.model, Thinking: c.thinking, CompactionModel: c.compactionModel,
		ContextPolicy: c.policy, Prices: c.prices, Catalog: c.catalog, Allow: c.allow,
		Sandbox: c.sandboxConfig(srv.root), Secrets: srv.secrets, Approver: approver{srv: srv, sessionID: id},
		Stream: true, Overlay: srv.docs.overlay, Guard: srv.docs.guard, Logger: srv.opts.Logger, Lazy: true,
		MaxTurnRequests: c.maxTurnRequests,
	}
	if m := srv.mcp.external(ctx, c); m != nil {
		spec.External = m
	}
	return spec
}

// attach makes the session the host opened open and current, in use by the caller.
func (ss *sessionSet) attach(o *host.Open, spec host.Spec, created time.Time, title string) *live {
	ss.srv.sandboxNotices(o.Sandbox)
	l := &live{s: o.Session, commands: o.Commands, log: o.Log, created: created, title: title}
	l.mcp, _ = spec.External.(*mcp.Manager)
	ss.add(l)
	return l
}

// hostError words what the host could not do for the editor.
func hostError(err error) error {
	var me host.ModelError
	if errors.As(err, &me) {
		return errModelUnavailable{me.Err}
	}
	return err
}

// add makes l, admitted before, open and current, in use by the caller.
func (ss *sessionSet) add(l *live) {
	ss.mu.Lock()
	ss.admitted--
	l.users++
	l.touched = time.Now()
	ss.byID[l.s.ID()] = l
	ss.current = l.s.ID()
	ss.mu.Unlock()
}

// admit makes room for one more session. At the cap it closes the least recently active idle
// session, which stays saved for reprise.resume; if every session is busy (a turn running, or a
// command using it) the new one is refused. The caller then calls add, or unadmit on failure.
func (ss *sessionSet) admit() error {
	limit := ss.srv.opts.limits.MaxSessions
	ss.mu.Lock()
	var victim *live
	if len(ss.byID)+ss.admitted >= limit {
		for _, l := range ss.byID {
			if !l.busy() && (victim == nil || l.activity().Before(victim.activity())) {
				victim = l
			}
		}
		if victim == nil {
			ss.mu.Unlock()
			return jsonrpc2.NewError(jsonrpc2.InvalidRequest, fmt.Sprintf(
				"too many open sessions: all %d are busy; cancel a turn or wait for its turn_end, then try again", limit))
		}
		delete(ss.byID, victim.s.ID())
		if ss.current == victim.s.ID() {
			ss.current = ""
		}
	}
	ss.admitted++
	ss.mu.Unlock()
	if victim != nil {
		ss.srv.log.Info("session closed to stay under the limit of open sessions; reprise.resume reopens it",
			"session", victim.s.ID(), "limit", limit)
		ss.close(victim)
	}
	return nil
}

// unadmit gives back a place taken by admit for a session that was not made.
func (ss *sessionSet) unadmit() {
	ss.mu.Lock()
	ss.admitted--
	ss.mu.Unlock()
}

// release ends a use of l begun by use, create, load or resume.
func (ss *sessionSet) release(l *live) {
	ss.mu.Lock()
	l.users--
	ss.mu.Unlock()
}

// close stops l's background work and closes its log, which frees its lock for a later resume.
func (ss *sessionSet) close(l *live) {
	l.s.Close()
	if l.log != nil {
		if err := l.log.Close(); err != nil {
			ss.srv.log.Warn("session log not closed cleanly", "session", l.s.ID(), "error", err)
		}
	}
}

// load resumes a saved session: its history as last sent, its checkpoints and state. The caller
// uses it until it calls release.
func (ss *sessionSet) load(ctx context.Context, id string) (*live, error) {
	if ss.store == nil {
		return nil, invalidParams("unknown session %q (sessions are not saved: see the server log)", id)
	}
	if err := ss.admit(); err != nil {
		return nil, err
	}
	added := false
	defer func() {
		if !added {
			ss.unadmit()
		}
	}()
	spec := ss.spec(ctx, id, ss.srv.cfg.get())
	o, err := ss.host.Resume(ctx, id, spec)
	if err == nil {
		for _, w := range o.Warnings {
			ss.srv.log.Warn("session log damaged; skipped what could not be read", "session", id, "warning", w)
		}
		added = true
		return ss.attach(o, spec, o.Created, o.Title), nil
	}
	switch {
	case errors.Is(err, journal.ErrNotFound):
		return nil, invalidParams("unknown session %q", id)
	case errors.Is(err, journal.ErrLocked):
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, err.Error()+"; close it there first")
	}
	return nil, hostError(err)
}

// use returns the open session with id, or the current one when id is empty; it is not closed
// to make room for another until the caller calls release.
func (ss *sessionSet) use(id string) (*live, error) {
	ss.mu.Lock()
	if id == "" {
		id = ss.current
	}
	l, ok := ss.byID[id]
	if ok {
		l.users++
		l.touched = time.Now()
	}
	ss.mu.Unlock()
	switch {
	case ok:
		return l, nil
	case id == "":
		return nil, errNoSession
	case ss.saved(id):
		return nil, invalidParams("session %s is not open (it is saved): reprise.resume reopens it", id)
	}
	return nil, invalidParams("unknown session %q", id)
}

var errNoSession = invalidParams("no session yet: send reprise.ask or reprise.newSession first")

// saved reports whether id, a valid id, has a log on disk.
func (ss *sessionSet) saved(id string) bool {
	if ss.store == nil || journal.CheckID(id) != nil {
		return false
	}
	_, err := os.Stat(filepath.Join(ss.store.Dir(id), "events.jsonl"))
	return err == nil
}

// resume makes id the current session, loading it from disk if it is not open. The caller uses
// it until it calls release.
func (ss *sessionSet) resume(ctx context.Context, id string) (*live, error) {
	ss.mu.Lock()
	l, ok := ss.byID[id]
	if ok {
		l.users++
		l.touched = time.Now()
		ss.current = id
	}
	ss.mu.Unlock()
	if ok {
		return l, nil
	}
	return ss.load(ctx, id)
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
	spawned := srv.spawn(func() { // ends when the turn ends: on its own, by reprise.cancel, or at shutdown
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
	if !spawned { // the server is stopping
		cancel()
		ss.mu.Lock()
		l.cancel = nil
		ss.mu.Unlock()
		close(done)
		return jsonrpc2.NewError(jsonrpc2.InvalidRequest, "the server is shutting down")
	}
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
		ss.close(l)
	}
}

// list describes the sessions, most recent activity first. Only the set of open sessions is
// read under ss.mu: the sessions' own state and the saved ones' summaries on disk are read after,
// so a listing never holds up a command or a turn that needs the set. A session opened or closed
// meanwhile is listed as it was when the set was read, or as saved.
func (ss *sessionSet) list() []SessionInfo {
	type entry struct {
		l                *live
		title            string
		running, current bool
	}
	ss.mu.Lock()
	open := make(map[string]entry, len(ss.byID))
	for id, l := range ss.byID {
		open[id] = entry{l: l, title: l.title, running: l.cancel != nil, current: id == ss.current}
	}
	ss.mu.Unlock()
	out := make([]SessionInfo, 0, len(open))
	for id, e := range open {
		r := e.l.s.Context()
		out = append(out, SessionInfo{
			SessionID:    id,
			Title:        e.title,
			LastActivity: e.l.s.LastActivity().UTC().Format(time.RFC3339),
			Turns:        r.Turns,
			Calls:        r.Calls,
			Used:         r.Used,
			Size:         r.Size,
			Percent:      r.Percent,
			Running:      e.running,
			Current:      e.current,
		})
	}
	if ss.store != nil {
		saved, err := ss.store.List(func(id string) bool { _, ok := open[id]; return ok })
		if err != nil {
			ss.srv.log.Warn("saved sessions not listed", "error", err)
		}
		for _, sv := range saved {
			info := SessionInfo{SessionID: sv.ID, Title: sv.Title, Turns: sv.Turns, Calls: sv.Calls, Used: sv.LastPrompt, Saved: true, Error: sv.Err}
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
	sb := ss.srv.sandbox(c) // one for all: it holds no state of a session
	for _, l := range ss.all() {
		if err := l.s.SetPolicy(c.policy); err != nil {
			ss.srv.log.Warn("settings not applied", "session", l.s.ID(), "error", err)
			continue
		}
		l.s.SetSandbox(sb)
		for _, a := range c.allow {
			l.commands.AllowPattern(a)
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

// newHost is the host of this connection's sessions, with the connection's cache of model
// clients.
func (s *server) newHost() *host.Host {
	return &host.Host{StateHome: s.opts.StateHome, Models: s.sessions.models.get, Observe: s.opts.Observe}
}
