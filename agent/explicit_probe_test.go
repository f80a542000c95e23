package agent

import (
	"testing"

	"github.com/reprise-dev/reprise/contextwin"
)

// TestImplicitSeen: the recent hit rate follows the calls that measured implicit caching, the
// newest weighing half; one call in explicitProbeEvery+1 reads is sent whole.
func TestImplicitSeen(t *testing.T) {
	var s implicitSeen
	if got := s.hitRate(0.3); got != 0.3 {
		t.Errorf("before any call: %v, want the session's", got)
	}
	s.observe(contextwin.CallUsage{Prompt: 12000, ExpectedCached: 10000}) // a miss
	s.observe(contextwin.CallUsage{Prompt: 13000, Cached: 9000, ExpectedCached: 10000, Explicit: true})
	s.observe(contextwin.CallUsage{Prompt: 3000})
	if got := s.hitRate(0.3); got != 0 {
		t.Errorf("after one miss (and calls that measure nothing): %v, want 0", got)
	}
	s.observe(contextwin.CallUsage{Prompt: 20000, Cached: 18000, ExpectedCached: 18000})
	s.observe(contextwin.CallUsage{Prompt: 21000, Cached: 20000, ExpectedCached: 20000})
	if got := s.hitRate(0.3); got != 0.75 {
		t.Errorf("after two hits: %v, want 0.75", got)
	}
	probes := 0
	for range 3 * (explicitProbeEvery + 1) {
		if s.probe() {
			probes++
		}
	}
	if probes != 3 {
		t.Errorf("%d probes over %d reads, want 3", probes, 3*(explicitProbeEvery+1))
	}
}

// TestProbeStandsForTheRate: a probe is a measurement made on purpose: its outcome stands for the
// rate, where an ordinary call weighs half.
func TestProbeStandsForTheRate(t *testing.T) {
	var s implicitSeen
	s.observe(contextwin.CallUsage{Prompt: 12000, ExpectedCached: 10000}) // a miss in a dead zone
	for !s.probe() {
	}
	s.observe(contextwin.CallUsage{Prompt: 20000, Cached: 18000, ExpectedCached: 18000})
	if got := s.hitRate(0); got != 1 {
		t.Errorf("after a probe that hit in full: %v, want 1", got)
	}
	s.observe(contextwin.CallUsage{Prompt: 21000, ExpectedCached: 20000})
	if got := s.hitRate(0); got != 0.5 {
		t.Errorf("after an ordinary miss: %v, want 0.5", got)
	}
}
