package contextwin

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// Prices are US dollars per million tokens.
type Prices struct {
	Input       float64 `json:"input"`
	CachedInput float64 `json:"cachedInput"`
	Output      float64 `json:"output"`
	// CacheStorage is what an explicit cache costs to keep, per million tokens per hour: the
	// catalogue's (catalog.Price.CacheStorage) unless an override gives it; 0 in prices built by
	// hand means catalog.FallbackCacheStorage (Storage).
	CacheStorage float64 `json:"cacheStorage,omitempty"`
}

// Storage is the explicit-cache storage price, per million tokens per hour.
func (p Prices) Storage() float64 {
	if p.CacheStorage > 0 {
		return p.CacheStorage
	}
	return catalog.FallbackCacheStorage
}

// PriceTable maps a model name (or a prefix of it) to prices that override the catalogue's: the
// --prices file and the prices setting.
type PriceTable map[string]Prices

// Pricing prices calls: a user's override first, else the catalogue's row for the model at the
// call's date and prompt size (prices change on dated days; long prompts have their own tier).
type Pricing struct {
	Catalog   *catalog.Catalog // nil: catalog.Builtin()
	Overrides PriceTable
	// Local is set when the models run on the user's machine or network (a local
	// OpenAI-compatible server): a model neither the overrides nor the catalogue price is free
	// (Free), and weighed in time.
	Local bool
}

// Free tells whether a call to model costs nothing: a local model the user and the catalogue
// give no price.
func (p Pricing) Free(model string) bool {
	if !p.Local {
		return false
	}
	if _, ok := p.Overrides.Lookup(model); ok {
		return false
	}
	c := p.Catalog
	if c == nil {
		c = catalog.Builtin()
	}
	_, known := c.Lookup(model)
	return !known
}

// At returns the prices of a call to model made at t whose prompt is prompt tokens. ok is false
// when neither the overrides nor the catalogue price model: its cost is then unknown, never zero.
// An override without a storage price keeps the catalogue's (the fallback for a model it does
// not know).
func (p Pricing) At(model string, t time.Time, prompt int) (Prices, bool) {
	c := p.Catalog
	if c == nil {
		c = catalog.Builtin()
	}
	m, known := c.Lookup(model)
	if o, ok := p.Overrides.Lookup(model); ok {
		if o.CacheStorage <= 0 {
			o.CacheStorage = m.CacheStorageAt(t)
		}
		return o, true
	}
	if !known {
		return Prices{}, p.Local // free, or unknown
	}
	r, ok := m.RatesAt(t, prompt)
	if !ok {
		return Prices{}, false
	}
	return Prices{Input: r.Input, CachedInput: r.CachedInput, Output: r.Output, CacheStorage: m.CacheStorageAt(t)}, true
}

// AtTier is At for a call served on tier: the Flex tier's rates are the standard ones (an
// override's too) at the catalogue's Flex share.
func (p Pricing) AtTier(model string, t time.Time, prompt int, tier catalog.Tier) (Prices, bool) {
	pr, ok := p.At(model, t, prompt)
	if !ok {
		return pr, false
	}
	c := p.Catalog
	if c == nil {
		c = catalog.Builtin()
	}
	f := c.TierShare(tier)
	return Prices{Input: pr.Input * f, CachedInput: pr.CachedInput * f, Output: pr.Output * f}, true
}

// Merge returns t with the entries of o added or replacing t's.
func (t PriceTable) Merge(o PriceTable) PriceTable {
	out := make(PriceTable, len(t)+len(o))
	for k, v := range t {
		out[k] = v
	}
	for k, v := range o {
		out[k] = v
	}
	return out
}

// Lookup finds the prices of model: an exact entry, else the longest entry that prefixes it
// ("gemini-3.8-flash-preview-09" → "gemini-3.8-flash"). ok is false for a model it does not list.
func (t PriceTable) Lookup(model string) (Prices, bool) {
	model = strings.TrimPrefix(model, "models/")
	if p, ok := t[model]; ok {
		return p, true
	}
	best, found := "", false
	for name := range t {
		if strings.HasPrefix(model, name) && len(name) > len(best) {
			best, found = name, true
		}
	}
	return t[best], found
}

