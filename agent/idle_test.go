package agent

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/reprise-dev/reprise/agent/gemini"
	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/contextwin"
)

// simTimers are time.After on the fake's clock: a timer fires when the test moves the fake past
// it. Each timer set is signalled on armed, so that a test knows the goroutine that set it has
// done its step.
type simTimers struct {
	srv   *geminitest.Server
	armed chan struct{} // one buffered signal: a goroutine sets one timer per step

	mu    sync.Mutex // guards waits
	waits []simWait
}

type simWait struct {
	at time.Time
	c  chan time.Time
}

func (s *simTimers) After(d time.Duration) <-chan time.Time {
	c := make(chan time.Time, 1)
	s.mu.Lock()
	s.waits = append(s.waits, simWait{at: s.srv.Now().Add(d), c: c})
	s.mu.Unlock()
	select {
	case s.armed <- struct{}{}:
	default:
	}
	return c
}

// next is when the first timer set is due; false when none is.
func (s *simTimers) next() (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.waits) == 0 {
		return time.Time{}, false
	}
	return slices.MinFunc(s.waits, func(a, b simWait) int { return a.at.Compare(b.at) }).at, true
}

// advanceTo moves the fake's clock to t and fires the timers due by then.
func (s *simTimers) advanceTo(t time.Time) {
	if d := t.Sub(s.srv.Now()); d > 0 {
		s.srv.Advance(d)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waits = slices.DeleteFunc(s.waits, func(w simWait) bool {
		if w.at.After(t) {
			return false
		}
		w.c <- t
		return true
	})
}

// idle leaves the session idle for gap on the fake's clock, letting the goroutine that keeps its
// cache alive do each of its steps, and checks at each that the cache is never more than
// explicitTTL ahead (what a crash would leave billing). It returns the steps taken.
func (f *fixture) idle(t *testing.T, gap time.Duration) int {
	t.Helper()
	end, steps := f.srv.Now().Add(gap), 0
	done := f.s.caching.keeperDone()
	for {
		select {
		case <-f.timers.armed:
		case <-done:
			f.timers.advanceTo(end)
			return steps
		case <-t.Context().Done():
			t.Fatal("the keeper neither set a timer nor ended")
		}
		f.checkAhead(t)
		at, ok := f.timers.next()
		if !ok || at.After(end) {
			f.timers.advanceTo(end)
			return steps
		}
		f.timers.advanceTo(at)
		steps++
	}
}

// checkAhead fails when a cache of the session lives more than explicitTTL past now, read through
// the real client.
func (f *fixture) checkAhead(t *testing.T) {
	t.Helper()
	caches, err := f.s.caching.inner.(*gemini.Client).Caches(context.WithoutCancel(t.Context()), CacheDisplayName(f.s.ID()))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range caches {
		if ahead := c.Expires.Sub(f.srv.Now()); ahead > explicitTTL {
			t.Errorf("cache %s expires %v ahead, more than its TTL %v", c.Name, ahead, explicitTTL)
		}
	}
}

// gapRun is a session whose implicit hits all miss (so it holds an explicit cache), left idle for
// gap between its two turns, keeping its cache alive as keep says. It returns the totals, what
// the fake billed, the caches created after the gap and the keeper's steps.
func gapRun(t *testing.T, gap time.Duration, keep bool) (contextwin.Totals, geminitest.CacheStats, int, int) {
	t.Helper()
	o, turns := readingOpts(geminitest.Cache{MissRate: 1}, true, "")
	o.simClock = true
	o.policy.ExplicitCacheIdle = keep
	f := newFixture(t, o, turns...)
	if _, err := f.run(t.Context(), "read the eight files"); err != nil {
		t.Fatal(err)
	}
	if f.srv.ExplicitCaches().Live != 1 {
		t.Fatalf("no explicit cache held at the end of the first turn: %+v", f.srv.ExplicitCaches())
	}
	created := f.srv.ExplicitCaches().Created
	steps := f.idle(t, gap)
	f.srv.Append(callTurn("read_file", map[string]any{"path": "f7.txt"}, ""), textTurn("the same as before"))
	evs, err := f.run(t.Context(), "read f7.txt again")
	if err != nil {
		t.Fatal(err)
	}
	if w := warningsOf(evs); len(w) != 0 {
		t.Errorf("warnings after the gap: %q", w)
	}
	f.s.Close()
	st := f.srv.ExplicitCaches()
	return lastEnd(t, evs).Totals, st, st.Created - created, steps
}

// TestIdleGapKeepsTheCache measures a session with a 30-minute idle gap, with and without
// keeping its explicit cache alive: kept, the call after the gap reads it (no second creation),
// and the session costs less; not kept, it is rebuilt, without a warning (an expiry after an idle
// gap is foreseen, not a failure).
func TestIdleGapKeepsTheCache(t *testing.T) {
	const gap = 30 * time.Minute
	without, wst, rebuilt, _ := gapRun(t, gap, false)
	with, st, recreated, steps := gapRun(t, gap, true)
	share := func(tot contextwin.Totals) float64 { return 100 * float64(tot.CachedTokens) / float64(tot.InputTokens) }
	t.Logf("30-minute gap, not kept: $%.5f, %.0f %% of the input cached, %d tokens written to %d caches, %.1f token-hours stored",
		without.Cost, share(without), without.CacheWriteTokens, wst.Created, wst.TokenHours)
	t.Logf("30-minute gap, kept (%d extensions): $%.5f, %.0f %% cached, %d tokens written to %d caches, %.1f token-hours stored; %.2f× the cost not kept",
		steps, with.Cost, share(with), with.CacheWriteTokens, st.Created, st.TokenHours, with.Cost/without.Cost)
	if recreated != 0 || rebuilt == 0 {
		t.Errorf("caches created after the gap: %d kept, %d not kept; want none and a rebuild", recreated, rebuilt)
	}
	if steps == 0 || with.Cost >= without.Cost {
		t.Errorf("kept over %d steps: $%.5f, not kept $%.5f", steps, with.Cost, without.Cost)
	}
}

// TestIdleGapPastTheHorizon: a user away for longer than IdleKeep (90 minutes on
// gemini-3.8-flash) finds the cache ended at the horizon: the storage paid for the idleness stays
// within one rebuild.
func TestIdleGapPastTheHorizon(t *testing.T) {
	o, turns := readingOpts(geminitest.Cache{MissRate: 1}, true, "")
	o.simClock, o.policy.ExplicitCacheIdle = true, true
	f := newFixture(t, o, turns...)
	if _, err := f.run(t.Context(), "read the eight files"); err != nil {
		t.Fatal(err)
	}
	before, stored := f.s.bill.sum(), f.srv.ExplicitCaches().TokenHours
	tokens := f.s.caching.cur.Tokens
	prices, _ := f.s.bill.pricing.At(f.s.opts.ModelName, f.srv.Now(), 0)
	horizon := contextwin.IdleKeep(prices)
	f.idle(t, 2*time.Hour)
	st := f.srv.ExplicitCaches()
	idleStorage, rebuild := f.s.bill.sum().Cost-before.Cost, float64(tokens)*prices.Input/1e6
	lived := time.Duration((st.TokenHours - stored) / float64(tokens) * float64(time.Hour))
	t.Logf("idle 2 h, horizon %v: the cache lived %v of it, $%.6f of storage billed, one rebuild $%.6f", horizon, lived.Round(time.Second), idleStorage, rebuild)
	if st.Live != 0 {
		t.Errorf("%d caches alive 2 hours into the idleness", st.Live)
	}
	if idleStorage > rebuild*(1+1e-9) || lived > horizon+time.Second {
		t.Errorf("storage while idle $%.6f for %v; want at most one rebuild, $%.6f, and the horizon %v", idleStorage, lived, rebuild, horizon)
	}
}

// TestIdleCompactionDropsTheKeptCache: a compaction asked while the session is idle rewrites the
// prefix the kept cache holds; the keeper's next step deletes the cache rather than pay to keep
// what no call will read.
func TestIdleCompactionDropsTheKeptCache(t *testing.T) {
	o, turns := readingOpts(geminitest.Cache{MissRate: 1}, true, "")
	o.simClock, o.policy.ExplicitCacheIdle = true, true
	f := newFixture(t, o, append(turns, summaryTurn(summaryText))...)
	if _, err := f.run(t.Context(), "read the eight files"); err != nil {
		t.Fatal(err)
	}
	<-f.timers.armed // the keeper's first step is done: it found nothing to do yet
	if _, err := f.s.Compact(t.Context(), ""); err != nil {
		t.Fatal(err)
	}
	f.timers.armed <- struct{}{} // given back, for idle
	steps := f.idle(t, time.Hour)
	if st := f.srv.ExplicitCaches(); st.Live != 0 || steps != 1 {
		t.Errorf("after a compaction while idle, %d caches alive, %d steps; want none, after one", st.Live, steps)
	}
}
