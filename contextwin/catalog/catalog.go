// Package catalog is the one place Reprise knows facts about Gemini models: which exist and which
// are retired (with what replaces them), their limits, their prices per million tokens with the
// dates they change and their long-prompt tiers, the shortest prefix implicit caching bills,
// whether explicit caching is offered, which models offer the Flex tier and at what share of the
// standard price, and the thinking levels each accepts. The table is a data
// file embedded in the binary (models.json), dated: what it says is as of CurrentAsOf, and what
// the API says at run time (models.list, a response's modelVersion) wins over it. Users override
// rows with the models setting (Overlay).
//
// The package has no dependencies inside the module, so every layer can read it.
package catalog

import (
	"bytes"
	"cmp"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

//go:embed models.json
var embedded []byte

// FallbackCacheMinTokens is the implicit-cache minimum assumed for a model the catalogue does not
// know: every current (3.x and 4) model's.
const FallbackCacheMinTokens = 4096

// FallbackCacheStorage is what storing an explicit cache is assumed to cost, in US dollars per
// million tokens per hour, for a model whose row has no storage price (an unknown model, or one
// whose price the sources do not give): the price every Flash and Flash-Lite row charges outside
// a promotion. Assuming more than less errs towards caching less and never under-reports a cost.
const FallbackCacheStorage = 1.00

// FallbackInputTokenLimit is the context window assumed for a model the catalogue does not know
// when the API cannot say either: every current model's.
const FallbackInputTokenLimit = 1_048_576

// Status is where a model is in its life.
type Status string

// Statuses. A deprecated model still answers; a retired one is shut down (404) or, for older
// keys, routed to RoutedTo.
const (
	GA         Status = "ga"
	Preview    Status = "preview"
	Deprecated Status = "deprecated"
	Retired    Status = "retired"
)

// Catalog is the table. Its methods do not modify it; Overlay returns a new one.
type Catalog struct {
	// CurrentAsOf is the date (YYYY-MM-DD) the table was checked against its sources.
	CurrentAsOf string   `json:"currentAsOf"`
	Sources     []string `json:"sources,omitempty"`
	// DefaultID is the model used when none is chosen: a GA model.
	DefaultID string `json:"default"`
	// Flex is the Flex service tier: what it costs, and since when the catalogue says so. The
	// rows say which models offer it (Model.Flex).
	Flex FlexTier `json:"flex"`
	// API is the API version the client calls.
	API APIVersion `json:"api"`
	// Implicit is what the catalogue assumes of implicit caching beyond its minimum.
	Implicit ImplicitCache `json:"implicitCache"`
	// Subagent is the model subagents run on when the user chooses none: a cheaper current one.
	Subagent SubagentChoice `json:"subagent"`
	// Providers are the rules of the other providers the rows of which the table holds
	// (Model.Provider), with when and where they were checked.
	Providers map[string]ProviderRules `json:"providers,omitempty"`
	Rows      []Model                  `json:"models"`
}

// ProviderRules are what a provider other than Gemini bills, as of Checked.
type ProviderRules struct {
	Checked string `json:"checked"`
	// CacheMinTokens is the shortest prefix its automatic cache bills as cached; 0: none.
	CacheMinTokens int `json:"cacheMinTokens"`
	// Free is a provider that bills nothing: a server on the user's machine or network.
	Free bool `json:"free,omitempty"`
	// PromptPerSecond and OutputPerSecond are the pace assumed for a free provider's model until
	// the session has measured its own: tokens of prompt processed, and of output generated, per
	// second.
	PromptPerSecond float64 `json:"promptTokensPerSecond,omitempty"`
	OutputPerSecond float64 `json:"outputTokensPerSecond,omitempty"`
	Source          string  `json:"source"`
}

// ProviderLocal is the rules' key for a server on the user's machine or network.
const ProviderLocal = "local"

// SubagentChoice is the catalogue's model for subagents, and the thinking level it runs them at
// (its provider's advice for agentic use of the model, which may differ from its default).
type SubagentChoice struct {
	Model    string `json:"model"`
	Thinking string `json:"thinking,omitempty"`
	// Checked is the date (YYYY-MM-DD) the choice was checked against Source.
	Checked string `json:"checked"`
	Source  string `json:"source,omitempty"`
}

// APIVersion is the version of the Gemini API (and of Vertex AI's) the client calls, named
// rather than left to the SDK, whose default moves: explicit caches live on one version only.
type APIVersion struct {
	Version       string `json:"version"`
	VertexVersion string `json:"vertexVersion"`
	// Checked is the date (YYYY-MM-DD) the versions were checked against Source.
	Checked string `json:"checked"`
	Source  string `json:"source,omitempty"`
}

// ImplicitCache is what is assumed of a provider's automatic prefix cache beyond the rows'
// minimum: how long a prefix lives unused, by which a miss is put down to idling rather than to
// chance.
type ImplicitCache struct {
	IdleMinutes float64 `json:"idleMinutes"`
	Checked     string  `json:"checked"`
	Source      string  `json:"source"`
}

// IdleLife is how long an implicitly cached prefix is assumed to live unused.
func (c *Catalog) IdleLife() time.Duration {
	return time.Duration(c.Implicit.IdleMinutes * float64(time.Minute))
}

// FlexTier is Gemini's Flex inference tier: a synchronous call at a share of the standard price,
// best-effort (the API sheds it when capacity is short) and slow (a latency target of minutes).
type FlexTier struct {
	// Share is what a call served on Flex pays of the standard rates, every rate alike (input,
	// cached input, output): 0.5 is half price.
	Share float64 `json:"share"`
	// Stage is the tier's own launch stage (preview), apart from the models'.
	Stage Status `json:"stage,omitempty"`
	// Checked is the date (YYYY-MM-DD) Share and the rows' flags were checked against Source.
	Checked string `json:"checked"`
	Source  string `json:"source,omitempty"`
}

// Tier is a service tier a call asks for, or the one the API says served it
// (usageMetadata.serviceTier).
type Tier string

// Tiers. The zero value is the standard tier: a request that names none.
const (
	TierStandard Tier = "standard"
	TierFlex     Tier = "flex"
)

// ParseTier checks a tier setting: "standard" or "flex", in any case; "" is standard.
func ParseTier(setting string) (Tier, error) {
	switch strings.ToLower(strings.TrimSpace(setting)) {
	case "", string(TierStandard):
		return TierStandard, nil
	case string(TierFlex):
		return TierFlex, nil
	}
	return "", fmt.Errorf("%q is not a service tier (standard, flex)", setting)
}

// ParseModelName checks a model name a user gives ("gemini-3.1-flash-lite", "models/…"): it goes
// into the request's URL path (models/NAME:generateContent), so it has no space, slash, colon,
// query or fragment character. It returns the name without "models/"; "" stays "" (the caller's
// default). A name the catalogue does not know is fine: its price is then unknown.
func ParseModelName(setting string) (string, error) {
	name := strings.TrimPrefix(strings.TrimSpace(setting), "models/")
	if i := strings.IndexFunc(name, func(r rune) bool {
		return r <= ' ' || r == 0x7f || strings.ContainsRune("/:?#%\\", r)
	}); i >= 0 || len(name) > 128 {
		return "", fmt.Errorf("%q is not a model name such as %s", setting, Builtin().DefaultModel())
	}
	return name, nil
}

// ServedTier reads the tier an API response names (usageMetadata.serviceTier: "flex",
// "standard", or an enum spelling such as "SERVICE_TIER_FLEX"); asked is what the request asked
// for, used when the response names none.
func ServedTier(reported string, asked Tier) Tier {
	r := strings.ToLower(strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(reported)), "SERVICE_TIER_"))
	switch r {
	case "", "unspecified":
		if asked == TierFlex {
			return TierFlex
		}
		return TierStandard
	}
	return Tier(r) // flex, standard, or one priced as standard (priority is never asked for)
}

