package catalog

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func date(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

// TestBuiltin holds the embedded table to the facts it was checked against (docs/decisions.md,
// "The model catalogue").
func TestBuiltin(t *testing.T) {
	c := Builtin()
	if c.CurrentAsOf != "2026-12-01" {
		t.Errorf("currentAsOf = %s", c.CurrentAsOf)
	}
	if got := c.DefaultModel(); got != "gemini-3.8-flash" {
		t.Errorf("default = %s, want gemini-3.8-flash", got)
	}
	flash, ok := c.Lookup("gemini-3.8-flash")
	if !ok || flash.Status != GA || flash.RetiredAt(c.AsOf()) {
		t.Fatalf("gemini-3.8-flash: %+v", flash)
	}
	for _, m := range c.Models() {
		want := 4096
		if strings.HasPrefix(m.ID, "gemini-2.5") {
			want = 2048
		}
		if m.CacheMinTokens != want {
			t.Errorf("%s: cache minimum %d, want %d", m.ID, m.CacheMinTokens, want)
		}
		if strings.HasPrefix(m.ID, "gemini-4") && (m.ExplicitCaching || !m.Thinking.NoBudget) {
			t.Errorf("%s: Gemini 4 offers no explicit caching and rejects budgets: %+v", m.ID, m)
		}
		if m.RetiredAt(c.AsOf()) && m.Replacement == "" {
			t.Errorf("%s is retired without a replacement", m.ID)
		}
	}
	for _, id := range []string{"gemini-2.5-flash", "gemini-2.5-pro", "gemini-3.5-flash", "gemini-3.7-flash", "gemini-3-pro-preview"} {
		m, ok := c.Lookup(id)
		if !ok || !m.RetiredAt(c.AsOf()) {
			t.Errorf("%s should be retired on %s: %+v", id, c.CurrentAsOf, m)
		}
	}
	for _, id := range []string{"gemini-3-flash", "gemini-3-pro"} {
		if m, ok := c.Lookup(id); ok {
			t.Errorf("%s was never an API id, but the catalogue has %s", id, m.ID)
		}
	}
	if m, _ := c.Lookup("gemini-2.5-pro"); m.RoutedTo != "gemini-3.8-flash" {
		t.Errorf("gemini-2.5-pro routed to %q", m.RoutedTo)
	}
	if m, _ := c.Lookup("gemini-2.5-flash"); m.RoutedTo != "gemini-3.5-flash-lite" {
		t.Errorf("gemini-2.5-flash routed to %q", m.RoutedTo)
	}
}

func TestRatesAt(t *testing.T) {
	c := Builtin()
	tests := []struct {
		model  string
		at     string
		prompt int
		want   Rates
	}{
		{"gemini-3.8-flash", "2026-12-01", 1000, Rates{0.75, 0.075, 3.75}},
		{"gemini-3.8-flash", "2026-12-31", 1000, Rates{0.75, 0.075, 3.75}},
		{"gemini-3.8-flash", "2027-01-01", 1000, Rates{1.50, 0.15, 7.50}},
		{"gemini-3.8-flash-001", "2027-06-01", 1000, Rates{1.50, 0.15, 7.50}},
		{"gemini-4-argon", "2026-11-30", 1000, Rates{2.00, 0.10, 10.00}},
		{"gemini-4-argon", "2026-12-01", 1000, Rates{4.00, 0.20, 20.00}},
		{"gemini-3.1-pro-preview", "2026-12-01", 200_000, Rates{2.00, 0.20, 12.00}},
		{"gemini-3.1-pro-preview", "2026-12-01", 200_001, Rates{4.00, 0.40, 18.00}},
		{"gemini-3.5-flash-lite", "2026-12-01", 1000, Rates{0.30, 0.03, 2.50}},
		{"gemini-3.1-flash-lite", "2026-12-01", 1000, Rates{0.25, 0.025, 1.50}},
		{"gemini-4-hydrogen", "2026-12-01", 1000, Rates{1.50, 0.075, 7.50}},
		{"gemini-2.5-flash-lite", "2026-12-01", 1000, Rates{0.10, 0.01, 0.40}},
	}
	for _, tt := range tests {
		m, ok := c.Lookup(tt.model)
		if !ok {
			t.Errorf("%s: not found", tt.model)
			continue
		}
		got, ok := m.RatesAt(date(tt.at), tt.prompt)
		if !ok || got != tt.want {
			t.Errorf("%s on %s, %d tokens: %+v, %v; want %+v", tt.model, tt.at, tt.prompt, got, ok, tt.want)
		}
	}
}

// TestCacheStorageAt: the explicit-cache storage price is the pricing page's, by date; a row
// without one (a Flash-Lite of 3.x, an unknown model) gets the fallback, not $0.
func TestCacheStorageAt(t *testing.T) {
	c := Builtin()
	tests := []struct {
		model string
		at    string
		want  float64
	}{
		{"gemini-3.8-flash", "2026-12-31", 0.50},
		{"gemini-3.8-flash", "2027-01-01", 1.00},
		{"gemini-3.6-flash", "2026-12-01", 0.50},
		{"gemini-3.1-pro-preview", "2026-12-01", 4.50},
		{"gemini-2.5-pro", "2026-11-30", 4.50},
		{"gemini-2.5-flash-lite", "2026-12-01", 1.00},
		{"gemini-3.5-flash-lite", "2026-12-01", FallbackCacheStorage},
		{"acme-model", "2026-12-01", FallbackCacheStorage},
	}
	for _, tt := range tests {
		m, _ := c.Lookup(tt.model)
		if got := m.CacheStorageAt(date(tt.at)); got != tt.want {
			t.Errorf("%s on %s: $%.2f per million tokens per hour, want $%.2f", tt.model, tt.at, got, tt.want)
		}
	}
}

func TestLookup(t *testing.T) {
	c := Builtin()
	for name, want := range map[string]string{
		"gemini-3.8-flash":             "gemini-3.8-flash",
		"models/gemini-3.8-flash":      "gemini-3.8-flash",
		"gemini-3.8-flash-preview-09":  "gemini-3.8-flash",
		"gemini-2.5-flash-lite":        "gemini-2.5-flash-lite",
		"gemini-2.5-flash-lite-001":    "gemini-2.5-flash-lite",
		"gemini-3.5-flash-lite":        "gemini-3.5-flash-lite",
		"gemini-3.1-pro-preview-05-26": "gemini-3.1-pro-preview",
		"gemini-9-unknown":             "",
		"gemini-3.8":                   "",
		"":                             "",
	} {
		m, ok := c.Lookup(name)
		if ok != (want != "") || m.ID != want {
			t.Errorf("Lookup(%q) = %q, %v; want %q", name, m.ID, ok, want)
		}
	}
	if !c.Same("gemini-3.8-flash", "models/gemini-3.8-flash-001") || c.Same("gemini-2.5-pro", "gemini-3.8-flash") {
		t.Error("Same misjudges versions or different models")
	}
	if !c.Same("acme-model", "acme-model-002") || c.Same("acme-model", "other-model") {
		t.Error("Same misjudges models the catalogue does not know")
	}
	if got := c.CacheMin("gemini-9-unknown"); got != FallbackCacheMinTokens {
		t.Errorf("unknown model's cache minimum = %d", got)
	}
	if got := c.CacheMin("gemini-2.5-flash-lite"); got != 2048 {
		t.Errorf("gemini-2.5-flash-lite's cache minimum = %d", got)
	}
}

func TestThinking(t *testing.T) {
	c := Builtin()
	budget := func(n int) *int { return &n }
	tests := []struct {
		model, setting string
		want           ThinkingChoice
		err            string
	}{
		{"gemini-3.8-flash", "", ThinkingChoice{}, ""},
		{"gemini-3.8-flash", "auto", ThinkingChoice{}, ""},
		{"gemini-3.8-flash", "low", ThinkingChoice{Level: "LOW"}, ""},
		{"gemini-3.8-flash", "HIGH", ThinkingChoice{Level: "HIGH"}, ""},
		{"gemini-3.8-flash", "minimal", ThinkingChoice{}, "gemini-3.8-flash does not accept thinking level minimal: it accepts low, medium, high (or auto, its default)"},
		{"gemini-4-hydrogen", "xhigh", ThinkingChoice{Level: "XHIGH"}, ""},
		{"gemini-4-argon", "xhigh", ThinkingChoice{}, "it accepts low, medium, high"},
		{"gemini-2.5-flash-lite", "medium", ThinkingChoice{Budget: budget(8192)}, ""},
		{"gemini-2.5-pro", "high", ThinkingChoice{Budget: budget(32768)}, ""},
		{"gemini-2.5-flash-lite", "minimal", ThinkingChoice{}, "it accepts low, medium, high"},
		{"acme-model", "medium", ThinkingChoice{Level: "MEDIUM"}, ""},
		{"gemini-3.8-flash", "max", ThinkingChoice{}, `thinking "max" is not auto nor a level`},
	}
	for _, tt := range tests {
		got, err := c.Thinking(tt.model, tt.setting)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s %q: err = %v, want %q", tt.model, tt.setting, err, tt.err)
			}
			continue
		}
		if err != nil || !cmp.Equal(got, tt.want) {
			t.Errorf("%s %q = %+v, %v; want %+v", tt.model, tt.setting, got, err, tt.want)
		}
		if got.Level != "" && got.Budget != nil {
			t.Errorf("%s %q sends a level and a budget", tt.model, tt.setting)
		}
	}
}

