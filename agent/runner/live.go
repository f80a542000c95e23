package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/cmdpolicy"
	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/agent/sandbox"
)

// Live is a session the runner hosts, with what its front-end reads beside it. Its exported
// fields are set when it opens and not changed after.
type Live struct {
	*agent.Session
	Workspace string
	Log       *journal.Log      // nil when not saved
	Sandbox   *sandbox.Sandbox  // the commands' sandbox, for the front-end's notices
	Commands  *cmdpolicy.Policy // the command policy: "Always allow" adds to it
	Model     string            // the model name the session runs
	Created   time.Time
	Warnings  []string // what a damaged log lost, on resume
	External  External // the MCP servers whose tools the session declared; nil: none

	ownExternal bool    // External is closed with the session
	r           *Runner // which hosts it
	spec        Spec    // what it was opened with: the runner reopens it from it once it closed it

	// Guarded by the runner's live.mu.
	settings *Settings // the last ones Reconfigure gave it; nil: its spec's
	title    string
	cancel   context.CancelFunc // the running turn's; nil when none runs
	done     chan struct{}      // closed when the last turn has wholly ended
	users    int                // front-end calls using the session now: it is not closed under them
	touched  time.Time          // when a front-end last used it
}

// liveSet is the runner's hosted sessions by id, and those it closed on its own, to reopen. An id
// is in one of the maps at most.
type liveSet struct {
	mu       sync.Mutex // guards the fields below and Live's unexported mutable fields
	byID     map[string]*Live
	parked   map[string]*parked // closed while idle or at the cap: Use reopens them
	parks    uint64             // how many sessions were parked, to forget the oldest first
	admitted int                // sessions being opened, counted against the cap
}

// Errors of the live sessions, which the front-ends word in their protocol.
var (
	// ErrNotOpen: no hosted session has this id (it may be saved: Resume reopens it).
	ErrNotOpen = errors.New("session not open")
	// ErrBusy: the session is running a turn.
	ErrBusy = errors.New("session is running a turn")
)

// FullError is the refusal of a new session when the cap of open sessions is reached and every
// one is busy.
type FullError struct{ Limit int }

func (e FullError) Error() string {
	return fmt.Sprintf("too many open sessions: all %d are busy", e.Limit)
}

// Open opens a new session and hosts it; the caller uses it until it calls Release.
func (r *Runner) Open(ctx context.Context, spec Spec) (*Live, error) {
	if err := r.admit(); err != nil {
		return nil, err
	}
	l, err := r.create(ctx, spec)
	if err != nil {
		r.unadmit()
		return nil, err
	}
	r.add(l)
	r.tellUsage(l)
	return l, nil
}

// Resume returns the hosted session id, or reopens it from disk with spec (a session the runner
// closed on its own too: the caller's spec is the settings in force); the caller uses it until it
// calls Release.
func (r *Runner) Resume(ctx context.Context, id string, spec Spec) (*Live, error) {
	l, err := r.use(ctx, id, &spec)
	switch {
	case err == nil:
		r.tellUsage(l)
		return l, nil
	case !errors.Is(err, ErrNotOpen):
		return nil, err
	}
	// Checked before admit, which may close another session to make room.
	st, err := r.Store(spec.Workspace)
	switch {
	case err != nil:
		return nil, err
	case st == nil:
		return nil, ErrNotSaved
	case !st.Saved(id):
		return nil, fmt.Errorf("%w: %q", journal.ErrNotFound, id)
	}
	if err := r.admit(); err != nil {
		return nil, err
	}
	l, err = r.load(ctx, id, spec)
	if err != nil {
		r.unadmit()
		return nil, err
	}
	r.add(l)
	r.tellUsage(l)
	return l, nil
}

// Use returns the hosted session id, which is not closed to make room for another until the
// caller calls Release. A session the runner closed on its own (idle, or at the cap) is reopened
// from its log with the spec it was opened with, under the cap like any open: the front-end does
// not notice. ErrNotOpen: the runner hosts no session id.
func (r *Runner) Use(ctx context.Context, id string) (*Live, error) {
	return r.use(ctx, id, nil)
}

// Lookup returns the hosted session id, or nil; it does not hold it open.
func (r *Runner) Lookup(id string) *Live {
	r.live.mu.Lock()
	defer r.live.mu.Unlock()
	return r.live.byID[id]
}

// Release ends a use begun by Open, Resume or Use.
func (r *Runner) Release(l *Live) {
	r.live.mu.Lock()
	l.users--
	r.live.mu.Unlock()
}

