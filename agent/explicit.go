package agent

import (
	"context"
	"fmt"
	"iter"
	"log/slog"
	"slices"
	"sync"
	"time"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent/gemini"
	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/contextwin"
)

// Explicit caching (Policy.ExplicitCache, off by default): when the session's measured implicit
// hits fall short enough that it pays (contextwin.CacheCase), the prefix of the last request is
// put in an explicit cache and the calls that follow read it. Any failure puts the session back on
// implicit caching, which is always there, and says so once.

// explicitTTL is how long a cache lives without a call: short, so that a session that ends
// without deleting it (a crash) stops paying for it within minutes. Each call that reads it past
// half of it extends it.
const explicitTTL = 10 * time.Minute

// explicitReads is how many calls a new cache is expected to serve, in the weighing.
const explicitReads = 4

// explicitHeadReads is how many calls a cache of the head alone is expected to serve: clearings
// and summaries leave it whole, so it outlives a cache of the history.
const explicitHeadReads = 2 * explicitReads

// explicitMinCalls is how many calls must have measured the implicit hits before they are
// trusted to decide.
const explicitMinCalls = 3

// cacheStore is what explicit caching needs of the model client (gemini.Client has it).
type cacheStore interface {
	CreateCache(ctx context.Context, spec gemini.CacheSpec) (gemini.Cache, error)
	ExtendCache(ctx context.Context, name string, ttl time.Duration) (time.Time, error)
	DeleteCache(ctx context.Context, name string) error
}

// cacheView is what the explicit cache reads of its session: a few facts, the billing it
// charges, and the conversation it snapshots; not the session, whose turn loop it knows nothing of.
type cacheView struct {
	id, model string
	now       func() time.Time
	after     func(time.Duration) <-chan time.Time // nil: time.After
	logger    *slog.Logger
	policy    func() contextwin.Policy
	idleSince func() time.Time
	journal   func(journal.Record)
	bill      *billing
	conv      *Conversation
	between   func(Event) // Options.Between: the notes of the cache kept alive while idle
}

// ExplicitCache is the session's model with explicit caching in front of it.
type ExplicitCache struct {
	inner Model
	store cacheStore
	s     cacheView

	mu      sync.Mutex // guards everything below
	cur     *heldCache // the cache in use, nil when none
	off     string     // why the session is back on implicit caching for good; "" while it may cache
	retried bool       // a cache that was gone has been recreated once
	read    bool       // the last call read an explicit cache
	notes   []string   // what the user is to be told, once each
	seen    implicitSeen
	// lived counts the history caches a rewrite dropped and the reads they served in all: what
	// a new one can expect (readsBeforeRewrite).
	lived struct{ caches, reads int }

	keeper idleKeeper // keeps cur alive while the session is idle (idle.go); its own lock
}

// heldCache is an explicit cache and what it holds.
type heldCache struct {
	gemini.Cache
	system   string
	tools    []*genai.FunctionDeclaration
	messages []*genai.Content
	reads    int // calls that read it
}

// holds tells whether req starts with what c holds: the same system instruction and tools, and the
// same first messages (by identity: the history is copy-on-write).
func (c *heldCache) holds(req *gemini.Request) bool {
	return c.starts(req.System, req.Tools, req.Contents)
}

// starts tells whether a request of system, tools and contents would start with what c holds.
func (c *heldCache) starts(system string, tools []*genai.FunctionDeclaration, contents []*genai.Content) bool {
	if system != c.system || len(tools) != len(c.tools) || len(contents) <= len(c.messages) {
		return false
	}
	for i, d := range c.tools {
		if tools[i] != d {
			return false
		}
	}
	for i, m := range c.messages {
		if contents[i] != m {
			return false
		}
	}
	return true
}

// Generate calls the model, over the explicit cache when one holds the request's prefix.
func (m *ExplicitCache) Generate(ctx context.Context, req *gemini.Request) iter.Seq2[gemini.Chunk, error] {
	if req.NoFunctionCalls || !m.s.policy().ExplicitCache {
		return m.inner.Generate(ctx, req)
	}
	return func(yield func(gemini.Chunk, error) bool) {
		for {
			ref := m.prepare(ctx, req)
			m.setRead(ref != nil)
			if ref == nil {
				for ch, err := range m.inner.Generate(ctx, req) {
					if !yield(ch, err) {
						return
					}
				}
				return
			}
			r := *req
			r.Cache = ref
			again := false
			for ch, err := range m.inner.Generate(ctx, &r) {
				if err != nil && gemini.CacheFailureOf(err) == gemini.CacheGone && ctx.Err() == nil {
					// Before any output: the API refused the request for its cache.
					m.gone(ref.Name)
					again = true
					break
				}
				if !yield(ch, err) {
					return
				}
			}
			if !again {
				return
			}
		}
	}
}

