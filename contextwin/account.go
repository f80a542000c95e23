package contextwin

import (
	"strings"
)

// Prices are US dollars per million tokens.
type Prices struct {
	Input       float64 `json:"input"`
	CachedInput float64 `json:"cachedInput"`
	Output      float64 `json:"output"`
}

// PriceTable maps a model name (or a prefix of it) to its prices.
type PriceTable map[string]Prices

// DefaultPrices are the Gemini API's list prices for prompts up to 200k tokens (paid tier, text),
// as published in 2026; a user can override any entry.
func DefaultPrices() PriceTable {
	return PriceTable{
		"gemini-2.5-flash-lite": {Input: 0.10, CachedInput: 0.01, Output: 0.40},
		"gemini-2.5-flash":      {Input: 0.30, CachedInput: 0.03, Output: 2.50},
		"gemini-2.5-pro":        {Input: 1.25, CachedInput: 0.125, Output: 10.00},
		"gemini-3-flash":        {Input: 0.50, CachedInput: 0.05, Output: 3.00},
		"gemini-3-pro":          {Input: 2.00, CachedInput: 0.20, Output: 12.00},
	}
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
// ("gemini-2.5-flash-preview-09" → "gemini-2.5-flash"). ok is false for an unknown model, whose
// cost is then reported as zero rather than guessed.
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
	Calls        int     `json:"calls"`
	InputTokens  int     `json:"inputTokens"` // billed input: the sum of promptTokenCount
	CachedTokens int     `json:"cachedTokens"`
	OutputTokens int     `json:"outputTokens"`
	Cost         float64 `json:"cost"` // US dollars
	// WeightedInput is the input in full-price tokens: a cached token weighs its price's share
	// of the uncached one (a tenth on Gemini). The session cap is counted in it.
	WeightedInput float64 `json:"weightedInput,omitempty"`
}

// DefaultCachedWeight is what a cached input token costs relative to an uncached one when the
// model's prices are unknown: Gemini's implicit-caching discount for every model it lists.
const DefaultCachedWeight = 0.1

// CachedWeight is the price of a cached input token relative to an uncached one.
func (p Prices) CachedWeight() float64 {
	if p.Input <= 0 {
		return DefaultCachedWeight
	}
	return p.CachedInput / p.Input
}

// Add records one call.
func (t *Totals) Add(u CallUsage, p Prices) {
	t.Calls++
	t.InputTokens += u.Prompt
	t.CachedTokens += u.Cached
	t.OutputTokens += u.Output()
	t.Cost += u.Cost(p)
	t.WeightedInput += float64(max(u.Prompt-u.Cached, 0)) + float64(u.Cached)*p.CachedWeight()
}

// Capped tells whether the session reached its cap: the input counted at its price
// (WeightedInput) against sessionTokenCap, so that a long session living off the prefix cache is
// not stopped for tokens it paid a tenth for; or its cost against maxCostUSD when that is set.
func (t Totals) Capped(p Policy) bool {
	weighted := t.WeightedInput
	if weighted == 0 && t.InputTokens > 0 { // totals saved before the weight was kept
		weighted = float64(t.InputTokens)
	}
	return weighted >= float64(p.SessionTokenCap) || p.MaxCostUSD > 0 && t.Cost >= p.MaxCostUSD
}
