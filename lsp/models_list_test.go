package lsp

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/reprise-dev/reprise/contextwin/catalog"
	"github.com/reprise-dev/reprise/lsp/lsptest"
)

// TestModelsCommand: reprise.models joins the API's list (read through the real client from the
// fake) with the catalogue and the user's models setting: a model the catalogue lacks is listed
// with its price unknown unless the setting prices it, retired ones only with all, and the
// model new sessions use is marked. The list is cached: a second call does not read the API.
func TestModelsCommand(t *testing.T) {
	e := newEnv(t, envOpts{
		models: []string{"gemini-3.8-flash", "gemini-4-argon", "gemini-9-experimental", "gemini-10-nightly", "gemini-2.5-flash", "text-embedding-004"},
		editor: lsptest.Options{InitializationOptions: map[string]any{
			"model":  "gemini-4-argon",
			"models": map[string]any{"gemini-9-experimental": map[string]any{"prices": []any{map[string]any{"input": 1, "cachedInput": 0.1, "output": 5}}}},
		}},
	})
	var r ModelsResult
	if err := e.ed.Execute(e.ctx, CommandModels, nil, &r); err != nil {
		t.Fatal(err)
	}
	byID := map[string]ModelInfo{}
	var ids []string
	for _, m := range r.Models {
		byID[m.ID] = m
		ids = append(ids, m.ID)
	}
	if strings.Join(ids, " ") != "gemini-3.8-flash gemini-4-argon gemini-9-experimental gemini-10-nightly" {
		t.Errorf("models %v; want the listed ones that generate content and are not retired", ids)
	}
	flash := byID["gemini-3.8-flash"]
	if !flash.Default || flash.Current || flash.Prices == nil || flash.Prices.Input != 0.75 || flash.Prices.CachedInput != 0.075 || flash.Prices.Output != 3.75 ||
		flash.CacheMinTokens != 4096 || !flash.ExplicitCaching || strings.Join(flash.ThinkingLevels, " ") != "low medium high" || flash.ThinkingDefault != "medium" {
		t.Errorf("gemini-3.8-flash = %+v", flash)
	}
	if want := "ga · 1M context · $0.75 · $0.075 · $3.75 per 1M in · cached · out · thinking low [medium] high"; flash.Detail != want {
		t.Errorf("detail %q, want %q", flash.Detail, want)
	}
	if argon := byID["gemini-4-argon"]; !argon.Current || argon.ExplicitCaching {
		t.Errorf("gemini-4-argon = %+v; want it current (the model setting), without explicit caching", argon)
	}
	if x := byID["gemini-9-experimental"]; x.Prices == nil || x.Prices.Input != 1 || x.Detail != "ga · 1M context · $1.00 · $0.10 · $5.00 per 1M in · cached · out" {
		t.Errorf("gemini-9-experimental = %+v; want it priced by the models setting", x)
	}
	if x := byID["gemini-10-nightly"]; x.Known || x.Prices != nil || x.PriceText != "unknown" || x.StatusText != "not in the catalogue" {
		t.Errorf("gemini-10-nightly = %+v; want unknown to the catalogue, its price unknown (never $0)", x)
	}
	if r.Model != "gemini-4-argon" || r.Default != "gemini-3.8-flash" || r.CatalogueAsOf == "" || r.ListedAt == "" || r.Cached || r.Warning != "" {
		t.Errorf("result %+v", r)
	}

	var all ModelsResult
	if err := e.ed.Execute(e.ctx, CommandModels, ModelsArgs{All: true}, &all); err != nil {
		t.Fatal(err)
	}
	if !all.Cached {
		t.Error("the second call read the API again")
	}
	found := false
	for _, m := range all.Models {
		if m.ID == "gemini-2.5-flash" {
			found = true
			if m.Status != "retired" || m.Replacement == "" || !strings.HasPrefix(m.StatusText, "retired → ") {
				t.Errorf("gemini-2.5-flash = %+v", m)
			}
		}
	}
	if !found {
		t.Error("all does not list the retired gemini-2.5-flash")
	}

	code, msg := rpcError(t, e.ed.Execute(e.ctx, CommandModels, map[string]any{"all": "yes"}, nil))
	if code != int(jsonrpc2.InvalidParams) || !strings.Contains(msg, "all") {
		t.Errorf("bad argument: %d %q", code, msg)
	}
}

// TestModelsCommandOffline: when the API cannot be read (no key, a network error), the picker
// still gets the catalogue's models, retired ones marked, with a warning that says why.
func TestModelsCommandOffline(t *testing.T) {
	e := newEnv(t, envOpts{listModels: func(context.Context, bool) ([]catalog.Listed, time.Time, bool, error) {
		return nil, time.Time{}, false, errors.New("no Gemini API key: set GEMINI_API_KEY")
	}})
	var r ModelsResult
	if err := e.ed.Execute(e.ctx, CommandModels, nil, &r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Warning, "GEMINI_API_KEY") || len(r.Models) != len(catalog.Builtin().Models()) || r.ListedAt != "" {
		t.Errorf("offline: warning %q, %d models (catalogue %d)", r.Warning, len(r.Models), len(catalog.Builtin().Models()))
	}
	for _, m := range r.Models {
		if m.Listed {
			t.Errorf("%s marked listed without a list", m.ID)
		}
		if m.ID == r.Default && !m.Current {
			t.Errorf("the default %s is not marked current", m.ID)
		}
	}
}
