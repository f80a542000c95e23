package lsp

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// ModelsArgs are reprise.models' arguments.
type ModelsArgs struct {
	// All also lists retired models and the catalogue's models the API does not list.
	All bool `json:"all,omitempty"`
	// Refresh reads the API's list again instead of its copy cached for a day.
	Refresh bool `json:"refresh,omitempty"`
}

// ModelInfo is one model as the editors' pickers show it: the API's list joined with the model
// catalogue (the user's models setting applied), in the words `reprise models` prints.
type ModelInfo struct {
	ID               string         `json:"id"`
	DisplayName      string         `json:"displayName"`
	Status           string         `json:"status"` // ga, preview, deprecated, retired; "" when not in the catalogue
	StatusText       string         `json:"statusText"`
	Replacement      string         `json:"replacement,omitempty"`
	Known            bool           `json:"known"`  // the catalogue has a row for it
	Listed           bool           `json:"listed"` // the API lists it for this key
	InputTokenLimit  int            `json:"inputTokenLimit"`
	OutputTokenLimit int            `json:"outputTokenLimit,omitempty"`
	Prices           *catalog.Rates `json:"prices"` // per 1M tokens, today; null: unknown
	PriceText        string         `json:"priceText"`
	CacheMinTokens   int            `json:"cacheMinTokens"`
	ExplicitCaching  bool           `json:"explicitCaching"`
	ThinkingLevels   []string       `json:"thinkingLevels"` // what the thinking setting accepts, lower case
	ThinkingDefault  string         `json:"thinkingDefault,omitempty"`
	Detail           string         `json:"detail"` // one line for a picker
	Default          bool           `json:"default,omitempty"`
	Current          bool           `json:"current,omitempty"` // the model new sessions use
	// Local: a local server serves it unpriced: free, its time counted (prices then absent).
	Local bool `json:"local,omitempty"`
}

// ModelsResult is what reprise.models answers.
type ModelsResult struct {
	Models []ModelInfo `json:"models"`
	// Model is the one new sessions use (the model setting); Default the catalogue's.
	Model   string `json:"model"`
	Default string `json:"default"`
	// CatalogueAsOf dates the catalogue's prices and statuses.
	CatalogueAsOf string `json:"catalogueAsOf"`
	// ListedAt is when the API's list was read (empty when it could not be), Cached whether it
	// came from the copy kept for a day.
	ListedAt string `json:"listedAt,omitempty"`
	Cached   bool   `json:"cached,omitempty"`
	// Warning says why the list is the catalogue's alone (no key, the API failed).
	Warning string `json:"warning,omitempty"`
}

// models answers reprise.models: the API's list (cached on disk for a day) joined with the
// catalogue. When the API cannot be read, the catalogue's models are listed with a warning, so a
// picker still works offline or before the key is set.
func (s *server) models(ctx context.Context, a ModelsArgs) (ModelsResult, error) {
	c := s.cfg.get()
	cat := c.catalogue()
	now := time.Now()
	out := ModelsResult{Models: []ModelInfo{}, Model: c.model, Default: cat.DefaultModel(), CatalogueAsOf: cat.CurrentAsOf}
	var listed []catalog.Listed
	all := a.All
	if c.provider.Name != "" {
		return s.providerModels(ctx, c, out)
	}
	if s.opts.ListModels == nil {
		out.Warning = "this server cannot list the API's models; the catalogue's are shown"
		all = true
	} else {
		l, fetched, cached, err := s.opts.ListModels(ctx, a.Refresh)
		switch {
		case ctx.Err() != nil:
			return out, ctx.Err()
		case err != nil:
			out.Warning = fmt.Sprintf("%v; the catalogue's models are shown", err)
			all = true
		default:
			listed, out.ListedAt, out.Cached = l, fetched.UTC().Format(time.RFC3339), cached
		}
	}
	for _, e := range cat.Join(listed, now, all) {
		out.Models = append(out.Models, modelInfo(e, cat, c.model))
	}
	return out, nil
}

// providerModels answers reprise.models when the provider setting names another provider: what
// its server lists, joined with the catalogue's rows of that provider (prices, cache minimum).
func (s *server) providerModels(ctx context.Context, c config, out ModelsResult) (ModelsResult, error) {
	cat := c.catalogue()
	out.Default = ""
	if s.opts.ListProviderModels == nil {
		out.Warning = "this server cannot list the provider's models"
		return out, nil
	}
	listed, err := s.opts.ListProviderModels(ctx, c.provider)
	switch {
	case ctx.Err() != nil:
		return out, ctx.Err()
	case err != nil:
		out.Warning = err.Error()
		return out, nil
	}
	out.ListedAt = time.Now().UTC().Format(time.RFC3339)
	for _, e := range cat.Join(listed, time.Now(), false) {
		out.Models = append(out.Models, modelInfo(e, cat, c.model))
	}
	return out, nil
}

func modelInfo(e catalog.Entry, cat *catalog.Catalog, current string) ModelInfo {
	m := ModelInfo{
		ID: e.ID, DisplayName: e.DisplayName, Status: string(e.Status), StatusText: e.StatusText(),
		Replacement: e.Replacement, Known: e.Known, Listed: e.Listed,
		InputTokenLimit: e.InputTokenLimit, OutputTokenLimit: e.OutputTokenLimit,
		PriceText: e.PriceText(), CacheMinTokens: e.CacheMinTokens, ExplicitCaching: e.ExplicitCaching,
		ThinkingLevels: []string{}, ThinkingDefault: strings.ToLower(e.Thinking.Default),
		Default: e.ID == cat.DefaultModel(), Current: cat.Same(e.ID, current), Local: e.Local,
	}
	if e.Retired {
		m.Status = string(catalog.Retired)
	}
	if e.Priced {
		r := e.Rates
		m.Prices = &r
	}
	for _, l := range e.Thinking.Accepted() {
		m.ThinkingLevels = append(m.ThinkingLevels, strings.ToLower(l))
	}
	price := e.PriceText() + " per 1M in · cached · out"
	if e.Local {
		price = "local: free, its time counted"
	}
	parts := []string{m.StatusText, catalog.Kilo(e.InputTokenLimit) + " context", price}
	if len(m.ThinkingLevels) > 0 {
		parts = append(parts, "thinking "+e.Thinking.Describe())
	}
	m.Detail = strings.Join(parts, " · ")
	return m
}