// prepare returns the cache the request is to read, creating, replacing or extending it when that
// pays; nil to send the request whole.
func (m *ExplicitCache) prepare(ctx context.Context, req *gemini.Request) *gemini.CacheRef {
	// What the last request sent, now the head of this one; read before m.mu, which record
	// takes under conv.mu.
	c := m.s.conv
	c.mu.Lock()
	prefix, held := c.last.prompt, slices.Clone(c.last.history)
	growth := 0 // what this request adds to the last one
	for i := len(held); i < len(c.history); i++ {
		growth += c.ledger.Estimator.Tokens(c.ledger.MessageEstimate(i))
	}
	rewrites := len(c.checkpoints)
	c.mu.Unlock()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.off != "" {
		m.dropLocked(ctx)
		return nil
	}
	model := m.s.model
	if mod, ok := m.s.bill.pricing.Catalog.Lookup(model); ok && !mod.ExplicitCaching {
		m.stopLocked(fmt.Sprintf("%s has no explicit caching: the session goes on with implicit caching", model))
		return nil
	}
	now := m.s.now()
	if m.cur != nil && !m.cur.Expires.After(now) {
		// Expired by the session's clock, after an idle gap: an end foreseen, not a failure.
		m.dropLocked(ctx)
	}
	hold := m.cur != nil && m.cur.holds(req)
	if hold {
		if hits, ok := m.s.bill.figures().totals.Cache(); ok && !contextwin.KeepReading(m.cur.Tokens, prefix-m.cur.Tokens, m.rateFor(m.cur, hits.HitRate), m.s.bill.pricing.Catalog.OverExplicit(model)) {
			// The prompt has grown past the cache so far that implicit caching, which a request
			// reading it forgoes on the rest, would serve more: drop it, and create one of the
			// whole prefix only if that pays.
			m.dropLocked(ctx)
			hold = false
		}
	}
	if hold && m.seen.probe() {
		return nil // sent whole, the cache kept: the call measures implicit caching again
	}
	if hold {
		if m.cur.Expires.Sub(now) < explicitTTL/2 {
			_ = m.extendLocked(ctx, explicitTTL)
		}
	} else if m.cur != nil {
		m.lived.caches++
		m.lived.reads += m.cur.reads
		m.dropLocked(ctx) // the prefix it held was rewritten (a compaction, a clearing)
	}
	if made := m.createLocked(ctx, req, cacheAt{prefix: prefix, growth: growth, rewrites: rewrites}, held, hold); made != nil {
		return made
	}
	if hold {
		m.cur.reads++
		return &gemini.CacheRef{Name: m.cur.Name, Messages: len(m.cur.messages)}
	}
	return nil
}

// cacheAt is what the session is when a cache may be made: the last request's prompt (prefix
// tokens with the system instruction and the tools), what this request adds to it (growth), and
// how many checkpoints have rewritten the history so far (rewrites).
type cacheAt struct{ prefix, growth, rewrites int }