// Model is one row.
type Model struct {
	ID string `json:"id"`
	// Provider is "" for Gemini, else the provider serving the model ("openai"): its rows price
	// and cache a session on that provider, and are never listed as Gemini's.
	Provider    string   `json:"provider,omitempty"`
	DisplayName string   `json:"displayName,omitempty"`
	Aliases     []string `json:"aliases,omitempty"`
	Status      Status   `json:"status"`
	Released    string   `json:"released,omitempty"` // YYYY-MM-DD
	// Shutdown is when the API stops serving the model (YYYY-MM-DD); Replacement is what the
	// deprecation notice recommends, RoutedTo what the API answers with instead for the keys it
	// still serves after the shutdown ("" if it answers 404 to every key).
	Shutdown         string  `json:"shutdown,omitempty"`
	Replacement      string  `json:"replacement,omitempty"`
	RoutedTo         string  `json:"routedTo,omitempty"`
	InputTokenLimit  int     `json:"inputTokenLimit"`
	OutputTokenLimit int     `json:"outputTokenLimit,omitempty"`
	Prices           []Price `json:"prices,omitempty"` // by date, oldest first; none: unknown
	// CacheMinTokens is the shortest prefix implicit caching bills as cached.
	CacheMinTokens  int  `json:"cacheMinTokens"`
	ExplicitCaching bool `json:"explicitCaching"`
	// OverExplicit: a request that reads an explicit cache also gets implicit hits on the rest
	// of its prompt. Documented nowhere; false (assumed not) unless reprise doctor cache saw it
	// (Findings).
	OverExplicit bool `json:"overExplicit,omitempty"`
	// Flex: the model is served on the Flex tier (Catalog.Flex), at its share of these prices.
	Flex     bool     `json:"flex,omitempty"`
	Thinking Thinking `json:"thinking"`
}