// CallUsage is what the model reported for one call.
type CallUsage struct {
	Prompt     int `json:"prompt"` // promptTokenCount: includes the cached part
	Cached     int `json:"cached"`
	Candidates int `json:"candidates"`
	Thoughts   int `json:"thoughts"`
	// ExpectedCached is what the agent expected the API to report as cached for a loop call:
	// the part of the request shared with the session's previous request, when it reaches the
	// model's implicit-cache minimum (0 below it, and for calls not measured, such as a
	// summary). Comparing it with Cached measures implicit caching, which is best-effort.
	ExpectedCached int `json:"expectedCached,omitempty"`
	// Explicit is set when the call read an explicit cache: its hit owes nothing to luck, and it
	// is left out of the implicit hit rate.
	Explicit bool `json:"explicit,omitempty"`
	// Miss says why a loop call read nothing from the implicit cache, or less than expected;
	// empty for a hit, and for calls not measured.
	Miss MissCause `json:"miss,omitempty"`
	// Local is set when a model on the user's machine or network served the call (Pricing.Free):
	// it cost nothing, and its time is what it cost.
	Local bool `json:"local,omitempty"`
	// WaitMillis is the time from the request to the first chunk of the reply (the prompt
	// processed), and GenMillis from the first chunk to the last (the output generated), as the
	// client measured them; 0 when it did not.
	WaitMillis int64 `json:"waitMs,omitempty"`
	GenMillis  int64 `json:"genMs,omitempty"`
}

// Output is what the call is billed as output: candidates and thoughts.
func (u CallUsage) Output() int { return u.Candidates + u.Thoughts }

// Cost of one call at prices p: uncached input, cached input and output at their own rates.
func (u CallUsage) Cost(p Prices) float64 {
	uncached := max(u.Prompt-u.Cached, 0)
	return (float64(uncached)*p.Input + float64(u.Cached)*p.CachedInput + float64(u.Output())*p.Output) / 1e6
}

// Totals are a session's cumulative figures.
type Totals struct {
	Calls         int     `json:"calls"`
	InputTokens   int     `json:"inputTokens"` // billed input: the sum of promptTokenCount
	CachedTokens  int     `json:"cachedTokens"`
	OutputTokens  int     `json:"outputTokens"`            // thinking included
	ThoughtTokens int     `json:"thoughtTokens,omitempty"` // the thinking part of OutputTokens
	Cost          float64 `json:"cost"`                    // US dollars, of the calls whose prices are known
	// Unpriced counts the calls whose model has no known price: their cost is unknown, and
	// Cost is then a lower bound.
	Unpriced int `json:"unpriced,omitempty"`
	// WeightedInput is the input in full-price tokens: a cached token weighs its price's share
	// of the uncached one (a tenth on Gemini). The session cap is counted in it.
	WeightedInput float64 `json:"weightedInput,omitempty"`
	// WeightedOutput is the output, thinking included, in the same full-price input tokens: an
	// output token weighs its price's multiple of an uncached input one (5 on Gemini's flash
	// models). The session cap counts it too: a session that thinks at length is not free.
	WeightedOutput float64 `json:"weightedOutput,omitempty"`
	// CacheExpected sums the calls' ExpectedCached, and CacheReported what the API reported
	// cached on the same calls, each call counted up to what was expected: a hit nobody expected
	// (a prefix cached by another session, say) does not make up for a miss.
	CacheExpected int `json:"cacheExpected,omitempty"`
	CacheReported int `json:"cacheReported,omitempty"`
	// CacheWriteTokens are the tokens put in explicit caches, billed as input when created;
	// their storage is in Cost.
	CacheWriteTokens int `json:"cacheWriteTokens,omitempty"`
	// Summaries are the compaction summaries' calls, counted in the figures above too: what the
	// summaries cost apart, and on which tier.
	Summaries SummaryTotals `json:"summaries,omitzero"`
	// Subagents are the calls of the session's subagents (the task tool), counted in the figures
	// above too: the session's caps cover them, and they are shown apart.
	Subagents SubagentTotals `json:"subagents,omitzero"`
	// Local counts the calls a local model served: free, counted in Time rather than in Cost.
	Local int `json:"local,omitempty"`
	// Misses are the loop calls the implicit cache did not serve as expected, by cause.
	Misses Misses `json:"misses,omitzero"`
	// Time is how long the model took over the calls, as the clients measured it.
	Time TimeTotals `json:"time,omitzero"`
}

// CallTotals are some calls of a session counted apart (its summaries', its subagents').
type CallTotals struct {
	Calls        int     `json:"calls"`
	InputTokens  int     `json:"inputTokens"`
	CachedTokens int     `json:"cachedTokens"`
	OutputTokens int     `json:"outputTokens"`
	Cost         float64 `json:"cost"` // of the priced calls
	Unpriced     int     `json:"unpriced,omitempty"`
	Local        int     `json:"local,omitempty"` // calls a local model served, free
}

