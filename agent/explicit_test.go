package agent

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/contextwin"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// readingOpts are a session that reads eight files of 4,000 characters then answers, over the
// fake with cache, explicit caching set as explicit says: its options and its script.
func readingOpts(cache geminitest.Cache, explicit bool, model string) (fixtureOpts, []geminitest.Turn) {
	files := map[string]string{}
	var turns []geminitest.Turn
	for i := range 8 {
		name := fmt.Sprintf("f%d.txt", i)
		files[name] = strings.Repeat(fmt.Sprintf("file %d holds a line of text\n", i), 140)
		turns = append(turns, callTurn("read_file", map[string]any{"path": name}, ""))
	}
	turns = append(turns, textTurn("read"))
	p := contextwin.DefaultPolicy()
	p.ContextBudget = 200_000
	p.ExplicitCache = explicit
	return fixtureOpts{files: files, cacheMin: 512, policy: p, model: model, script: geminitest.Script{Cache: cache}}, turns
}

// longReading runs the session of readingOpts.
func longReading(t *testing.T, cache geminitest.Cache, explicit bool, model string) (*fixture, []Event) {
	t.Helper()
	o, turns := readingOpts(cache, explicit, model)
	f := newFixture(t, o, turns...)
	evs, err := f.run(t.Context(), "read the eight files")
	if err != nil {
		t.Fatal(err)
	}
	if end := lastEnd(t, evs); end.StopReason != StopEndTurn {
		t.Fatalf("stopped with %s", end.StopReason)
	}
	return f, evs
}

func warningsOf(evs []Event) []string {
	var out []string
	for _, ev := range ofType(evs, EventWarning) {
		out = append(out, ev.Text)
	}
	return out
}

func TestExplicitCacheWhenImplicitMisses(t *testing.T) {
	noLuck := geminitest.Cache{MissRate: 1}
	_, implicit := longReading(t, noLuck, false, "")
	f, explicit := longReading(t, noLuck, true, "")
	without, with := lastEnd(t, implicit).Totals, lastEnd(t, explicit).Totals
	st := f.srv.ExplicitCaches()
	t.Logf("implicit only: $%.5f, %d cached; explicit: $%.5f, %d cached, %d written; fake: %+v", without.Cost, without.CachedTokens, with.Cost, with.CachedTokens, with.CacheWriteTokens, st)
	if st.Created == 0 || with.CacheWriteTokens != st.InputTokens {
		t.Fatalf("caches created %+v, billed %d written tokens", st, with.CacheWriteTokens)
	}
	if with.CachedTokens == 0 || with.Cost >= without.Cost {
		t.Errorf("with explicit caching $%.5f (%d cached), without $%.5f", with.Cost, with.CachedTokens, without.Cost)
	}
	// The calls over the cache send neither the system instruction nor the tools.
	read := 0
	for _, r := range f.srv.Requests() {
		if strings.Contains(string(r.Body), `"cachedContent"`) {
			read++
			if r.SystemInstruction != nil || r.Tools != 0 {
				t.Errorf("a request over the cache sent the system instruction or tools")
			}
		}
	}
	if read == 0 {
		t.Errorf("no request read the cache")
	}
	// Moving the boundary deletes the old cache; the session's end deletes the last one.
	if st.Live != 1 {
		t.Errorf("%d caches live during the session, want 1", st.Live)
	}
	f.s.caching.Drop(t.Context())
	if st := f.srv.ExplicitCaches(); st.Live != 0 {
		t.Errorf("%d caches live after the session ended", st.Live)
	}
	if w := warningsOf(explicit); len(w) != 0 {
		t.Errorf("warnings %q", w)
	}
}

func TestExplicitCacheAddsNothingWhenImplicitHits(t *testing.T) {
	_, implicit := longReading(t, geminitest.Cache{}, false, "")
	f, explicit := longReading(t, geminitest.Cache{}, true, "")
	without, with := lastEnd(t, implicit).Totals, lastEnd(t, explicit).Totals
	if st := f.srv.ExplicitCaches(); st.Created != 0 {
		t.Errorf("%d caches created though every implicit hit landed", st.Created)
	}
	if with.Cost > 1.02*without.Cost {
		t.Errorf("with explicit caching $%.5f, without $%.5f", with.Cost, without.Cost)
	}
}