// Rates are US dollars per million tokens.
type Rates struct {
	Input       float64 `json:"input"`
	CachedInput float64 `json:"cachedInput"`
	Output      float64 `json:"output"` // thinking included
}

// Price is the rates in force from a date on (From empty: from the start), with the rates of a
// prompt longer than Long.Above tokens where the model has such a tier.
type Price struct {
	From string `json:"from,omitempty"`
	Rates
	Long *LongTier `json:"long,omitempty"`
	// CacheStorage is what an explicit cache of the model costs to keep, in US dollars per million
	// tokens per hour, whatever the prompt's size; 0: unknown (FallbackCacheStorage).
	CacheStorage float64 `json:"cacheStorage,omitempty"`
}

// LongTier prices a whole call whose prompt exceeds Above tokens.
type LongTier struct {
	Above int `json:"above"`
	Rates
}

// Thinking says how a model's thinking is set: by level (3.x and 4) or by a token budget (2.5).
type Thinking struct {
	// Levels are the thinkingLevel values the model accepts, weakest first.
	Levels []string `json:"levels,omitempty"`
	// Default is what the model does when nothing is sent (a level, or "dynamic"/"off" on 2.5).
	Default string `json:"default,omitempty"`
	// Budgets, on models set by budget, map each level a user may name to the thinkingBudget
	// sent for it.
	Budgets map[string]int `json:"budgets,omitempty"`
	// NoBudget: the model answers 400 to any thinkingBudget (Gemini 4).
	NoBudget bool `json:"noBudget,omitempty"`
}

// Builtin is the embedded catalogue, with the user's measured findings once UseFindings has set
// them.
func Builtin() *Catalog {
	if c := measured.Load(); c != nil {
		return c
	}
	return embeddedCatalog()
}

// embeddedCatalog is parsed once; a malformed file is a build defect, caught by the package's
// tests, so it panics.
var embeddedCatalog = sync.OnceValue(func() *Catalog {
	c, err := Parse(embedded)
	if err != nil {
		panic("catalog: the embedded models.json: " + err.Error())
	}
	return c
})

// measured is the embedded catalogue with the user's findings, when set.
var measured atomic.Pointer[Catalog]

// UseFindings makes Builtin the embedded catalogue with f applied (WithFindings), for the rest of
// the process: a command calls it once, before its sessions start.
func UseFindings(f Findings) {
	measured.Store(embeddedCatalog().WithFindings(f))
}

