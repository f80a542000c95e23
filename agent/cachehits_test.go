package agent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/contextwin"
)

// readingSession is a session that reads three files of 4,000 characters then answers, over the
// fake with cache.
func readingSession(t *testing.T, cache geminitest.Cache) (*fixture, *TurnEnd) {
	t.Helper()
	files := map[string]string{}
	var turns []geminitest.Turn
	for _, name := range []string{"a.txt", "b.txt", "c.txt"} {
		files[name] = strings.Repeat(name+" holds a line of text\n", 180)
		turns = append(turns, callTurn("read_file", map[string]any{"path": name}, ""))
	}
	turns = append(turns, textTurn("read"))
	f := newFixture(t, fixtureOpts{files: files, journal: true, cacheMin: 512, script: geminitest.Script{Cache: cache}}, turns...)
	evs, err := f.run(t.Context(), "read the three files")
	if err != nil {
		t.Fatal(err)
	}
	return f, lastEnd(t, evs)
}

func TestCacheHitsMeasured(t *testing.T) {
	f, end := readingSession(t, geminitest.Cache{})
	h, ok := end.Totals.Cache()
	if !ok {
		t.Fatalf("no hit expected over %+v", end.Totals)
	}
	// The fake caches the whole previous request: every expected hit is reported, give or take
	// the rounding of a token.
	if h.HitRate < 0.99 || h.Reported > h.Expected {
		t.Errorf("hits %+v, want a rate of about 1", h)
	}
	// The journal keeps each call's expectation beside what the API reported.
	var got []contextwin.CallUsage
	for _, r := range readRecords(t, f.state) {
		if r.Kind == journal.KindUsage {
			got = append(got, *r.Usage)
		}
	}
	if len(got) != 4 {
		t.Fatalf("%d usage records, want 4", len(got))
	}
	if got[0].ExpectedCached != 0 {
		t.Errorf("the first call expected %d cached tokens, want 0", got[0].ExpectedCached)
	}
	sum := 0
	for i, u := range got[1:] {
		if want := got[i].Prompt; u.ExpectedCached != want {
			t.Errorf("call %d expected %d cached tokens, want the previous prompt, %d", i+2, u.ExpectedCached, want)
		}
		sum += u.ExpectedCached
	}
	if sum != h.Expected {
		t.Errorf("the totals expected %d, the journal %d", h.Expected, sum)
	}
	if text := end.Totals.CacheText(); text != "cache: 99 % of the expected hits" && text != "cache: 100 % of the expected hits" {
		t.Errorf("CacheText = %q", text)
	}
	// A resumed session reads the rate back from the journal.
	snap := journal.Replay(readRecords(t, f.state))
	if diff := cmp.Diff(snap.Totals.CacheExpected, h.Expected); diff != "" {
		t.Errorf("replayed expected (-got +want):\n%s", diff)
	}
}

func TestCacheHitsMissed(t *testing.T) {
	_, end := readingSession(t, geminitest.Cache{MissRate: 1})
	h, ok := end.Totals.Cache()
	if !ok || h.Reported != 0 || h.HitRate != 0 {
		t.Errorf("hits %+v (%v), want all of them missed", h, ok)
	}
	if end.Totals.CachedTokens != 0 {
		t.Errorf("%d cached tokens with every hit missed", end.Totals.CachedTokens)
	}
	if got, want := end.Totals.CacheText(), "cache: 0 % of the expected hits"; got != want {
		t.Errorf("CacheText = %q, want %q", got, want)
	}
}