func TestOverlay(t *testing.T) {
	c := Builtin()
	rows := map[string]json.RawMessage{
		"gemini-3.8-flash": json.RawMessage(`{"cacheMinTokens": 6144, "prices": [{"input": 1, "cachedInput": 0.1, "output": 5}]}`),
		"acme-model":       json.RawMessage(`{"inputTokenLimit": 200000, "prices": [{"input": 0.5, "cachedInput": 0.05, "output": 2}]}`),
	}
	o, err := c.Overlay(rows)
	if err != nil {
		t.Fatal(err)
	}
	flash, _ := o.Lookup("gemini-3.8-flash")
	if r, _ := flash.RatesAt(date("2027-06-01"), 10); flash.CacheMinTokens != 6144 || r != (Rates{1, 0.1, 5}) || flash.Thinking.Default != "MEDIUM" {
		t.Errorf("overlaid row: %+v", flash)
	}
	acme, ok := o.Lookup("acme-model")
	if !ok || acme.Status != GA || acme.InputTokenLimit != 200000 || acme.CacheMinTokens != FallbackCacheMinTokens {
		t.Errorf("added row: %+v, %v", acme, ok)
	}
	if orig, _ := c.Lookup("gemini-3.8-flash"); orig.CacheMinTokens != 4096 || len(orig.Prices) != 2 {
		t.Errorf("the builtin table changed: %+v", orig)
	}
	for _, bad := range []string{`{"cacheMinToken": 1}`, `{"status": "gone"}`, `{"replacement": "nowhere"}`, `{"prices": [{"from": "2027-01-01", "input": 1}]}`} {
		if _, err := c.Overlay(map[string]json.RawMessage{"gemini-3.8-flash": json.RawMessage(bad)}); err == nil {
			t.Errorf("overlay %s accepted", bad)
		}
	}
}