// add counts one call, at its cost when priced (false: unknown).
func (c *CallTotals) add(u CallUsage, cost float64, priced bool) {
	if u.Local {
		c.Local++
	}
	c.Calls++
	c.InputTokens += u.Prompt
	c.CachedTokens += u.Cached
	c.OutputTokens += u.Output()
	if priced {
		c.Cost += cost
	} else {
		c.Unpriced++
	}
}

// costText is their cost as users read it: "$0.0012", "cost unknown", "$0.0012 + unknown".
func (c CallTotals) costText() string {
	switch {
	case c.Local > 0 && c.Local == c.Calls:
		return "local"
	case c.Local > 0:
		return Totals{Calls: c.Calls, Cost: c.Cost, Unpriced: c.Unpriced, Local: c.Local}.localText(false)
	case c.Unpriced > 0 && c.Unpriced == c.Calls:
		return "cost unknown"
	case c.Unpriced > 0:
		return fmt.Sprintf("$%.4f + unknown", c.Cost)
	}
	return fmt.Sprintf("$%.4f", c.Cost)
}

// SubagentTotals are the calls of a session's subagents, summaries of their own included.
type SubagentTotals struct {
	Runs int `json:"runs"` // subagents started
	CallTotals
}

// AddSubagentCall records one call of a subagent among the totals and apart, at its cost when
// priced (false: unknown).
func (t *Totals) AddSubagentCall(u CallUsage, cost float64, priced bool) {
	u.Miss = "" // a subagent's misses are its own context's, not this one's
	if priced {
		t.count(u, DefaultCachedWeight, DefaultOutputWeight)
		t.Cost += cost
	} else {
		t.AddUnpriced(u)
	}
	t.Subagents.add(u, cost, priced)
}

// Text is the subagents as users read them: "2 subagents, 14 calls $0.0123 (48,210 input, 31,000
// cached)", or "" before the first.
func (s SubagentTotals) Text() string {
	if s.Runs == 0 && s.Calls == 0 {
		return ""
	}
	noun := "subagents"
	if s.Runs == 1 {
		noun = "subagent"
	}
	calls := "calls"
	if s.Calls == 1 {
		calls = "call"
	}
	return fmt.Sprintf("%d %s, %d %s %s (%s input, %s cached)", s.Runs, noun, s.Calls, calls, s.costText(), catalog.Commas(s.InputTokens), catalog.Commas(s.CachedTokens))
}

// SummaryTotals are the summarizer's calls of a session.
type SummaryTotals struct {
	CallTotals
	Flex int `json:"flex,omitempty"` // calls served on the Flex tier
}

// AddSummary records one summary call among the totals' calls (Add or AddUnpriced did the
// rest): cost is its cost when priced, flex whether the Flex tier served it.
func (t *Totals) AddSummary(u CallUsage, cost float64, priced, flex bool) {
	s := &t.Summaries
	s.add(u, cost, priced)
	if flex {
		s.Flex++
	}
}

// Text is the summaries as users read them: "2 summaries $0.0012 (8,120 input, 0 cached; 1 on
// Flex)", or "" before the first.
func (s SummaryTotals) Text() string {
	if s.Calls == 0 {
		return ""
	}
	noun := "summaries"
	if s.Calls == 1 {
		noun = "summary"
	}
	text := fmt.Sprintf("%d %s %s (%s input, %s cached", s.Calls, noun, s.costText(), catalog.Commas(s.InputTokens), catalog.Commas(s.CachedTokens))
	if s.Flex > 0 {
		text += fmt.Sprintf("; %d on Flex", s.Flex)
	}
	return text + ")"
}

// AddExplicitCache records the creation of an explicit cache of tokens, or its storage alone
// (tokens 0), costing cost.
func (t *Totals) AddExplicitCache(tokens int, cost float64) {
	t.CacheWriteTokens += tokens
	t.WeightedInput += float64(tokens)
	t.Cost += cost
}

// CacheHits is how implicit caching did over a session: the cached tokens expected, those the
// API reported, and their ratio.
type CacheHits struct {
	Expected int     `json:"expected"`
	Reported int     `json:"reported"`
	HitRate  float64 `json:"hitRate"` // Reported ÷ Expected, from 0 to 1
}

// Cache returns the session's implicit-cache hits; false while no call expected any.
func (t Totals) Cache() (CacheHits, bool) {
	if t.CacheExpected <= 0 {
		return CacheHits{}, false
	}
	return CacheHits{Expected: t.CacheExpected, Reported: t.CacheReported, HitRate: float64(t.CacheReported) / float64(t.CacheExpected)}, true
}

