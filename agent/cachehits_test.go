package agent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	if got := r.expectedCached(p, h, &l, 100); got != 0 {
		t.Errorf("the first request expects %d cached tokens, want 0", got)
	}
	r.remember(p, h, 2000)
	longer := append(h[:3:3], msg("d"))
	if got := r.expectedCached(p, longer, &l, 100); got != 2000 {
		t.Errorf("an extended request expects %d, want the last prompt, 2000", got)
	}
	if got := r.expectedCached(p, longer, &l, 2001); got != 0 {
		t.Errorf("below the minimum, %d expected, want 0", got)
	}
	rewritten := []*genai.Content{h[0], msg("B"), h[2]}
	if got, want := r.expectedCached(p, rewritten, &l, 100), l.PrefixTokens(1); got != want || want == 0 {
		t.Errorf("with the second message rewritten, %d expected, want the head's %d", got, want)
	}
	// A message amended in place after it was sent reads as rewritten.
	amended := h
	amended[2] = msg("C")
	if got, want := r.expectedCached(p, amended, &l, 100), l.PrefixTokens(2); got != want {
		t.Errorf("with the last message amended in place, %d expected, want %d", got, want)
	}
	other := &systemPrompt{text: "another system", toolsJSON: "[]"}
	if got := r.expectedCached(other, longer, &l, 100); got != 0 {
		t.Errorf("with another system instruction, %d expected, want 0", got)
	}
}