func TestParseRejects(t *testing.T) {
	for name, doc := range map[string]string{
		"default retired": `{"currentAsOf": "2026-12-01", "default": "a", "models": [{"id": "a", "status": "retired", "inputTokenLimit": 1, "cacheMinTokens": 1, "replacement": "a"}]}`,
		"unknown field":   `{"currentAsOf": "2026-12-01", "default": "a", "extra": 1, "models": []}`,
		"bad date":        `{"currentAsOf": "1 Dec 2026", "default": "a", "models": [{"id": "a", "status": "ga", "inputTokenLimit": 1, "cacheMinTokens": 1}]}`,
		"duplicate id":    `{"currentAsOf": "2026-12-01", "default": "a", "models": [{"id": "a", "status": "ga", "inputTokenLimit": 1, "cacheMinTokens": 1}, {"id": "a", "status": "ga", "inputTokenLimit": 1, "cacheMinTokens": 1}]}`,
		"level default":   `{"currentAsOf": "2026-12-01", "default": "a", "models": [{"id": "a", "status": "ga", "inputTokenLimit": 1, "cacheMinTokens": 1, "thinking": {"levels": ["LOW"], "default": "HIGH"}}]}`,
	} {
		if _, err := Parse([]byte(doc)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestJoin(t *testing.T) {
	c := Builtin()
	day := date("2026-12-01")
	listed := []Listed{
		{ID: "gemini-9-experimental", DisplayName: "Gemini 9 Experimental", InputTokenLimit: 2_000_000},
		{ID: "gemini-3.8-flash", InputTokenLimit: 1_000_000},
		{ID: "gemini-2.5-flash"}, // retired, still listed for an older key
	}
	ids := func(es []Entry) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.ID)
		}
		return out
	}
	got := c.Join(listed, day, false)
	if diff := cmp.Diff(ids(got), []string{"gemini-3.8-flash", "gemini-9-experimental"}); diff != "" {
		t.Errorf("listed, retired hidden (-got +want):\n%s", diff)
	}
	flash, unknown := got[0], got[1]
	if !flash.Known || !flash.Listed || flash.InputTokenLimit != 1_000_000 || !flash.Priced || flash.Rates != (Rates{0.75, 0.075, 3.75}) ||
		flash.CacheMinTokens != 4096 || !flash.ExplicitCaching || flash.Thinking.Default != "MEDIUM" {
		t.Errorf("gemini-3.8-flash: %+v", flash)
	}
	if unknown.Known || unknown.Priced || unknown.DisplayName != "Gemini 9 Experimental" || unknown.InputTokenLimit != 2_000_000 || unknown.CacheMinTokens != FallbackCacheMinTokens {
		t.Errorf("a model the catalogue lacks: %+v", unknown)
	}
	all := c.Join(listed, day, true)
	if len(all) != len(c.Models())+1 {
		t.Errorf("--all: %d entries, want every catalogue row and the unknown one", len(all))
	}
	for _, e := range all {
		if e.ID == "gemini-2.5-flash" && (!e.Retired || !e.Listed || e.Replacement != "gemini-3.5-flash-lite") {
			t.Errorf("retired entry: %+v", e)
		}
		if e.ID == "gemini-4-argon" && e.Listed {
			t.Errorf("gemini-4-argon is not listed by the API: %+v", e)
		}
		if e.ID == "gemini-3.1-pro-preview" && (e.Long == nil || e.Long.Above != 200_000) {
			t.Errorf("gemini-3.1-pro-preview has no long tier: %+v", e)
		}
	}
}