func TestExplicitCacheFallbacks(t *testing.T) {
	noLuck := geminitest.Cache{MissRate: 1}
	tests := []struct {
		name  string
		cache geminitest.Cache
		model string
		want  string
	}{
		{"a model without explicit caching", noLuck, "gemini-4-hydrogen", "gemini-4-hydrogen has no explicit caching: the session goes on with implicit caching"},
		{"quota", geminitest.Cache{MissRate: 1, Explicit: geminitest.ExplicitFaults{Create: &geminitest.Fault{Status: 429}}}, "", "the explicit-cache quota is exhausted: the session goes on with implicit caching"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, evs := longReading(t, tt.cache, true, tt.model)
			if got := warningsOf(evs); len(got) != 1 || got[0] != tt.want {
				t.Errorf("warnings %q, want once %q", got, tt.want)
			}
			if st := f.srv.ExplicitCaches(); st.Created != 0 {
				t.Errorf("caches created: %+v", st)
			}
		})
	}
}

func TestExplicitCacheExpired(t *testing.T) {
	// A cache that expires under the session is recreated once; when that one expires too, the
	// session goes on with implicit caching and says so once.
	f, _ := longReading(t, geminitest.Cache{MissRate: 1}, true, "")
	before := f.srv.ExplicitCaches().Created
	var all []Event
	for i := range 2 {
		f.srv.Advance(explicitTTL + 1)
		f.srv.Append(callTurn("read_file", map[string]any{"path": fmt.Sprintf("f%d.txt", i)}, ""), textTurn("again"))
		evs, err := f.run(t.Context(), "read it again")
		if err != nil {
			t.Fatal(err)
		}
		if end := lastEnd(t, evs); end.StopReason != StopEndTurn {
			t.Fatalf("turn %d stopped with %s", i+2, end.StopReason)
		}
		all = append(all, evs...)
	}
	want := []string{"the explicit cache expired again: the session goes on with implicit caching"}
	if got := warningsOf(all); !slices.Equal(got, want) {
		t.Errorf("warnings %q, want %q", got, want)
	}
	if st := f.srv.ExplicitCaches(); st.Created <= before {
		t.Errorf("no cache recreated after the first expiry: %+v (had %d)", st, before)
	}
	refused := 0
	for _, r := range f.srv.Requests() {
		if r.Usage == nil && strings.Contains(string(r.Body), `"cachedContent"`) {
			refused++
		}
	}
	if refused != 2 {
		t.Errorf("%d requests refused for an expired cache, want 2", refused)
	}
}

// TestCacheBilledAtTheCatalogueStorage: creating an explicit cache is billed as input plus its
// storage over the TTL, at the catalogue's storage price of the day ($0.50 per million tokens per
// hour for gemini-3.8-flash until 2026-12-31, $1.00 from 2027-01-01), an override's storage when
// it gives one, the catalogue's when it does not; extending it bills the storage alone.
func TestCacheBilledAtTheCatalogueStorage(t *testing.T) {
	december, january := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), time.Date(2027, 1, 1, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		name           string
		model          string
		day            time.Time
		overrides      contextwin.PriceTable
		input, storage float64 // per million tokens, and per hour
	}{
		{"promotion", "gemini-3.8-flash", december, nil, 0.75, 0.50},
		{"after it", "gemini-3.8-flash", january, nil, 1.50, 1.00},
		{"a pro model", "gemini-3.1-pro-preview", december, nil, 2.00, 4.50},
		{"no storage price in the catalogue", "gemini-3.5-flash-lite", december, nil, 0.30, catalog.FallbackCacheStorage},
		{"an override without storage", "gemini-3.8-flash", december, contextwin.PriceTable{"gemini-3.8-flash": {Input: 1}}, 1, 0.50},
		{"an override with storage", "gemini-3.8-flash", december, contextwin.PriceTable{"gemini-3.8-flash": {Input: 1, CacheStorage: 2}}, 1, 2},
	}
	const tokens, hours = 100_000, 10
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := billing{pricing: contextwin.Pricing{Overrides: tt.overrides}, now: func() time.Time { return tt.day }}
			created, ok := b.cacheCreated(tt.model, tokens, hours*time.Hour)
			extended, ok2 := b.cacheStorage(tt.model, tokens, hours*time.Hour)
			wantCreated, wantExtended := 0.1*(tt.input+hours*tt.storage), 0.1*hours*tt.storage
			if !ok || !ok2 || math.Abs(created-wantCreated) > 1e-9 || math.Abs(extended-wantExtended) > 1e-9 {
				t.Errorf("created $%.4f, extended $%.4f; want $%.4f and $%.4f", created, extended, wantCreated, wantExtended)
			}
			if got := b.totals.Cost; math.Abs(got-created-extended) > 1e-9 || b.totals.CacheWriteTokens != tokens {
				t.Errorf("totals %+v", b.totals)
			}
		})
	}
}