// Close closes the hosted session id: its running turn is cancelled and waited for (or ctx
// ends), then the session and its log are closed; it stays saved. A session the runner closed
// on its own is forgotten: Use no longer reopens it. ErrNotOpen: not hosted; any other error means
// the log's last records may be lost.
func (r *Runner) Close(ctx context.Context, id string) error {
	ls := &r.live
	ls.mu.Lock()
	l, ok := ls.byID[id]
	delete(ls.byID, id)
	p := ls.parked[id]
	delete(ls.parked, id)
	ls.mu.Unlock()
	if !ok && p != nil {
		return r.settled(ctx, p) // its log is free once Close returns
	}
	if !ok {
		return fmt.Errorf("%w: %q", ErrNotOpen, id)
	}
	r.Cancel(l)
	// Holding the slot, no turn a front-end got l for before it left the set can start.
	if t, err := r.Start(ctx, l, true); err == nil {
		defer t.End()
	}
	return l.close()
}

// CloseAll closes every hosted session once its turn is done, and forgets those the runner
// closed on its own (at the end of a connection: cancel the turns, and stop WatchIdle, first).
func (r *Runner) CloseAll() {
	ls := &r.live
	ls.mu.Lock()
	all := ls.byID
	ls.byID, ls.parked = nil, nil
	ls.mu.Unlock()
	for _, l := range all {
		r.closeLive(l)
	}
}

// List returns the hosted sessions, in no order.
func (r *Runner) List() []*Live {
	ls := &r.live
	ls.mu.Lock()
	defer ls.mu.Unlock()
	out := make([]*Live, 0, len(ls.byID))
	for _, l := range ls.byID {
		out = append(out, l)
	}
	return out
}

// Title is the session's title: its log's, or its first request's first line.
func (r *Runner) Title(l *Live) string {
	r.live.mu.Lock()
	defer r.live.mu.Unlock()
	return l.title
}

// Running reports whether l runs a turn.
func (r *Runner) Running(l *Live) bool {
	r.live.mu.Lock()
	defer r.live.mu.Unlock()
	return l.cancel != nil
}

// add hosts l, admitted before, in use by the caller.
func (r *Runner) add(l *Live) {
	r.live.mu.Lock()
	r.hostLocked(l)
	r.live.mu.Unlock()
}

// hostLocked hosts l, admitted before, in use by the caller. The set's lock must be held.
func (r *Runner) hostLocked(l *Live) {
	ls := &r.live
	ls.admitted--
	l.users++
	l.touched = r.now()
	if ls.byID == nil {
		ls.byID = map[string]*Live{}
	}
	ls.byID[l.ID()] = l
}

// admit makes room for one more session. At the cap it closes the least recently active idle
// session, which stays saved and is parked (Use reopens it); if every one is busy (a turn
// running, or a front-end using it) the new one is refused. The caller then calls add, or
// unadmit on failure.
func (r *Runner) admit() error {
	ls := &r.live
	limit := r.MaxSessions
	ls.mu.Lock()
	var victim *Live
	var p *parked
	if limit > 0 && len(ls.byID)+ls.admitted >= limit {
		for _, l := range ls.byID {
			if !l.busy() && (victim == nil || l.activity().Before(victim.activity())) {
				victim = l
			}
		}
		if victim == nil {
			ls.mu.Unlock()
			return FullError{Limit: limit}
		}
		p = r.parkLocked(victim)
	}
	ls.admitted++
	ls.mu.Unlock()
	if victim != nil {
		if r.Logger != nil {
			how := "using it reopens it"
			if p == nil {
				how = "resuming it reopens it"
			}
			r.Logger.Info("session closed to stay under the limit of open sessions; "+how, "session", victim.ID(), "limit", limit)
		}
		r.closeParked(victim, p)
	}
	return nil
}

func (r *Runner) unadmit() {
	r.live.mu.Lock()
	r.live.admitted--
	r.live.mu.Unlock()
}

// busy reports whether l must stay open: a turn is running or ending, or a front-end uses it.
// The set's lock must be held.
func (l *Live) busy() bool {
	if l.cancel != nil || l.users > 0 {
		return true
	}
	if l.done != nil {
		select {
		case <-l.done:
		default:
			return true // the turn is still finishing after turn_end
		}
	}
	return false
}

// activity is when l was last used, by a turn or by a front-end (a session just resumed has an
// old LastActivity). The set's lock must be held.
func (l *Live) activity() time.Time {
	if a := l.LastActivity(); a.After(l.touched) {
		return a
	}
	return l.touched
}

// closeLive stops l's background work and closes its log, which frees its lock for a later
// resume, and its MCP servers when they are its own.
func (r *Runner) closeLive(l *Live) {
	if err := l.close(); err != nil && r.Logger != nil {
		r.Logger.Warn("session not closed cleanly: its log's last records may be lost", "session", l.ID(), "error", err)
	}
}

// close closes what l holds; an error means the log's last records may be lost.
func (l *Live) close() error {
	if l.Session != nil {
		l.Session.Close() // deletes its explicit cache too
	}
	var err error
	if l.Log != nil {
		err = l.Log.Close()
	}
	return errors.Join(err, l.closeExternal())
}

func (l *Live) closeExternal() error {
	if l.External == nil || !l.ownExternal {
		return nil
	}
	return l.External.Close()
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