// TestFlex holds the Flex facts to what they were checked against (docs/decisions.md, "Cheaper
// summaries"): half price, on the models the sources name, and nowhere the catalogue cannot say.
func TestFlex(t *testing.T) {
	c := Builtin()
	if c.Flex.Share != 0.5 || c.Flex.Stage != Preview || c.Flex.Checked == "" {
		t.Errorf("flex = %+v, want half price, preview, dated", c.Flex)
	}
	for model, want := range map[string]bool{
		"gemini-3.8-flash": true, "gemini-3.8-flash-001": true, "gemini-3.1-flash-lite": true, "gemini-3.1-pro-preview": true,
		"gemini-4-argon": false, "gemini-3.5-flash-lite": false, "gemini-9-unknown": false,
	} {
		if got := c.OffersFlex(model); got != want {
			t.Errorf("OffersFlex(%s) = %v, want %v", model, got, want)
		}
	}
	if got := c.TierShare(TierFlex); got != 0.5 {
		t.Errorf("flex share %g", got)
	}
	if got := c.TierShare(TierStandard); got != 1 {
		t.Errorf("standard share %g", got)
	}
	if got := (Rates{0.75, 0.075, 3.75}).Scale(0.5); got != (Rates{0.375, 0.0375, 1.875}) {
		t.Errorf("scaled %+v", got)
	}
	over, err := c.Overlay(map[string]json.RawMessage{"gemini-4-argon": json.RawMessage(`{"flex": true}`)})
	if err != nil || !over.OffersFlex("gemini-4-argon") {
		t.Errorf("a models setting row marks a model flex: %v", err)
	}
	bad := *c
	bad.Flex.Share = 1.5
	if err := bad.check(); err == nil || !strings.Contains(err.Error(), "flex share") {
		t.Errorf("share 1.5: %v", err)
	}
}

