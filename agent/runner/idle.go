package runner

// Sessions the runner closes on its own, idle or at the cap, and reopens when they are used: a
// session left for an hour gives back its memory, its log's lock and its MCP servers, and its
// front-end, which keeps only ids, does not notice.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/reprise-dev/reprise/agent/cmdpolicy"
	"github.com/reprise-dev/reprise/agent/journal"
)

// DefaultIdleAfter is the front-ends' IdleAfter unless the user sets another (docs/decisions.md,
// "Idle sessions").
const DefaultIdleAfter = 30 * time.Minute

// maxParked bounds the parked sessions a runner remembers: a client that opens sessions in a loop
// must not grow the process without end. Past it the oldest is forgotten (a saved one still
// resumes by its id). A parked session costs its spec, well under a kilobyte.
const maxParked = 1024

// parked is a session the runner closed on its own: Use reopens it from its log with the spec it
// was opened with. Its fields are guarded by the runner's live.mu.
type parked struct {
	spec     Spec
	commands *cmdpolicy.Policy // the session's, with the patterns "Always allow" added since
	settings *Settings         // the last Reconfigure's; nil: the spec's
	empty    bool              // nothing was on disk when it closed (a lazy session before its first turn)
	seq      uint64            // order of parking: the oldest is forgotten first
	// busy, when not nil, is closed once the close or the reopening under way has ended: the
	// session's log is then free, or the session hosted again.
	busy chan struct{}
}

// CloseIdle closes the hosted sessions idle for IdleAfter or longer at now: no turn running or
// ending, no front-end using them, and their last activity (a turn, or a front-end's use) that
// old. They stay saved and are parked: Use reopens them. Sessions that could not be reopened
// unnoticed stay open (not saved, or with MCP servers of their own that cannot be built again).
// It returns the ids closed, sorted; the owner calls it periodically (WatchIdle).
func (r *Runner) CloseIdle(now time.Time) []string {
	if r.IdleAfter <= 0 {
		return nil
	}
	type closing struct {
		l    *Live
		p    *parked
		idle time.Duration
	}
	var all []closing
	ls := &r.live
	ls.mu.Lock()
	for _, l := range ls.byID {
		if idle := now.Sub(l.activity()); idle >= r.IdleAfter && !l.busy() && l.reopenable() {
			all = append(all, closing{l, r.parkLocked(l), idle})
		}
	}
	ls.mu.Unlock()
	ids := make([]string, 0, len(all))
	for _, c := range all {
		if r.Logger != nil {
			r.Logger.Info("session closed after being idle; using it reopens it", "session", c.l.ID(), "idle", c.idle.Round(time.Second))
		}
		r.closeParked(c.l, c.p)
		ids = append(ids, c.l.ID())
	}
	slices.Sort(ids)
	return ids
}

// WatchIdle calls CloseIdle every IdleAfter/4, at most a minute, until ctx ends; it returns at
// once when IdleAfter is 0. A front-end runs it in a goroutine it waits for before CloseAll.
func (r *Runner) WatchIdle(ctx context.Context) {
	if r.IdleAfter <= 0 {
		return
	}
	// A session is closed at most a quarter of IdleAfter late; a long IdleAfter still checks each
	// minute, which costs one pass over the sessions.
	tick := time.NewTicker(max(min(r.IdleAfter/4, time.Minute), time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			r.CloseIdle(r.now())
		}
	}
}

// reopenable reports whether l can be closed and reopened unnoticed: it has a log (perhaps not
// yet written), and its MCP servers, when they are its own, can be built again.
func (l *Live) reopenable() bool {
	return l.Log != nil && (!l.ownExternal || l.External == nil || l.spec.NewExternal != nil)
}

// parkLocked takes l out of the hosted sessions and, when it can be reopened, parks it; the
// caller then calls closeParked with what it returns (nil: not parked). The set's lock must be
// held.
func (r *Runner) parkLocked(l *Live) *parked {
	ls := &r.live
	delete(ls.byID, l.ID())
	if !l.reopenable() {
		return nil
	}
	if len(ls.parked) >= maxParked {
		ls.forgetOldestLocked()
	}
	ls.parks++
	p := &parked{spec: l.spec, commands: l.Commands, settings: l.settings, seq: ls.parks, busy: make(chan struct{})}
	if ls.parked == nil {
		ls.parked = map[string]*parked{}
	}
	ls.parked[l.ID()] = p
	return p
}

// forgetOldestLocked forgets the parked session parked first, among those no close or reopening
// holds. The set's lock must be held.
func (ls *liveSet) forgetOldestLocked() {
	oldest := ""
	for id, p := range ls.parked {
		if p.busy == nil && (oldest == "" || p.seq < ls.parked[oldest].seq) {
			oldest = id
		}
	}
	delete(ls.parked, oldest)
}