// CacheText is the hit rate as users read it, "cache: 58 % of the expected hits", or "" while
// no call expected any.
func (t Totals) CacheText() string {
	h, ok := t.Cache()
	if !ok {
		return ""
	}
	return "cache: " + h.Text()
}

// Text is the hit rate as users read it, "58 % of the expected hits": rounded down, so that a
// miss never reads as 100 %.
func (h CacheHits) Text() string {
	return fmt.Sprintf("%.0f %% of the expected hits", math.Floor(100*h.HitRate+1e-9))
}

// DefaultCachedWeight is what a cached input token costs relative to an uncached one when the
// model's prices are unknown: Gemini's implicit-caching discount for every model it lists.
const DefaultCachedWeight = 0.1

// DefaultOutputWeight is what an output token costs relative to an uncached input one when the
// model's prices are unknown: the ratio of Gemini's flash models.
const DefaultOutputWeight = 5

// OutputWeight is the price of an output token relative to an uncached input one.
func (p Prices) OutputWeight() float64 {
	if p.Input <= 0 || p.Output <= 0 {
		return DefaultOutputWeight
	}
	return p.Output / p.Input
}

// CachedWeight is the price of a cached input token relative to an uncached one.
func (p Prices) CachedWeight() float64 {
	if p.Input <= 0 {
		return DefaultCachedWeight
	}
	return p.CachedInput / p.Input
}

// Add records one call at prices p.
func (t *Totals) Add(u CallUsage, p Prices) {
	t.count(u, p.CachedWeight(), p.OutputWeight())
	t.Cost += u.Cost(p)
}

// AddUnpriced records one call whose prices are unknown: its tokens count, its cost does not.
func (t *Totals) AddUnpriced(u CallUsage) {
	t.count(u, DefaultCachedWeight, DefaultOutputWeight)
	t.Unpriced++
}

func (t *Totals) count(u CallUsage, cachedWeight, outputWeight float64) {
	t.Calls++
	t.InputTokens += u.Prompt
	t.CachedTokens += u.Cached
	t.OutputTokens += u.Output()
	t.ThoughtTokens += u.Thoughts
	if u.ExpectedCached > 0 && !u.Explicit {
		t.CacheExpected += u.ExpectedCached
		t.CacheReported += min(u.Cached, u.ExpectedCached)
	}
	t.WeightedInput += float64(max(u.Prompt-u.Cached, 0)) + float64(u.Cached)*cachedWeight
	t.WeightedOutput += float64(u.Output()) * outputWeight
	if u.Local {
		t.Local++
	}
	t.Misses.add(u.Miss)
	t.Time.add(u)
}

// CostKnown tells whether every call was priced.
func (t Totals) CostKnown() bool { return t.Unpriced == 0 }

// CostText is the cost as users read it: "$0.0063"; "unknown" when no call could be priced, and
// "$0.0063 + unknown" when some could not. An unknown price never shows as $0.
func (t Totals) CostText() string { return t.CostTextUnknown(false) }

// CostTextUnknown is CostText when the cost is also unknown for another reason (the session's
// model has no known price, though no call has been made yet).
func (t Totals) CostTextUnknown(unknown bool) string { return t.CostWords(unknown, false) }

// CostWords is CostTextUnknown when the calls to come may also be to a local model (local):
// what a local model's calls cost is their time, "local · 41 s", never "$0"; beside priced ones,
// "$0.0063 + local 41 s".
func (t Totals) CostWords(unknown, local bool) string {
	if t.Local > 0 || local && t.Calls == 0 {
		return t.localText(unknown)
	}
	switch {
	case t.Unpriced == 0 && !unknown:
		return fmt.Sprintf("$%.4f", t.Cost)
	case t.Cost == 0:
		return "unknown"
	default:
		return fmt.Sprintf("$%.4f + unknown", t.Cost)
	}
}

// localText is CostWords for a session some calls of which a local model served.
func (t Totals) localText(unknown bool) string {
	local := "local"
	if t.Time.Millis > 0 {
		local += " · " + Elapsed(t.Time.Millis)
	}
	var paid []string
	if t.Cost > 0 || t.Local < t.Calls && t.Unpriced < t.Calls-t.Local {
		paid = append(paid, fmt.Sprintf("$%.4f", t.Cost))
	}
	if t.Unpriced > 0 || unknown && t.Local < t.Calls {
		paid = append(paid, "unknown")
	}
	if len(paid) == 0 {
		return local
	}
	return strings.Join(paid, " + ") + " + " + strings.Replace(local, " · ", " ", 1)
}

