package agent

import (
	"cmp"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent/gemini"
	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/contextwin"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// billing is what the session's calls cost and what the user was told about models and prices.
// Its methods take mu and no other lock; the policy's caps come in as arguments.
type billing struct {
	// Set by New, read-only after.
	pricing contextwin.Pricing // prices each call at the model that served it, on the day it was made
	asked   string             // the model asked for (Options.ModelName)
	// compaction is the model summaries are asked of when it is not the session's; "" when it is.
	compaction string
	now        func() time.Time
	// unpriced is a model without a known price that served a call: under a dollar cap, the
	// session stops there.
	unpriced string

	mu         sync.Mutex // guards everything below
	totals     contextwin.Totals
	calls      int             // model calls since the session began
	lastPrompt int             // the model's prompt count for the last call
	served     string          // the model that served the last call
	warned     map[string]bool // warnings already given this session, by key
	capped     bool            // a turn ended at the token or cost cap: every turn ends at once
}

// sum is the session's cumulative figures.
func (b *billing) sum() contextwin.Totals {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.totals
}

// summary bills one summary call served by model on tier, counting it among the totals and
// apart (Totals.Summaries). It returns its cost, and false when model has no known price.
func (b *billing) summary(model string, tier catalog.Tier, u contextwin.CallUsage) (float64, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	cost, priced := b.billLocked(model, tier, u)
	b.totals.AddSummary(u, cost, priced, tier == catalog.TierFlex)
	return cost, priced
}

// call bills one model call of the loop served by served on tier, counts it and returns its
// number, its cost (false: unknown) and the warnings it gives rise to (servedWarningsLocked).
func (b *billing) call(served string, tier catalog.Tier, u contextwin.CallUsage, status *genai.ModelStatus) (n int, cost float64, priced bool, warnings []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if u.Prompt > 0 {
		b.lastPrompt = u.Prompt
	}
	cost, priced = b.billLocked(served, tier, u)
	if !priced {
		b.unpriced = served
	}
	warnings = b.servedWarningsLocked(served, status, priced)
	b.served = served
	b.calls++
	return b.calls, cost, priced, warnings
}

// apply adds to the totals what r bills (journal.Bill): a subagent's start or one of its calls.
func (b *billing) apply(r journal.Record) {
	b.mu.Lock()
	defer b.mu.Unlock()
	journal.Bill(&b.totals, r)
}

// callCount is the number of model calls since the session began.
func (b *billing) callCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.calls
}

// overCap tells whether the totals reached a cap of p.
func (b *billing) overCap(p contextwin.Policy) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.totals.Capped(p)
}

// isCapped tells whether a turn ended at the cap.
func (b *billing) isCapped() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.capped
}

// setCapped records that a turn ended at the cap.
func (b *billing) setCapped() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.capped = true
}

// figures is what a usage report shows of the billing.
type figures struct {
	totals      contextwin.Totals
	calls       int
	lastPrompt  int
	servedOther string // the model that served the last call when it is not the one asked for
	priced      bool   // the model the next call is expected to be served by has a known price
	local       bool   // that model is a local one: free (contextwin.Pricing.Free)
	capped      bool
}

// figures returns the billing as a report shows it.
func (b *billing) figures() figures {
	b.mu.Lock()
	defer b.mu.Unlock()
	return figures{
		totals: b.totals, calls: b.calls, lastPrompt: b.lastPrompt, servedOther: b.servedOtherLocked(),
		priced: b.pricedLocked(), local: b.pricing.Free(b.modelLocked()), capped: b.capped,
	}
}

// forPlan returns what a compaction is weighed with: the prices (planPricesLocked), the prompt of
// the last call when its model caches it, the shortest prefix that model caches, and whether the
// prices are a local model's time.
func (b *billing) forPlan() (prices contextwin.Prices, cached, cacheMin int, inTime bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	cacheMin = b.cacheMinLocked()
	if b.lastPrompt >= cacheMin {
		cached = b.lastPrompt
	}
	return b.planPricesLocked(), cached, cacheMin, b.pricing.Free(b.modelLocked())
}

// billLocked adds one call's usage to the totals, priced at model (the model that served it) on
// tier (the tier that served it: Flex at its share) on the day it was made. It returns the call's
// cost, and false when model has no known price: the tokens count, the cost is unknown (never
// $0). b.mu must be held.
func (b *billing) billLocked(model string, tier catalog.Tier, u contextwin.CallUsage) (float64, bool) {
	p, ok := b.pricing.AtTier(model, b.now(), u.Prompt, tier)
	if !ok {
		b.totals.AddUnpriced(u)
		return 0, false
	}
	b.totals.Add(u, p)
	return u.Cost(p), true
}