// createLocked puts held, the last request's messages, in a new explicit cache when that pays,
// the implicit hits its reads forgo on what each call adds included, replacing the one in use
// (hold: it holds an older part of req), and returns it; nil when it does not pay or fails.
// m.mu must be held.
func (m *ExplicitCache) createLocked(ctx context.Context, req *gemini.Request, at cacheAt, held []*genai.Content, hold bool) *gemini.CacheRef {
	prefix, growth := at.prefix, at.growth
	model := m.s.model
	f := m.s.bill.figures()
	hits, measured := f.totals.Cache()
	if !measured || f.calls < explicitMinCalls || len(held) == 0 || len(held) >= len(req.Contents) {
		return nil
	}
	if hold && len(held) <= len(m.cur.messages) {
		return nil
	}
	for i, h := range held {
		if req.Contents[i] != h {
			return nil
		}
	}
	prices, _ := m.s.bill.pricing.At(model, m.s.now(), prefix)
	full := contextwin.CacheCase{Prefix: prefix, HitRate: m.seen.hitRate(hits.HitRate), Reads: explicitReads, Growth: growth, TTL: explicitTTL, Prices: prices,
		OverExplicit: m.s.bill.pricing.Catalog.OverExplicit(model)}
	if h, ok := m.headCase(full, prefix, hits.HitRate); ok {
		// A head at the cache minimum: only it is cached, never the history, which the plans
		// rewrite the sooner the more implicit hits miss (their cached price goes up).
		if hold || h.Net() <= 0 {
			return nil
		}
		held = nil
	} else {
		full.Reads = m.readsBeforeRewrite(f.calls, at.rewrites)
		saving := full.Saving()
		if hold {
			// Moving the boundary forward: the cache in use already saves the misses on its
			// part; the new one saves those on the part added since, for a creation of the whole.
			added := full
			added.Prefix = prefix - m.cur.Tokens
			saving = added.Saving()
		}
		if saving <= full.Cost()+full.Lost() {
			return nil
		}
	}
	spec := gemini.CacheSpec{System: req.System, Tools: req.Tools, Contents: held, TTL: explicitTTL, DisplayName: CacheDisplayName(m.s.id)}
	made, err := m.store.CreateCache(ctx, spec)
	if err != nil {
		switch gemini.CacheFailureOf(err) {
		case gemini.CacheTooSmall:
			m.noteLocked("too-small", "the prefix is too small for an explicit cache: implicit caching goes on")
		case gemini.CacheQuota:
			m.stopLocked("the explicit-cache quota is exhausted: the session goes on with implicit caching")
		case gemini.CacheUnsupported:
			m.stopLocked(fmt.Sprintf("%s refused an explicit cache: the session goes on with implicit caching", model))
		default:
			m.noteLocked("failed", "an explicit cache could not be created: implicit caching goes on")
		}
		return nil
	}
	m.dropLocked(ctx)
	cost, priced := m.s.bill.cacheCreated(model, made.Tokens, explicitTTL)
	m.journalCache(journal.CacheCreated, made, cost, priced)
	m.cur = &heldCache{Cache: made, system: req.System, tools: req.Tools, messages: held}
	m.seen.reads = 0
	return &gemini.CacheRef{Name: made.Name, Messages: len(held)}
}

// readsBeforeRewrite is how many reads a cache of the history can expect before a clearing or a
// summary rewrites it: what the caches a rewrite dropped served on average, and before any was
// dropped the calls the session has made between rewrites (calls over rewrites checkpoints); at
// most explicitReads. Under misses the plans rewrite sooner (a cached token is worth less to
// them): a first cache made blind for four reads, in a session clearing at every call, was dropped
// after one and cost 1.11× the same session without it. m.mu must be held.
func (m *ExplicitCache) readsBeforeRewrite(calls, rewrites int) int {
	switch {
	case m.lived.caches > 0:
		return min(explicitReads, m.lived.reads/m.lived.caches)
	case rewrites > 0:
		return min(explicitReads, calls/rewrites)
	}
	return explicitReads
}

// headCase is a cache of the head alone (the system instruction and the tools, no message) in
// place of full, the last prompt's prefix of prefix tokens: a clearing or a summary, which change
// only messages, never rewrite it, so it is weighed over explicitHeadReads calls; each read
// forgoes the implicit hits on the whole of its messages. ok is false when the session has no head
// (buildHead) or it is under the model's cache minimum (the API refuses a cache that small).
func (m *ExplicitCache) headCase(full contextwin.CacheCase, prefix int, session float64) (contextwin.HeadCase, bool) {
	c := m.s.conv
	c.mu.Lock()
	head := c.ledger.Estimator.Tokens(c.prompt.estimate())
	built := c.head.guide != ""
	c.mu.Unlock()
	if !built || head < m.s.bill.cacheMin(m.s.model) || head >= prefix {
		return contextwin.HeadCase{}, false
	}
	full.Prefix, full.Reads, full.HitRate = head, explicitHeadReads, m.rateFor(&heldCache{}, session)
	return contextwin.HeadCase{CacheCase: full, Messages: prefix - head}, true
}

// rateFor is the implicit hit rate a decision about c weighs: the recent one (probes included)
// for a cache of the history, which lives a few calls; the session's for a cache of the head,
// which lives the session through and whose reads forgo the implicit hits on every message. A
// probe is one draw: under random misses half of them say 0, and a head cache kept on one such
// draw paid a quarter more than implicit caching alone (the investigation, half the hits
// missed, no compaction).
func (m *ExplicitCache) rateFor(c *heldCache, session float64) float64 {
	if len(c.messages) == 0 {
		return session
	}
	return m.seen.hitRate(session)
}