// Elapsed is a duration in milliseconds as users read it: "<0.1 s", "0.4 s", "41 s", "3 min 12 s",
// "1 h 04 min".
func Elapsed(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	switch {
	case d < 100*time.Millisecond:
		return "<0.1 s"
	case d < 10*time.Second:
		return fmt.Sprintf("%.1f s", d.Seconds())
	case d < time.Minute:
		return fmt.Sprintf("%d s", int(d.Round(time.Second).Seconds()))
	case d < time.Hour:
		d = d.Round(time.Second)
		return fmt.Sprintf("%d min %02d s", int(d.Minutes()), int(d.Seconds())%60)
	}
	d = d.Round(time.Minute)
	return fmt.Sprintf("%d h %02d min", int(d.Hours()), int(d.Minutes())%60)
}

// TimeTotals are how long the model took over a session's calls, as the clients measured them:
// what a local model costs, in place of dollars, and its pace.
type TimeTotals struct {
	Millis int64 `json:"millis"` // the calls, from each request to its last chunk
	// PromptTokens (uncached) were processed in PromptMillis and OutputTokens generated in
	// OutputMillis, on the calls whose first chunk told the two apart.
	PromptTokens int   `json:"promptTokens,omitempty"`
	PromptMillis int64 `json:"promptMs,omitempty"`
	OutputTokens int   `json:"outputTokens,omitempty"`
	OutputMillis int64 `json:"outputMs,omitempty"`
}

func (t *TimeTotals) add(u CallUsage) {
	t.Millis += u.WaitMillis + u.GenMillis
	if u.WaitMillis > 0 && u.GenMillis > 0 {
		t.PromptTokens += max(u.Prompt-u.Cached, 0)
		t.PromptMillis += u.WaitMillis
		t.OutputTokens += u.Output()
		t.OutputMillis += u.GenMillis
	}
}

// Pace is a model's speed in tokens per second: the prompt processed, the output generated.
type Pace struct {
	Prompt float64 `json:"promptTokensPerSecond"`
	Output float64 `json:"outputTokensPerSecond"`
}

// minPaceMillis is the least measured time a pace is taken from: under it the figure is noise (a
// reply of a few tokens, a server answering from memory), and the assumed pace stands.
const minPaceMillis = 200

// Pace is the pace the calls measured, each half of it where enough time was measured; assumed
// elsewhere.
func (t TimeTotals) Pace(assumed Pace) Pace {
	p := assumed
	if t.PromptMillis >= minPaceMillis && t.PromptTokens > 0 {
		p.Prompt = float64(t.PromptTokens) * 1000 / float64(t.PromptMillis)
	}
	if t.OutputMillis >= minPaceMillis && t.OutputTokens > 0 {
		p.Output = float64(t.OutputTokens) * 1000 / float64(t.OutputMillis)
	}
	return p
}

// Prices are the pace as the engine weighs it: seconds per million tokens in place of dollars,
// so that the clearing plan and the summary decision, which compare costs, compare time. A cached
// token weighs as much as the others: a local server bills no cache, and Ollama's reuse of its
// KV cache is not reported.
func (p Pace) Prices() Prices {
	in, out := 1e6/max(p.Prompt, 1), 1e6/max(p.Output, 1)
	return Prices{Input: in, CachedInput: in, Output: out}
}

// Capped tells whether the session reached its cap: its tokens counted at their price, in
// full-price input tokens (Weighted), against sessionTokenCap, so that a long session living off
// the prefix cache is not stopped for tokens it paid a tenth for, and one that thinks or writes at
// length is; or its cost against maxCostUSD when that is set (a model without a known price does
// not run under a dollar cap: the agent refuses it).
func (t Totals) Capped(p Policy) bool {
	return t.Weighted() >= float64(p.SessionTokenCap) || p.MaxCostUSD > 0 && t.Cost >= p.MaxCostUSD
}

// Weighted is what sessionTokenCap counts: input and output, thinking included, in full-price
// input tokens.
func (t Totals) Weighted() float64 {
	in, out := t.WeightedInput, t.WeightedOutput
	if in == 0 && t.InputTokens > 0 { // totals saved before the weights were kept
		in = float64(t.InputTokens)
	}
	if out == 0 && t.OutputTokens > 0 {
		out = float64(t.OutputTokens)
	}
	return in + out
}