// cacheCreated bills the creation of an explicit cache of tokens for model, as input, and its
// storage over ttl at the catalogue's storage price of the day. It returns the cost; false when
// model has no known price (nothing is billed).
func (b *billing) cacheCreated(model string, tokens int, ttl time.Duration) (float64, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	p, ok := b.pricing.At(model, b.now(), tokens)
	if !ok {
		return 0, false
	}
	cost := float64(tokens) * (p.Input + p.Storage()*ttl.Hours()) / 1e6
	b.totals.AddExplicitCache(tokens, cost)
	return cost, true
}

// cacheStorage bills the storage of an explicit cache of tokens for model over d more (an
// extension of its TTL) and returns the cost; false when model has no known price.
func (b *billing) cacheStorage(model string, tokens int, d time.Duration) (float64, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	p, ok := b.pricing.At(model, b.now(), tokens)
	if !ok || d <= 0 {
		return 0, ok
	}
	cost := float64(tokens) * p.Storage() * d.Hours() / 1e6
	b.totals.AddExplicitCache(0, cost)
	return cost, true
}

// warnOnce returns text the first time key is warned about in this session, else "".
func (b *billing) warnOnce(key, text string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.warnOnceLocked(key, text)
}

// modelLocked is the model the next call is expected to be served by: the last call's, else the
// one asked for. b.mu must be held.
func (b *billing) modelLocked() string { return cmp.Or(b.served, b.asked) }

// planPricesLocked are the prices a compaction is weighed at: the serving model's today, else
// the catalogue's default model's. The decision rests on the ratios between input, cached input
// and output, which Gemini models share closely enough. A local model is weighed in time, at its
// pace (timePricesLocked). b.mu must be held.
func (b *billing) planPricesLocked() contextwin.Prices {
	now := b.now()
	if b.pricing.Free(b.modelLocked()) {
		return b.timePricesLocked()
	}
	p, ok := b.pricing.At(b.modelLocked(), now, b.lastPrompt)
	if !ok {
		p, _ = b.pricing.At(b.pricing.Catalog.DefaultModel(), now, b.lastPrompt)
	}
	// A cached token is worth what the session's calls made of it: when implicit hits miss (a
	// dead zone of prompt sizes, a bad stretch), the prefix a clearing or a summary would rewrite
	// is not the saving it looks, and they pay sooner. Over nine tenths, the counts' rounding and
	// the odd miss: a tenth it is. The session's rate, not the last calls': one miss must not set
	// off a clearing at every call.
	if h, ok := b.totals.Cache(); ok && h.HitRate < 0.9 {
		p.CachedInput = h.HitRate*p.CachedInput + (1-h.HitRate)*p.Input
	}
	return p
}

// summaryPrices are what a summary on model is weighed at: its standard prices today for the
// last prompt's size, else the catalogue's default model's (as planPricesLocked).
func (b *billing) summaryPrices(model string) contextwin.Prices {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pricing.Free(model) {
		return b.timePricesLocked()
	}
	now := b.now()
	if _, ok := b.pricing.At(model, now, b.lastPrompt); !ok {
		model = b.pricing.Catalog.DefaultModel()
	}
	p, _ := b.pricing.At(model, now, b.lastPrompt)
	return p
}

// pricedLocked tells whether the model the next call is expected to be served by has a known
// price. b.mu must be held.
func (b *billing) pricedLocked() bool {
	_, ok := b.pricing.At(b.modelLocked(), b.now(), 0)
	return ok
}

// thinking is what every request of the session sends about thinking.
func (o *Options) thinking() gemini.Thinking {
	t := o.Thinking
	return gemini.Thinking{Level: t.Level, Budget: t.Budget}
}

// cacheMinLocked is the shortest prefix the serving model caches implicitly. b.mu must be held.
func (b *billing) cacheMinLocked() int { return b.cacheMin(b.modelLocked()) }

// cacheMin is the shortest prefix model caches implicitly: the catalogue's, and for a local
// model noCache (its server bills no cache).
func (b *billing) cacheMin(model string) int {
	if b.pricing.Free(model) {
		return noCache
	}
	return b.pricing.Catalog.CacheMin(model)
}

// idleLife is how long an implicitly cached prefix is assumed to live unused (the catalogue's).
func (b *billing) idleLife() time.Duration { return b.pricing.Catalog.IdleLife() }

// noCache is the cache minimum of a model that caches nothing: no prompt reaches it.
const noCache = math.MaxInt32

