package contextwin

import "time"

// CacheCase is what deciding to put a prefix in an explicit cache weighs. Implicit caching is
// best-effort: with the session's measured hit rate, a share (1 - HitRate) of the prefix's
// expected hits is billed at the full input price. An explicit cache makes every later read of
// the prefix cached, for its creation (billed as input) and its storage over its TTL.
type CacheCase struct {
	Prefix  int     // tokens the cache would hold: system instruction, tools, older history
	HitRate float64 // implicit hits measured over the session, reported ÷ expected, 0 to 1
	Reads   int     // calls expected to read the prefix while the cache lives
	// Growth is what each call adds to the prompt past the prefix. A request that reads an
	// explicit cache is assumed to get no implicit hit on the rest of its prompt (documented
	// nowhere either way): each read forgoes the implicit hits on what the calls before it added.
	Growth int
	// OverExplicit: a read also gets implicit hits on the rest (catalog.Model.OverExplicit), and
	// forgoes nothing.
	OverExplicit bool
	TTL          time.Duration
	Prices       Prices // their CacheStorage is the storage price (the catalogue's, by date)
}

// Saving is what the cache saves over its reads: the misses of implicit caching no longer
// billed at the full input price.
func (c CacheCase) Saving() float64 {
	miss := min(max(1-c.HitRate, 0), 1)
	return float64(c.Reads) * miss * float64(c.Prefix) * (c.Prices.Input - c.Prices.CachedInput) / 1e6
}

// Cost is what the cache costs: its creation at the input price and its storage over its TTL.
func (c CacheCase) Cost() float64 {
	return float64(c.Prefix) * (c.Prices.Input + c.Prices.Storage()*c.TTL.Hours()) / 1e6
}

// Lost is what the reads forgo of implicit caching on the rest of their prompts: read j (from 1)
// would have had the growth of the j-1 calls before it implicitly cached, at the hit rate.
func (c CacheCase) Lost() float64 {
	if c.OverExplicit {
		return 0
	}
	hit := min(max(c.HitRate, 0), 1)
	rest := c.Reads * (c.Reads - 1) / 2 * c.Growth
	return hit * float64(rest) * (c.Prices.Input - c.Prices.CachedInput) / 1e6
}

// Worth tells whether the cache saves more than it costs, the implicit hits its reads forgo
// included. When implicit caching always hits it never does: an explicit cache then only adds
// its own cost.
func (c CacheCase) Worth() bool { return c.Saving() > c.Cost()+c.Lost() }

// HeadCase is a cache of the fixed head alone (Prefix: the system instruction and the tools), read
// by calls whose messages, Messages tokens at the first read and Growth more at each, implicit
// caching would otherwise serve at the hit rate.
type HeadCase struct {
	CacheCase
	Messages int
}

// Lost is what the reads forgo of implicit caching on their messages.
func (h HeadCase) Lost() float64 {
	if h.OverExplicit {
		return 0
	}
	hit := min(max(h.HitRate, 0), 1)
	rest := h.Reads*h.Messages + h.Reads*(h.Reads-1)/2*h.Growth
	return hit * float64(rest) * (h.Prices.Input - h.Prices.CachedInput) / 1e6
}

// Net is what the cache gains over its reads: its saving less its cost and what it forgoes.
func (h HeadCase) Net() float64 { return h.Saving() - h.Cost() - h.Lost() }

// KeepReading tells whether a read of a cache of held tokens still pays, rest being the tokens of
// the prompt past it that implicit caching would otherwise serve: what implicit caching would
// miss on the cache's part must outweigh what the read forgoes of it on the rest. Where a read
// also gets implicit hits on the rest (over), it forgoes nothing.
func KeepReading(held, rest int, hitRate float64, over bool) bool {
	if over {
		return true
	}
	hit := min(max(hitRate, 0), 1)
	return (1-hit)*float64(held) >= hit*float64(rest)
}

// IdleKeep is how long an explicit cache is worth keeping alive while its session is idle, at
// prices p: until the storage paid for the idleness reaches what rebuilding it costs when the user
// is back (its tokens at the input price: the first call after the gap creates it again). The
// tokens cancel out: Input ÷ Storage hours, 90 minutes on gemini-3.8-flash ($0.75 ÷ $0.50, and
// $1.50 ÷ $1.00 from 2027), 27 on 3.1 Pro. When the user will be back is unknown: keeping it this
// long and no longer costs at most twice what the best choice made knowing it would (the
// ski-rental bound), whatever the gap.
func IdleKeep(p Prices) time.Duration {
	return time.Duration(p.Input / p.Storage() * float64(time.Hour))
}
