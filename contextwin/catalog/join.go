package catalog

import (
	"cmp"
	"slices"
	"time"
)

// Listed is a model the API lists for a key (models.list): its id and the limits it reports.
type Listed struct {
	ID               string `json:"id"`
	DisplayName      string `json:"displayName,omitempty"`
	InputTokenLimit  int    `json:"inputTokenLimit,omitempty"`
	OutputTokenLimit int    `json:"outputTokenLimit,omitempty"`
	// Local: a server on the user's machine or network serves it; unless the catalogue prices
	// it, it bills nothing (contextwin.Pricing.Local).
	Local bool `json:"local,omitempty"`
}

// Entry is a model as `reprise models` shows it: what the API lists, joined with the catalogue.
type Entry struct {
	ID, DisplayName string
	Known           bool // the catalogue has a row for it
	Listed          bool // the API lists it for this key
	Status          Status
	Retired         bool // retired on the day asked
	Replacement     string
	// The API's limits when it lists the model, else the catalogue's.
	InputTokenLimit, OutputTokenLimit int
	Rates                             Rates // in force on the day asked; Priced false: unknown
	Priced                            bool
	// Local: a local server serves it and the catalogue has no price: free, its cost is time.
	Local           bool
	Long            *LongTier
	CacheMinTokens  int // the catalogue's; FallbackCacheMinTokens if unknown
	ExplicitCaching bool
	// CacheStorage is what an explicit cache costs to keep on the day asked, per million tokens
	// per hour (FallbackCacheStorage when the row has no price); 0 without explicit caching.
	CacheStorage float64
	Thinking     Thinking
}

// Join is the catalogue joined with the API's list, as on day at: every model the API lists, a
// model the catalogue does not know included; with all, also the catalogue's models the API does
// not list. Retired models are left out unless all is set. Known models come in the catalogue's
// order, then the others by id.
func (c *Catalog) Join(listed []Listed, at time.Time, all bool) []Entry {
	byID := map[string]*Entry{}
	var out []*Entry
	add := func(e Entry) {
		if prev, ok := byID[e.ID]; ok {
			prev.Listed = prev.Listed || e.Listed
			return
		}
		p := &e
		byID[e.ID] = p
		out = append(out, p)
	}
	for _, l := range listed {
		e := c.entry(l.ID, at)
		e.Listed = true
		e.DisplayName = cmp.Or(l.DisplayName, e.DisplayName)
		if l.InputTokenLimit > 0 {
			e.InputTokenLimit = l.InputTokenLimit
		}
		if l.OutputTokenLimit > 0 {
			e.OutputTokenLimit = l.OutputTokenLimit
		}
		e.Local = l.Local && !e.Priced
		add(e)
	}
	if all {
		for _, m := range c.Models() {
			add(c.entry(m.ID, at))
		}
	}
	order := func(e *Entry) int {
		if i := slices.IndexFunc(c.Rows, func(m Model) bool { return m.ID == e.ID }); i >= 0 {
			return i
		}
		return len(c.Rows)
	}
	slices.SortStableFunc(out, func(a, b *Entry) int {
		return cmp.Or(cmp.Compare(order(a), order(b)), cmp.Compare(a.ID, b.ID))
	})
	var entries []Entry
	for _, e := range out {
		if e.Retired && !all {
			continue
		}
		entries = append(entries, *e)
	}
	return entries
}

// entry is id as the catalogue knows it on day at (a version of a known model has its row's
// facts).
func (c *Catalog) entry(id string, at time.Time) Entry {
	m, ok := c.Lookup(id)
	if !ok {
		return Entry{ID: id, DisplayName: id, InputTokenLimit: FallbackInputTokenLimit, CacheMinTokens: FallbackCacheMinTokens}
	}
	e := Entry{
		ID: id, DisplayName: cmp.Or(m.DisplayName, id), Known: true, Status: m.Status, Retired: m.RetiredAt(at),
		Replacement: m.Replacement, InputTokenLimit: m.InputTokenLimit, OutputTokenLimit: m.OutputTokenLimit,
		CacheMinTokens: m.CacheMinTokens, ExplicitCaching: m.ExplicitCaching, Thinking: m.Thinking,
	}
	if p, ok := m.PriceAt(at); ok {
		e.Rates, e.Priced, e.Long = p.Rates, true, p.Long
	}
	if m.ExplicitCaching {
		e.CacheStorage = m.CacheStorageAt(at)
	}
	return e
}