// timePricesLocked are a local model's prices as the engine weighs them: seconds per million
// tokens at the pace the session measured, or the catalogue's assumed one (contextwin.Pace).
// b.mu must be held.
func (b *billing) timePricesLocked() contextwin.Prices {
	r := b.pricing.Catalog.Providers[catalog.ProviderLocal]
	return b.totals.Time.Pace(contextwin.Pace{Prompt: r.PromptPerSecond, Output: r.OutputPerSecond}).Prices()
}

// usage is what the call served by model reported, as the session counts it.
func (b *billing) usage(model string, u gemini.Usage) contextwin.CallUsage {
	return contextwin.CallUsage{Prompt: u.Prompt, Cached: u.Cached, Candidates: u.Candidates, Thoughts: u.Thoughts,
		Local: b.free(model), WaitMillis: u.Wait.Milliseconds(), GenMillis: u.Gen.Milliseconds()}
}

// free tells whether a call to model costs nothing but time (contextwin.Pricing.Free).
func (b *billing) free(model string) bool { return b.pricing.Free(model) }

// isLocal tells whether m runs on the user's machine or network (agent/openai's Local).
func isLocal(m Model) bool {
	l, ok := m.(interface{ Local() bool })
	return ok && l.Local()
}

// warnOnceLocked returns text the first time key is warned about in this session, else "".
// b.mu must be held.
func (b *billing) warnOnceLocked(key, text string) string {
	if b.warned[key] {
		return ""
	}
	if b.warned == nil {
		b.warned = map[string]bool{}
	}
	b.warned[key] = true
	return text
}

// turnWarnings are what the user hears before a turn's first call, once per session: the model
// is retired, or the budget keeps compacted prompts under the model's cache minimum (window is
// the session's budget).
func (b *billing) turnWarnings(p contextwin.Policy, window int) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	if min := b.cacheMinLocked(); min != noCache && int(p.CompactAt*float64(window)) < min+min/4 {
		out = append(out, b.warnOnceLocked("budget", fmt.Sprintf(
			"contextBudget %d is small for %s: compacted prompts (%d tokens and less) stay near its %d-token cache minimum and are billed in full, "+
				"so managing the context can cost more than it saves; a budget of at least %d keeps the cache working",
			window, b.asked, int(p.CompactAt*float64(window)), min, (2*min+999)/1000*1000)))
	}
	name := b.asked
	m, known := b.pricing.Catalog.Lookup(name)
	if known && m.RetiredAt(b.now()) {
		text := fmt.Sprintf("%s was shut down on %s (model catalogue of %s): the API answers 404", name, m.Shutdown, b.pricing.Catalog.CurrentAsOf)
		if m.RoutedTo != "" {
			text += fmt.Sprintf(" to new keys and %s to older ones, billed at its prices", m.RoutedTo)
		}
		if m.Replacement != "" {
			text += fmt.Sprintf("; use %s instead", m.Replacement)
		}
		out = append(out, b.warnOnceLocked("retired", text))
	}
	out = append(out, b.summaryWarningsLocked(p, b.pricing.Catalog)...)
	return nonEmpty(out)
}

// UnpricedError stops a session under a dollar cap that would call a model without a known
// price: its calls could not be counted against the cap, and a cap the user set is not a warning.
type UnpricedError struct {
	Model   string
	MaxCost float64
}

func (e *UnpricedError) Error() string {
	return fmt.Sprintf("%s has no known price, so the dollar cap ($%.2f) cannot be enforced: give it a price "+
		"(the prices or models setting, or --prices), or run it without a dollar cap (maxCostUSD 0, or --max-cost 0)", e.Model, e.MaxCost)
}