// Parse reads and checks a catalogue.
func Parse(data []byte) (*Catalog, error) {
	var c Catalog
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("parse the model catalogue: %w", err)
	}
	if err := c.check(); err != nil {
		return nil, err
	}
	return &c, nil
}

// check holds the table to what the code relies on.
func (c *Catalog) check() error {
	if _, err := parseDate(c.CurrentAsOf); err != nil {
		return fmt.Errorf("catalogue currentAsOf: %w", err)
	}
	ids := map[string]bool{}
	var errs []error
	for _, m := range c.Rows {
		for _, name := range append([]string{m.ID}, m.Aliases...) {
			if name == "" || ids[name] {
				errs = append(errs, fmt.Errorf("model %q: id or alias %q empty or listed twice", m.ID, name))
			}
			ids[name] = true
		}
	}
	for _, m := range c.Rows {
		if err := m.check(ids); err != nil {
			errs = append(errs, fmt.Errorf("model %s: %w", m.ID, err))
		}
	}
	if f := c.Flex; f.Share < 0 || f.Share > 1 {
		errs = append(errs, fmt.Errorf("flex share %g is not between 0 and 1", f.Share))
	} else if _, err := parseDate(f.Checked); f.Share > 0 && err != nil {
		errs = append(errs, fmt.Errorf("flex checked: %w", err))
	}
	if a := c.API; a.Version == "" || a.VertexVersion == "" {
		errs = append(errs, errors.New("api: version and vertexVersion are required"))
	} else if _, err := parseDate(a.Checked); err != nil {
		errs = append(errs, fmt.Errorf("api checked: %w", err))
	}
	if d, ok := c.Lookup(c.DefaultID); !ok || d.Status != GA {
		errs = append(errs, fmt.Errorf("the default model %q is not a GA model of the catalogue", c.DefaultID))
	}
	if sa := c.Subagent; sa.Model != "" {
		if m, ok := c.Lookup(sa.Model); !ok || m.Status != GA {
			errs = append(errs, fmt.Errorf("the subagent model %q is not a GA model of the catalogue", sa.Model))
		} else if _, err := c.Thinking(sa.Model, cmp.Or(sa.Thinking, Auto)); err != nil {
			errs = append(errs, fmt.Errorf("subagent thinking: %w", err))
		}
		if _, err := parseDate(sa.Checked); err != nil {
			errs = append(errs, fmt.Errorf("subagent checked: %w", err))
		}
	}
	return errors.Join(errs...)
}

func (m Model) check(ids map[string]bool) error {
	switch m.Status {
	case GA, Preview, Deprecated, Retired:
	default:
		return fmt.Errorf("status %q is none of ga, preview, deprecated, retired", m.Status)
	}
	for _, d := range []string{m.Released, m.Shutdown} {
		if d != "" {
			if _, err := parseDate(d); err != nil {
				return err
			}
		}
	}
	for _, r := range []string{m.Replacement, m.RoutedTo} {
		if r != "" && !ids[r] {
			return fmt.Errorf("replacement %q is not in the catalogue", r)
		}
	}
	if m.InputTokenLimit <= 0 || m.CacheMinTokens <= 0 {
		return errors.New("inputTokenLimit and cacheMinTokens must be positive")
	}
	prev := time.Time{}
	for i, p := range m.Prices {
		if (i == 0) != (p.From == "") {
			return errors.New("the first price, and only it, has no from date")
		}
		if p.From != "" {
			t, err := parseDate(p.From)
			if err != nil {
				return err
			}
			if !t.After(prev) {
				return errors.New("prices are not in date order")
			}
			prev = t
		}
		if p.Input < 0 || p.CachedInput < 0 || p.Output < 0 || p.CacheStorage < 0 || p.Long != nil && p.Long.Above <= 0 {
			return errors.New("a price is negative, or a long tier has no threshold")
		}
	}
	th := m.Thinking
	if len(th.Levels) > 0 && len(th.Budgets) > 0 {
		return errors.New("thinking is set by levels or by budgets, not both")
	}
	for _, l := range th.Levels {
		if !slices.Contains(knownLevels, l) {
			return fmt.Errorf("thinking level %q is not one of %s", l, strings.Join(knownLevels, ", "))
		}
	}
	for l := range th.Budgets {
		if !slices.Contains(knownLevels, l) {
			return fmt.Errorf("thinking budget level %q is not one of %s", l, strings.Join(knownLevels, ", "))
		}
	}
	if len(th.Levels) > 0 && !slices.Contains(th.Levels, th.Default) {
		return fmt.Errorf("default thinking level %q is not among its levels", th.Default)
	}
	return nil
}