// gone forgets a cache the API no longer has; the first time, the next call may create another,
// after that the session goes on with implicit caching.
func (m *ExplicitCache) gone(name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cur != nil && m.cur.Name == name {
		m.journalCache(journal.CacheDeleted, m.cur.Cache, 0, true)
		m.cur = nil
	}
	if m.retried {
		m.stopLocked("the explicit cache expired again: the session goes on with implicit caching")
		return
	}
	m.retried = true
}

// dropLocked deletes the cache in use, if any. m.mu must be held.
func (m *ExplicitCache) dropLocked(ctx context.Context) {
	if m.cur == nil {
		return
	}
	if err := m.store.DeleteCache(context.WithoutCancel(ctx), m.cur.Name); err != nil {
		// Not journaled as deleted: a resume looks for it again.
		m.s.logger.Warn("explicit cache not deleted: it expires with its TTL", "session", m.s.id, "cache", m.cur.Name, "error", err)
	} else {
		m.journalCache(journal.CacheDeleted, m.cur.Cache, 0, true)
	}
	m.cur = nil
}

// extendLocked gives the cache in use ttl more from now, and bills and journals the storage
// added; on failure it stays as it was (a cache gone is found by the next request) and false is
// returned. m.mu must be held.
func (m *ExplicitCache) extendLocked(ctx context.Context, ttl time.Duration) error {
	cur := m.cur
	exp, err := m.store.ExtendCache(ctx, cur.Name, ttl)
	if err != nil {
		return err
	}
	cost, priced := m.s.bill.cacheStorage(m.s.model, cur.Tokens, exp.Sub(cur.Expires))
	cur.Expires = exp
	m.journalCache(journal.CacheExtended, cur.Cache, cost, priced)
	return nil
}

// journalCache saves what happened to cache c and what it cost, for a resumed session's totals
// and for the caches a crash may have left.
func (m *ExplicitCache) journalCache(op string, c gemini.Cache, cost float64, priced bool) {
	ev := &journal.CacheEvent{Op: op, Name: c.Name}
	switch op {
	case journal.CacheCreated:
		ev.Tokens, ev.Until = c.Tokens, c.Expires
	case journal.CacheExtended:
		ev.Until = c.Expires
	}
	m.s.journal(journal.Record{Kind: journal.KindCache, Cache: ev, Cost: cost, Unpriced: !priced})
}

// Drop deletes the explicit cache the session uses, if any: Close calls it, so that the
// cache stops billing storage when the session ends (one left behind by a crash expires with its
// TTL, explicitTTL, or is deleted when the session is resumed: DropLeft).
func (m *ExplicitCache) Drop(ctx context.Context) {
	if m != nil {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.dropLocked(ctx)
	}
}

// stopLocked puts the session back on implicit caching for good, saying why once. m.mu must be
// held.
func (m *ExplicitCache) stopLocked(why string) {
	if m.off == "" {
		m.off = why
		m.notes = append(m.notes, why)
	}
}

// noteLocked says text once per key. m.mu must be held.
func (m *ExplicitCache) noteLocked(key, text string) {
	if w := m.s.bill.warnOnce("explicit:"+key, text); w != "" {
		m.notes = append(m.notes, w)
	}
}

func (m *ExplicitCache) setRead(read bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.read = read
}

// observe records a loop call's implicit outcome (nil-safe, like lastRead).
func (m *ExplicitCache) observe(u contextwin.CallUsage) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seen.observe(u)
}

// lastRead tells whether the last loop call read an explicit cache.
func (m *ExplicitCache) lastRead() bool {
	if m == nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.read
}

// takeNotes returns what the user has not been told yet.
func (m *ExplicitCache) takeNotes() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := m.notes
	m.notes = nil
	return out
}

// idleKeeper is the goroutine that keeps the cache alive while the session is idle: started
// when a turn ends, stopped when the next begins or the session closes.
type idleKeeper struct {
	mu     sync.Mutex         // guards cancel and done
	cancel context.CancelFunc // stops the goroutine; nil when none runs
	done   chan struct{}      // closed when it has returned
}

// CacheDisplayName is the display name of session id's explicit caches.
func CacheDisplayName(id string) string { return cachePrefix + id }

const cachePrefix = "reprise "