// unmetered returns an *UnpricedError when a dollar cap is set and a model the session calls (its
// own, the summaries', one the API routed a call to) has no known price; nil otherwise.
func (b *billing) unmetered(maxCost float64) error {
	if maxCost <= 0 {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, name := range []string{b.asked, b.compaction, b.unpriced} {
		if name == "" {
			continue
		}
		if _, priced := b.pricing.At(name, b.now(), 0); !priced {
			return &UnpricedError{Model: name, MaxCost: maxCost}
		}
	}
	return nil
}

func nonEmpty(in []string) []string {
	out := in[:0]
	for _, s := range in {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// servedWarningsLocked are the warnings one call gives rise to, each once per session: the API
// answered with another model than the one asked for (the call is billed at that model's
// prices), or the served model is being retired. b.mu must be held.
func (b *billing) servedWarningsLocked(served string, status *genai.ModelStatus, priced bool) []string {
	asked := b.asked
	cat := b.pricing.Catalog
	routed := !cat.Same(served, asked)
	var out []string
	if routed {
		text := fmt.Sprintf("the API answered %s with %s", asked, served)
		if m, ok := cat.Lookup(asked); ok && m.RetiredAt(b.now()) {
			text = fmt.Sprintf("%s is retired: the API answered with %s", asked, served)
			if m.Replacement != "" && !cat.Same(m.Replacement, served) {
				text += fmt.Sprintf(" (the catalogue's replacement is %s)", m.Replacement)
			}
		}
		if priced {
			text += fmt.Sprintf("; its calls are billed at %s's prices", served)
		} else {
			text += fmt.Sprintf("; %s has no known price, so the cost is unknown", served)
		}
		out = append(out, b.warnOnceLocked("served:"+served, text))
	}
	// A routed call's status is the retired model's: the routing warning has said it.
	if routed && status != nil && status.ModelStage == genai.ModelStageRetired {
		status = nil
	}
	subject := served
	if routed {
		subject = asked
	}
	if w := statusWarning(subject, status); w != "" {
		out = append(out, b.warnOnceLocked("status:"+subject, w))
	}
	return nonEmpty(out)
}

// statusWarning words a modelStatus that says the model is going away, or "".
func statusWarning(model string, st *genai.ModelStatus) string {
	if st == nil {
		return ""
	}
	stage := st.ModelStage
	if stage != genai.ModelStageDeprecated && stage != genai.ModelStageRetired && stage != genai.ModelStageLegacy && st.RetirementTime.IsZero() {
		return ""
	}
	text := fmt.Sprintf("the API reports %s as %s", model, strings.ToLower(string(cmpOr(stage, "to be retired"))))
	if !st.RetirementTime.IsZero() {
		text += ", retiring on " + st.RetirementTime.UTC().Format(time.DateOnly)
	}
	if st.Message != "" {
		text += ": " + st.Message
	}
	return text
}

func cmpOr(stage genai.ModelStage, def string) genai.ModelStage {
	if stage == "" || stage == genai.ModelStageUnspecified {
		return genai.ModelStage(def)
	}
	return stage
}

// servedOtherLocked is the model that served the last call when it is not the one asked for.
// b.mu must be held.
func (b *billing) servedOtherLocked() string {
	if b.served == "" || b.pricing.Catalog.Same(b.served, b.asked) {
		return ""
	}
	return b.served
}

// summaryTarget is the summaries' model as planFacts reads it: its name, whether it is another
// model than the session's, and whether the Flex setting applies to it.
func (b *billing) summaryTarget(p contextwin.Policy) (name string, cold, flexOK bool) {
	name = b.asked
	if b.compaction != "" {
		name, cold = b.compaction, true
	}
	flexOK = p.CompactionTier == catalog.TierFlex && b.pricing.Catalog.OffersFlex(name)
	return name, cold, flexOK
}

// summaryWarningsLocked are what the user hears once per session about the compactionModel and
// compactionTier settings: a retired model, one without a known price (the summaries' cost is
// unknown), Flex asked of a model the catalogue does not list on it. b.mu must be held.
func (b *billing) summaryWarningsLocked(p contextwin.Policy, cat *catalog.Catalog) []string {
	name := cmp.Or(b.compaction, b.asked)
	var out []string
	if b.compaction != "" {
		if m, ok := cat.Lookup(name); ok && m.RetiredAt(b.now()) {
			text := fmt.Sprintf("compactionModel %s was shut down on %s (model catalogue of %s)", name, m.Shutdown, cat.CurrentAsOf)
			if m.Replacement != "" {
				text += fmt.Sprintf("; use %s instead", m.Replacement)
			}
			out = append(out, b.warnOnceLocked("compaction:retired", text))
		}
		if _, ok := b.pricing.At(name, b.now(), 0); !ok {
			out = append(out, b.warnOnceLocked("compaction:price", fmt.Sprintf(
				"compactionModel %s has no known price: the summaries' cost is unknown (give it one with --prices or the prices setting)", name)))
		}
	}
	if p.CompactionTier == catalog.TierFlex && !cat.OffersFlex(name) {
		out = append(out, b.warnOnceLocked("compaction:flex", fmt.Sprintf(
			"compactionTier flex: the model catalogue of %s does not list %s on the Flex tier, so its summaries use the standard tier "+
				"(if it is offered, say so with the models setting: {%q: {\"flex\": true}})", cat.CurrentAsOf, name, name)))
	}
	return out
}