// closeParked closes l, taken out by parkLocked as p, and then lets a Use waiting for p reopen it.
func (r *Runner) closeParked(l *Live, p *parked) {
	r.closeLive(l)
	if p == nil {
		return
	}
	// Read after the close: a lazy session is on disk once it had content.
	st, err := r.Store(l.Workspace)
	empty := err == nil && st != nil && !st.Saved(l.ID())
	r.live.mu.Lock()
	p.empty = empty
	p.done()
	r.live.mu.Unlock()
}

// done ends the close or the reopening under way. The set's lock must be held.
func (p *parked) done() {
	close(p.busy)
	p.busy = nil
}

// settled waits for the close or the reopening of p under way, or for ctx.
func (r *Runner) settled(ctx context.Context, p *parked) error {
	r.live.mu.Lock()
	busy := p.busy
	r.live.mu.Unlock()
	if busy == nil {
		return nil
	}
	select {
	case <-busy:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// use returns the hosted session id in use by the caller; a parked one is reopened, with spec
// when it is not nil (Resume: the caller's settings in force), else with its own. A close or a
// reopening under way is waited for first. ErrNotOpen: neither hosted nor parked.
func (r *Runner) use(ctx context.Context, id string, spec *Spec) (*Live, error) {
	ls := &r.live
	for {
		ls.mu.Lock()
		if l, ok := ls.byID[id]; ok {
			l.users++
			l.touched = r.now()
			ls.mu.Unlock()
			return l, nil
		}
		p := ls.parked[id]
		if p == nil {
			ls.mu.Unlock()
			return nil, fmt.Errorf("%w: %q", ErrNotOpen, id)
		}
		if p.busy == nil {
			p.busy = make(chan struct{})
			ls.mu.Unlock()
			return r.reopen(ctx, id, p, spec)
		}
		ls.mu.Unlock()
		if err := r.settled(ctx, p); err != nil {
			return nil, err
		}
	}
}

// reopen reopens the parked session id, marked busy by the caller, with spec (nil: its own) and
// hosts it in use by the caller. It stays parked if that fails, unless its log is gone or it was
// closed meanwhile.
func (r *Runner) reopen(ctx context.Context, id string, p *parked, spec *Spec) (*Live, error) {
	l, err := r.reopenLive(ctx, id, p, spec)
	r.settingsMu.Lock() // a Reconfigure is wholly before this, or sees l hosted
	ls := &r.live
	ls.mu.Lock()
	closed := ls.parked[id] != p
	if err == nil && !closed {
		delete(ls.parked, id)
		r.hostLocked(l)
		settings := p.settings
		if spec != nil { // the caller's are the settings in force
			settings = nil
		}
		l.settings = settings
		p.done()
		ls.mu.Unlock()
		if settings != nil {
			r.applySettings(l, *settings)
		}
		r.settingsMu.Unlock()
		if r.Logger != nil {
			r.Logger.Info("session reopened from its log", "session", id)
		}
		if spec == nil { // Resume tells it itself
			r.tellUsage(l)
		}
		return l, nil
	}
	if err == nil {
		ls.admitted--
	} else if errors.Is(err, journal.ErrNotFound) && !closed {
		delete(ls.parked, id)
	}
	ls.mu.Unlock()
	r.settingsMu.Unlock()
	if err == nil { // Close forgot it meanwhile, and returns once this is closed
		r.closeLive(l)
		err = fmt.Errorf("%w: %q", ErrNotOpen, id)
	} else {
		err = fmt.Errorf("reopen session %s: %w", id, err)
	}
	ls.mu.Lock()
	p.done()
	ls.mu.Unlock()
	return nil, err
}

// reopenLive admits and opens the parked session id, not yet hosted, with given (nil: its own
// spec, its own MCP servers built anew): from its log, or anew when nothing was on disk.
func (r *Runner) reopenLive(ctx context.Context, id string, p *parked, given *Spec) (*Live, error) {
	spec := p.spec
	spec.commands = p.commands
	if given != nil {
		spec = *given
	}
	spec.ID = id
	if err := r.admit(); err != nil {
		return nil, err
	}
	if given == nil && spec.OwnExternal && spec.NewExternal != nil {
		spec.External = spec.NewExternal()
	}
	open := func() (*Live, error) { return r.load(ctx, id, spec) }
	if p.empty {
		open = func() (*Live, error) { return r.create(ctx, spec) }
	}
	l, err := open() // closes the servers it started if it fails
	if err != nil {
		r.unadmit()
		return nil, err
	}
	return l, nil
}