// parseDate reads YYYY-MM-DD as midnight UTC.
func parseDate(s string) (time.Time, error) {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return t, fmt.Errorf("date %q is not YYYY-MM-DD", s)
	}
	return t, nil
}

// AsOf is the date the table is current as of.
func (c *Catalog) AsOf() time.Time {
	t, _ := parseDate(c.CurrentAsOf) // checked by Parse
	return t
}

// DefaultModel is the model used when none is chosen.
func (c *Catalog) DefaultModel() string { return c.DefaultID }

// SubagentModel is the model subagents run on when the user chooses none, and the thinking
// setting they run at; the default model and Auto when the catalogue names none.
func (c *Catalog) SubagentModel() (model, thinking string) {
	if c.Subagent.Model == "" {
		return c.DefaultID, Auto
	}
	return c.Subagent.Model, cmp.Or(c.Subagent.Thinking, Auto)
}

// Models returns the rows, in the file's order.
func (c *Catalog) Models() []Model { return c.ProviderModels("") }

// ProviderModels are the rows of one provider ("" for Gemini).
func (c *Catalog) ProviderModels(provider string) []Model {
	var out []Model
	for _, m := range c.Rows {
		if m.Provider == provider {
			out = append(out, m)
		}
	}
	return out
}

// Lookup finds the row of name: its id or an alias ("models/" prefix ignored), else the longest
// id that name extends by a "-" suffix (a dated or numbered version such as
// "gemini-3.8-flash-001" is gemini-3.8-flash). ok is false for a model the catalogue does not
// know.
func (c *Catalog) Lookup(name string) (Model, bool) {
	name = strings.TrimPrefix(name, "models/")
	if name == "" {
		return Model{}, false
	}
	best, found := -1, false
	for i, m := range c.Rows {
		if m.ID == name || slices.Contains(m.Aliases, name) {
			return m, true
		}
		if strings.HasPrefix(name, m.ID+"-") && (!found || len(m.ID) > len(c.Rows[best].ID)) {
			best, found = i, true
		}
	}
	if !found {
		return Model{}, false
	}
	return c.Rows[best], true
}

// Same tells whether two model names are the same model as far as the catalogue can tell: the
// same row, or, for names it does not know, one a "-" version of the other.
func (c *Catalog) Same(a, b string) bool {
	a, b = strings.TrimPrefix(a, "models/"), strings.TrimPrefix(b, "models/")
	if a == b {
		return true
	}
	ma, oka := c.Lookup(a)
	mb, okb := c.Lookup(b)
	if oka && okb {
		return ma.ID == mb.ID
	}
	return strings.HasPrefix(a, b+"-") || strings.HasPrefix(b, a+"-")
}

// OverExplicit tells whether a read of an explicit cache of model also gets implicit hits on the
// rest of its prompt (Model.OverExplicit); false for a model the catalogue does not know.
func (c *Catalog) OverExplicit(model string) bool {
	m, ok := c.Lookup(model)
	return ok && m.OverExplicit
}

// CacheMin is the implicit-cache minimum of model, FallbackCacheMinTokens when it is unknown.
func (c *Catalog) CacheMin(model string) int {
	if m, ok := c.Lookup(model); ok {
		return m.CacheMinTokens
	}
	return FallbackCacheMinTokens
}

// InputLimit is the context window of model, FallbackInputTokenLimit when it is unknown.
func (c *Catalog) InputLimit(model string) int {
	if m, ok := c.Lookup(model); ok {
		return m.InputTokenLimit
	}
	return FallbackInputTokenLimit
}

