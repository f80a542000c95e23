package agent

import "github.com/reprise-dev/reprise/contextwin"

// Implicit caching seen while an explicit cache is read: a request over the cache measures
// nothing implicit, so the hit rate that decided the cache would stay the one from before it,
// and a session leaving a stretch of misses (a dead zone of prompt sizes) would keep paying for
// a cache implicit caching no longer needs. Every explicitProbeEvery reads, one call is sent
// whole, the cache kept: its implicit hit, or miss, sets a hit rate over the recent calls (which
// ordinary calls then move by half), and the decisions to read and to create a cache weigh it.

// explicitProbeEvery is how many reads of a cache go by between two calls sent without it.
const explicitProbeEvery = 4

// recentWeight is the weight of an ordinary call in the recent hit rate (an exponential
// average): a half, so that a run of misses or hits shows within two or three calls.
const recentWeight = 0.5

// implicitSeen is the implicit hit rate over the recent measured calls.
type implicitSeen struct {
	rate    float64
	known   bool
	reads   int  // reads of the current cache since it was made or last probed
	probing bool // the call in flight is a probe
}

// observe takes one call's implicit outcome into the recent rate: the share of what it was
// expected to read from the implicit cache that it did. Calls over an explicit cache, and calls
// that expected nothing, measure nothing.
func (s *implicitSeen) observe(u contextwin.CallUsage) {
	if u.Explicit || u.ExpectedCached <= 0 {
		return
	}
	ratio := float64(min(u.Cached, u.ExpectedCached)) / float64(u.ExpectedCached)
	probe := s.probing
	s.probing = false
	if !s.known || probe {
		// A probe is a measurement made on purpose, of the prefix the cache holds and what
		// followed: it stands for the rate until the calls after it say otherwise.
		s.rate, s.known = ratio, true
		return
	}
	s.rate = recentWeight*ratio + (1-recentWeight)*s.rate
}

// hitRate is the recent rate when a call measured one, else the session's.
func (s *implicitSeen) hitRate(session float64) float64 {
	if s.known {
		return s.rate
	}
	return session
}

// probe tells whether this read of the cache is to be sent without it, and counts it.
func (s *implicitSeen) probe() bool {
	s.reads++
	if s.reads > explicitProbeEvery {
		s.reads, s.probing = 0, true
		return true
	}
	return false
}