func TestTiers(t *testing.T) {
	for in, want := range map[string]Tier{"": TierStandard, "standard": TierStandard, "Flex": TierFlex, " flex ": TierFlex} {
		if got, err := ParseTier(in); err != nil || got != want {
			t.Errorf("ParseTier(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseTier("batch"); err == nil || !strings.Contains(err.Error(), `"batch"`) {
		t.Errorf("batch: %v", err)
	}
	tests := []struct {
		reported string
		asked    Tier
		want     Tier
	}{
		{"flex", TierStandard, TierFlex},
		{"FLEX", TierStandard, TierFlex},
		{"SERVICE_TIER_FLEX", TierStandard, TierFlex},
		{"standard", TierFlex, TierStandard}, // asked for Flex, served standard: billed standard
		{"", TierFlex, TierFlex},             // the response names none: the tier asked
		{"", TierStandard, TierStandard},
		{"unspecified", "", TierStandard},
		{"priority", TierStandard, "priority"},
	}
	for _, tt := range tests {
		if got := ServedTier(tt.reported, tt.asked); got != tt.want {
			t.Errorf("ServedTier(%q, %q) = %q, want %q", tt.reported, tt.asked, got, tt.want)
		}
	}
}

func TestParseModelName(t *testing.T) {
	for in, want := range map[string]string{"": "", "gemini-3.1-flash-lite": "gemini-3.1-flash-lite", " models/acme-7b ": "acme-7b"} {
		if got, err := ParseModelName(in); err != nil || got != want {
			t.Errorf("ParseModelName(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"gemini 3", "../x", "a:generateContent", "x?key=1", "a#b", strings.Repeat("a", 129)} {
		if _, err := ParseModelName(bad); err == nil {
			t.Errorf("ParseModelName(%q) accepted", bad)
		}
	}
}

// TestOtherProviders: the OpenAI rows price and cache a session on that provider (found by id,
// with their 1,024-token minimum) but are never listed as Gemini's models.
func TestOtherProviders(t *testing.T) {
	c := Builtin()
	rules, ok := c.Providers["openai"]
	if !ok || rules.CacheMinTokens != 1024 || rules.Checked == "" || rules.Source == "" {
		t.Fatalf("openai rules: %+v", rules)
	}
	m, ok := c.Lookup("gpt-5.4-mini")
	if !ok || m.Provider != "openai" || m.CacheMinTokens != 1024 || m.ExplicitCaching {
		t.Fatalf("gpt-5.4-mini: %+v", m)
	}
	if r, ok := m.RatesAt(c.AsOf(), 1000); !ok || r.CachedInput*10 != r.Input {
		t.Errorf("gpt-5.4-mini rates %+v: cached input at a tenth", r)
	}
	for _, g := range c.Models() {
		if g.Provider != "" {
			t.Errorf("%s (%s) listed among Gemini's models", g.ID, g.Provider)
		}
	}
	for _, e := range c.Join(nil, c.AsOf(), true) {
		if strings.HasPrefix(e.ID, "gpt-") {
			t.Errorf("reprise models --all lists %s", e.ID)
		}
	}
	if got := len(c.ProviderModels("openai")); got != 4 {
		t.Errorf("%d openai rows", got)
	}
}
