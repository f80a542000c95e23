package agent

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/reprise-dev/reprise/contextwin"
)

// Keeping the explicit cache alive across an idle gap (Policy.ExplicitCacheIdle, off by
// default). A user away longer than a cache's TTL comes back to a session whose next call
// rebuilds it: its tokens billed as input again. While the session is idle, a goroutine extends
// the cache in use, explicitTTL at a time, until the session has been idle for
// contextwin.IdleKeep (the storage then paid equals one rebuild), and no longer: the cache then
// ends with its TTL. It is never more than explicitTTL ahead, so a crash while idle leaves it
// billing for at most that long.

// startKeeper starts keeping the cache alive, if the policy asks it and a cache is in use.
func (m *ExplicitCache) startKeeper() {
	if m == nil {
		return
	}
	p := m.s.policy()
	m.mu.Lock()
	held := m.cur != nil
	m.mu.Unlock()
	if !p.ExplicitCache || !p.ExplicitCacheIdle || !held {
		return
	}
	k := &m.keeper
	m.stopKeeper()
	k.mu.Lock()
	defer k.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	k.cancel, k.done = cancel, make(chan struct{})
	go m.keep(ctx, k.done) // ends when a step says so or ctx is cancelled (stopKeeper)
}

// stopKeeper stops the goroutine, if any, and waits for it. m.mu must not be held.
func (m *ExplicitCache) stopKeeper() {
	if m == nil {
		return
	}
	k := &m.keeper
	k.mu.Lock()
	cancel, done := k.cancel, k.done
	k.cancel = nil
	k.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

// keeperDone is closed when no goroutine keeps the cache alive (tests wait on it).
func (m *ExplicitCache) keeperDone() <-chan struct{} {
	k := &m.keeper
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.cancel == nil {
		c := make(chan struct{})
		close(c)
		return c
	}
	return k.done
}

// keep extends the cache step by step until keepStep says to stop or ctx ends.
func (m *ExplicitCache) keep(ctx context.Context, done chan struct{}) {
	defer close(done)
	after := m.s.after
	if after == nil {
		after = time.After
	}
	for {
		wait, ok := m.keepStep(ctx)
		m.tellIdleNotes()
		if !ok {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-after(wait):
		}
	}
}

// tellIdleNotes tells Between what the user has not been told yet, as warnings; without it, the
// notes wait for the next call.
func (m *ExplicitCache) tellIdleNotes() {
	if m.s.between == nil {
		return
	}
	for _, n := range m.takeNotes() {
		m.s.between(Event{Type: EventWarning, Text: n})
	}
}

// keepStep extends the cache in use when less than half of its TTL is left and the session has
// been idle for less than IdleKeep, up to that horizon. It returns how long to wait before the
// next step; false when there is nothing more to keep: no cache, the horizon reached, the
// prefix it holds rewritten meanwhile (it is deleted), or an extension refused.
func (m *ExplicitCache) keepStep(ctx context.Context) (time.Duration, bool) {
	if p := m.s.policy(); !p.ExplicitCache || !p.ExplicitCacheIdle {
		return 0, false
	}
	// What the next request would start with, read before m.mu (no lock is held while another
	// is taken).
	c := m.s.conv
	c.mu.Lock()
	system, tools, history := c.prompt.text, c.prompt.decls, slices.Clone(c.history)
	c.mu.Unlock()
	idleSince, now := m.s.idleSince(), m.s.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	cur := m.cur
	switch {
	case cur == nil || m.off != "" || !cur.Expires.After(now):
		return 0, false
	case !cur.starts(system, tools, history):
		m.dropLocked(ctx) // a compaction or an undo while idle: the next call cannot read it
		return 0, false
	}
	prices, _ := m.s.bill.pricing.At(m.s.model, now, cur.Tokens)
	horizon := idleSince.Add(contextwin.IdleKeep(prices))
	if !cur.Expires.Before(horizon) {
		return 0, false // it lives to the horizon: let it end there
	}
	if left := cur.Expires.Sub(now); left > explicitTTL/2 {
		return left - explicitTTL/2, true
	}
	if err := m.extendLocked(ctx, min(explicitTTL, horizon.Sub(now))); err != nil {
		if ctx.Err() == nil { // not a turn beginning
			m.noteLocked("keep", fmt.Sprintf("the explicit cache could not be kept alive while the session is idle (%v): the next call builds it again, its prefix billed as input", err))
		}
		return 0, false
	}
	return max(cur.Expires.Sub(now)-explicitTTL/2, 0), cur.Expires.Before(horizon)
}