// RetiredAt tells whether the model is shut down at t: marked retired, or past its shutdown date.
func (m Model) RetiredAt(t time.Time) bool {
	if m.Shutdown != "" {
		if d, err := parseDate(m.Shutdown); err == nil && !t.Before(d) {
			return true
		}
		return false
	}
	return m.Status == Retired
}

// RatesAt are the rates of a call made at t whose prompt is prompt tokens: the price in force
// that day (UTC), its long tier when the prompt is above the tier's threshold. ok is false when
// the row has no prices.
func (m Model) RatesAt(t time.Time, prompt int) (Rates, bool) {
	p, ok := m.PriceAt(t)
	if !ok {
		return Rates{}, false
	}
	if p.Long != nil && prompt > p.Long.Above {
		return p.Long.Rates, true
	}
	return p.Rates, true
}

// CacheStorageAt is what keeping an explicit cache of the model costs on t's day (UTC), in US
// dollars per million tokens per hour: the row's price, FallbackCacheStorage when it has none.
func (m Model) CacheStorageAt(t time.Time) float64 {
	if p, ok := m.PriceAt(t); ok && p.CacheStorage > 0 {
		return p.CacheStorage
	}
	return FallbackCacheStorage
}

// Scale is r with every rate multiplied by f: the Flex tier's rates are the standard ones scaled by
// its share.
func (r Rates) Scale(f float64) Rates {
	return Rates{Input: r.Input * f, CachedInput: r.CachedInput * f, Output: r.Output * f}
}

// TierShare is what a call served on tier pays of the standard rates: 1, or the Flex share.
func (c *Catalog) TierShare(tier Tier) float64 {
	if tier == TierFlex && c.Flex.Share > 0 {
		return c.Flex.Share
	}
	return 1
}

// OffersFlex tells whether the catalogue says model is served on the Flex tier. A model it does
// not know is not: a request for Flex it cannot serve would fail, and the catalogue cannot say.
func (c *Catalog) OffersFlex(model string) bool {
	m, ok := c.Lookup(model)
	return ok && m.Flex && c.Flex.Share > 0
}

// PriceAt is the price in force on t's day (UTC); ok is false when the row has no prices.
func (m Model) PriceAt(t time.Time) (Price, bool) {
	if len(m.Prices) == 0 {
		return Price{}, false
	}
	p := m.Prices[0]
	for _, q := range m.Prices[1:] {
		if d, err := parseDate(q.From); err == nil && !t.Before(d) {
			p = q
		}
	}
	return p, true
}

// Overlay returns the catalogue with the rows of the models setting applied: an object of
// partial rows by model id. A field given replaces the row's (a list of prices replaces the
// list); an id the catalogue lacks adds a row, GA with the fallback cache minimum and input limit
// unless it says otherwise. Unknown fields are errors: a misspelt key must not be ignored.
func (c *Catalog) Overlay(rows map[string]json.RawMessage) (*Catalog, error) {
	if len(rows) == 0 {
		return c, nil
	}
	out := *c
	out.Rows = slices.Clone(c.Rows)
	for _, id := range slices.Sorted(maps.Keys(rows)) {
		i := slices.IndexFunc(out.Rows, func(m Model) bool { return m.ID == id })
		m := Model{ID: id, Status: GA, InputTokenLimit: FallbackInputTokenLimit, CacheMinTokens: FallbackCacheMinTokens}
		if i >= 0 {
			m = out.Rows[i]
			m.Aliases = slices.Clone(m.Aliases)
			m.Prices = slices.Clone(m.Prices)
			m.Thinking.Levels = slices.Clone(m.Thinking.Levels)
			m.Thinking.Budgets = maps.Clone(m.Thinking.Budgets)
		}
		dec := json.NewDecoder(bytes.NewReader(rows[id]))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&m); err != nil {
			return nil, fmt.Errorf("models setting, %s: %w", id, err)
		}
		m.ID = id
		if i >= 0 {
			out.Rows[i] = m
		} else {
			out.Rows = append(out.Rows, m)
		}
	}
	if err := out.check(); err != nil {
		return nil, fmt.Errorf("models setting: %w", err)
	}
	return &out, nil
}