func readRecords(t *testing.T, dir string) []journal.Record {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []journal.Record
	for line := range strings.Lines(string(data)) {
		var r journal.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

func TestExpectedCached(t *testing.T) {
	msg := func(text string) *genai.Content {
		return genai.NewContentFromText(strings.Repeat(text, 400), genai.RoleUser)
	}
	p := &systemPrompt{text: strings.Repeat("system ", 1000), toolsJSON: "[]"}
	h := []*genai.Content{msg("a"), msg("b"), msg("c")}
	var l contextwin.Ledger
	l.SetFixed(contextwin.EstimateText(p.text))
	for _, c := range h {
		l.Append(c)
	}
	var r lastRequest
	check := func(what string, got int, why contextwin.MissCause, want int, wantWhy contextwin.MissCause) {
		t.Helper()
		if got != want || why != wantWhy {
			t.Errorf("%s: %d expected (%q), want %d (%q)", what, got, why, want, wantWhy)
		}
	}
	got, why := r.expectedCached(p, h, &l, 100)
	check("the first request", got, why, 0, contextwin.MissFirst)
	replied := []*genai.Content{h[0], genai.NewContentFromText("ok", genai.RoleModel), h[1]}
	got, why = r.expectedCached(p, replied, &l, 100)
	check("the first request of a resumed history", got, why, 0, contextwin.MissResume)
	r.remember(p, h, 2000, time.Time{})
	longer := append(h[:3:3], msg("d"))
	got, why = r.expectedCached(p, longer, &l, 100)
	check("an extended request", got, why, 2000, "")
	got, why = r.expectedCached(p, longer, &l, 2001)
	check("below the minimum", got, why, 0, contextwin.MissBelow)
	rewritten := []*genai.Content{h[0], msg("B"), h[2]}
	got, why = r.expectedCached(p, rewritten, &l, 100)
	check("with the second message rewritten", got, why, l.PrefixTokens(1), "")
	got, why = r.expectedCached(p, rewritten, &l, l.PrefixTokens(1)+1)
	check("rewritten under the minimum", got, why, 0, contextwin.MissRewritten)
	// A message amended in place after it was sent reads as rewritten.
	amended := h
	amended[2] = msg("C")
	got, why = r.expectedCached(p, amended, &l, 100)
	check("with the last message amended in place", got, why, l.PrefixTokens(2), "")
	other := &systemPrompt{text: "another system", toolsJSON: "[]"}
	got, why = r.expectedCached(other, longer, &l, 100)
	check("with another system instruction", got, why, 0, contextwin.MissTools)
}

func TestMissOf(t *testing.T) {
	idle := 5 * time.Minute
	for _, tt := range []struct {
		name     string
		u        contextwin.CallUsage
		expected int
		why      contextwin.MissCause
		gap      time.Duration
		want     contextwin.MissCause
	}{
		{"a hit", contextwin.CallUsage{Prompt: 9000, Cached: 8000}, 8000, "", time.Second, ""},
		{"a hit nobody expected", contextwin.CallUsage{Prompt: 9000, Cached: 4096}, 0, contextwin.MissRewritten, time.Second, ""},
		{"an explicit cache read", contextwin.CallUsage{Prompt: 9000, Explicit: true}, 8000, "", time.Second, ""},
		{"expected none", contextwin.CallUsage{Prompt: 3000}, 0, contextwin.MissBelow, time.Second, contextwin.MissBelow},
		{"missed at once", contextwin.CallUsage{Prompt: 9000}, 8000, "", time.Second, contextwin.MissUnexplained},
		{"short of what was expected", contextwin.CallUsage{Prompt: 9000, Cached: 4096}, 8000, "", time.Second, contextwin.MissUnexplained},
		{"missed after idling", contextwin.CallUsage{Prompt: 9000}, 8000, "", 6 * time.Minute, contextwin.MissIdle},
	} {
		if got := missOf(tt.u, tt.expected, tt.why, tt.gap, idle); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestMissesExplained: each loop call that the implicit cache did not serve as expected is put
// down to its cause, in the journal and the totals, and a resumed session reads them back.
func TestMissesExplained(t *testing.T) {
	misses := func(t *testing.T, tot contextwin.Totals, want map[contextwin.MissCause]int, text string) {
		t.Helper()
		if diff := cmp.Diff(tot.Misses.Calls, want); diff != "" {
			t.Errorf("misses (-got +want):\n%s", diff)
		}
		if got := tot.Misses.Text(512); got != text {
			t.Errorf("text %q, want %q", got, text)
		}
	}
	t.Run("every hit lands", func(t *testing.T) {
		f, end := readingSession(t, geminitest.Cache{})
		misses(t, end.Totals, map[contextwin.MissCause]int{contextwin.MissFirst: 1}, "1 uncached call: 1 first call")
		var first contextwin.MissCause
		for _, r := range readRecords(t, f.state) {
			if r.Kind == journal.KindUsage && first == "" {
				first = r.Usage.Miss
			}
		}
		if first != contextwin.MissFirst {
			t.Errorf("the journal's first call: %q", first)
		}
		if diff := cmp.Diff(journal.Replay(readRecords(t, f.state)).Totals.Misses, end.Totals.Misses); diff != "" {
			t.Errorf("replayed (-got +want):\n%s", diff)
		}
	})
	t.Run("the API misses every hit", func(t *testing.T) {
		_, end := readingSession(t, geminitest.Cache{MissRate: 1})
		misses(t, end.Totals, map[contextwin.MissCause]int{contextwin.MissFirst: 1, contextwin.MissUnexplained: 3},
			"4 uncached calls: 1 first call, 3 missed by the API (best-effort)")
	})
	t.Run("under the minimum", func(t *testing.T) {
		o, turns := readingOpts(geminitest.Cache{}, false, "")
		o.cacheMin = 1 << 20
		f := newFixture(t, o, turns...)
		evs, err := f.run(t.Context(), "read the eight files")
		if err != nil {
			t.Fatal(err)
		}
		misses(t, lastEnd(t, evs).Totals, map[contextwin.MissCause]int{contextwin.MissFirst: 1, contextwin.MissBelow: 8},
			"9 uncached calls: 1 first call, 8 under the 512-token minimum")
	})
	t.Run("after idling", func(t *testing.T) {
		o, turns := readingOpts(geminitest.Cache{MissRate: 1}, false, "")
		o.simClock = true
		f := newFixture(t, o, turns...)
		if _, err := f.run(t.Context(), "read the eight files"); err != nil {
			t.Fatal(err)
		}
		f.idle(t, 30*time.Minute)
		f.srv.Append(textTurn("the same as before"))
		evs, err := f.run(t.Context(), "and now?")
		if err != nil {
			t.Fatal(err)
		}
		misses(t, lastEnd(t, evs).Totals, map[contextwin.MissCause]int{contextwin.MissFirst: 1, contextwin.MissUnexplained: 8, contextwin.MissIdle: 1},
			"10 uncached calls: 1 first call, 1 after the cache idled out, 8 missed by the API (best-effort)")
	})
}