// TestExplicitCacheCostsSurviveResume: what explicit caches cost (their creation as input, their
// storage, the TTL extensions) is journaled, so that a session resumed from its log has the totals
// the live session had, to the token and the dollar.
func TestExplicitCacheCostsSurviveResume(t *testing.T) {
	o, turns := readingOpts(geminitest.Cache{MissRate: 1}, true, "")
	o.simClock = true
	f, st, log := saved(t, o, turns...)
	if _, err := f.run(t.Context(), "read the eight files"); err != nil {
		t.Fatal(err)
	}
	// Past half of the TTL: the next call extends the cache before reading it.
	f.srv.Advance(explicitTTL/2 + time.Minute)
	f.srv.Append(callTurn("read_file", map[string]any{"path": "f0.txt"}, ""), textTurn("again"))
	if _, err := f.run(t.Context(), "read f0 again"); err != nil {
		t.Fatal(err)
	}
	live := f.s.bill.sum()
	f.s.caching.Drop(t.Context())
	if live.CacheWriteTokens == 0 || f.srv.ExplicitCaches().Created == 0 {
		t.Fatalf("no explicit cache was created: %+v", live)
	}
	var created, extended int
	prices, _ := contextwin.Pricing{}.At(f.s.opts.ModelName, f.srv.Now(), 0)
	for _, r := range readLog(t, st, f.s.ID()) {
		if r.Kind != journal.KindCache {
			continue
		}
		switch c := r.Cache; c.Op {
		case journal.CacheCreated:
			created++
			if want := float64(c.Tokens) * (prices.Input + prices.CacheStorage*explicitTTL.Hours()) / 1e6; math.Abs(r.Cost-want) > 1e-12 {
				t.Errorf("creation of %d tokens journaled at $%.6f, want $%.6f", c.Tokens, r.Cost, want)
			}
		case journal.CacheExtended:
			extended++
		}
	}
	if created == 0 || extended == 0 {
		t.Errorf("journaled %d creations and %d extensions, want some of each", created, extended)
	}
	resumed := resumeFrom(t, f, st, log)
	if diff := cmp.Diff(live, resumed.bill.sum(), cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Errorf("totals (-live +resumed):\n%s", diff)
	}
}

// readLog returns the records of session id's log.
func readLog(t *testing.T, st *journal.Store, id string) []journal.Record {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(st.Dir(id), "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []journal.Record
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var r journal.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// TestReadsBeforeRewrite: a cache of the history is weighed over the reads it can expect before a
// clearing or a summary drops it: what the dropped ones served, else the calls the session made
// between rewrites so far, never more than explicitReads. A session that rewrites at every call
// expects one read, which no cache pays for.
func TestReadsBeforeRewrite(t *testing.T) {
	var m ExplicitCache
	for _, c := range []struct{ calls, rewrites, want int }{
		{10, 0, explicitReads}, {25, 20, 1}, {25, 10, 2}, {40, 2, explicitReads},
	} {
		if got := m.readsBeforeRewrite(c.calls, c.rewrites); got != c.want {
			t.Errorf("%d calls, %d rewrites: %d reads, want %d", c.calls, c.rewrites, got, c.want)
		}
	}
	m.lived.caches, m.lived.reads = 3, 6
	if got := m.readsBeforeRewrite(25, 20); got != 2 {
		t.Errorf("three caches dropped after six reads: %d reads expected, want 2", got)
	}
}
