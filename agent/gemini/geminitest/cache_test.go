package geminitest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"
)

// filler is n characters of varied ASCII text, the same for the same seed.
func filler(seed string, n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%s-%d ", seed, i)
	}
	return b.String()[:n]
}

// msg is a message with one text part.
func msg(role, text string) map[string]any {
	return map[string]any{"role": role, "parts": []any{map[string]any{"text": text}}}
}

// reqBody is a request body as the server decodes it; tools is the JSON of "tools", or "".
func reqBody(t testing.TB, system, tools string, contents ...map[string]any) map[string]any {
	t.Helper()
	b := map[string]any{"contents": contents}
	if system != "" {
		b["systemInstruction"] = map[string]any{"parts": []any{map[string]any{"text": system}}}
	}
	if tools != "" {
		b["tools"] = json.RawMessage(tools)
	}
	// Through JSON, so that the body has exactly the types a decoded request has.
	raw, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestImplicitCachePrefixRule(t *testing.T) {
	// The rule's cases are sized for a minimum of 1,024 tokens (Cache.MinTokens), a model's own
	// minimum is its last case's: 2,000 characters are 500 tokens, the system instruction alone
	// is under 1,024, with two messages over it.
	const flash, lite = "gemini-3.8-flash", "gemini-2.5-flash-lite"
	sys := filler("sys", 2000)
	m1, m2, m3 := filler("one", 2000), filler("two", 2000), filler("three", 2000)
	tools := `[{"functionDeclarations":[{"name":"read_file","description":"` + filler("tool", 4000) + `"}]}]`
	big := filler("big", 8000) // 2,000 tokens

	type call struct {
		model  string
		body   map[string]any
		forget bool // the model did not process the request (a fault before any output)
	}
	tests := []struct {
		name      string
		cache     Cache
		catalogue bool // the models' own minimums, not 1,024
		calls     []call
		want      []int // cachedContentTokenCount of each call
	}{
		{
			name:  "nothing before the first request",
			calls: []call{{flash, reqBody(t, big, "", msg("user", m1)), false}},
			want:  []int{0},
		},
		{
			name: "shared prefix below the minimum",
			calls: []call{
				{flash, reqBody(t, sys, "", msg("user", "fix the bug")), false},
				{flash, reqBody(t, sys, "", msg("user", "fix the bug"), msg("model", "done"), msg("user", "thanks")), false},
			},
			want: []int{0, 0},
		},
		{
			name: "shared prefix above the minimum",
			calls: []call{
				{flash, reqBody(t, big, "", msg("user", "hello")), false},
				{flash, reqBody(t, big, "", msg("user", "hello"), msg("model", "hi"), msg("user", "more")), false},
			},
			want: []int{0, (8000 + 5) / 4},
		},
		{
			name: "the same request again: all but a partial last token",
			calls: []call{
				{flash, reqBody(t, big, "", msg("user", "hello")), false},
				{flash, reqBody(t, big, "", msg("user", "hello")), false},
			},
			want: []int{0, (8000 + 5) / 4},
		},
		{
			name: "system instruction changed at its start",
			calls: []call{
				{flash, reqBody(t, big, "", msg("user", m1)), false},
				{flash, reqBody(t, "X"+big[1:], "", msg("user", m1)), false},
			},
			want: []int{0, 0},
		},
		{
			name: "system instruction changed part way: the characters before the change",
			calls: []call{
				{flash, reqBody(t, big, "", msg("user", m1)), false},
				{flash, reqBody(t, big[:6000]+"X"+big[6001:], "", msg("user", m1)), false},
			},
			want: []int{0, 6000 / 4},
		},
		{
			name: "message 3 changed: the prefix up to message 3",
			calls: []call{
				{flash, reqBody(t, sys, "", msg("user", m1), msg("model", m2), msg("user", m3), msg("model", "ok")), false},
				{flash, reqBody(t, sys, "", msg("user", m1), msg("model", m2), msg("user", "X"+m3[1:]), msg("model", "ok")), false},
			},
			want: []int{0, 6000 / 4},
		},
		{
			name: "message 3 changed part way: its common prefix counts too",
			calls: []call{
				{flash, reqBody(t, sys, "", msg("user", m1), msg("model", m2), msg("user", m3)), false},
				{flash, reqBody(t, sys, "", msg("user", m1), msg("model", m2), msg("user", m3[:1000]+"X")), false},
			},
			want: []int{0, 7000 / 4},
		},
		{
			name: "a message's role is part of the prefix",
			calls: []call{
				{flash, reqBody(t, sys, "", msg("user", m1), msg("model", m2), msg("user", m3)), false},
				{flash, reqBody(t, sys, "", msg("user", m1), msg("user", m2), msg("user", m3)), false},
			},
			want: []int{0, 0}, // system and m1: 1,000 tokens, under the minimum
		},
		{
			name: "tools come before the contents",
			calls: []call{
				{flash, reqBody(t, sys, tools, msg("user", m1)), false},
				{flash, reqBody(t, sys, tools, msg("user", m2)), false},
			},
			want: []int{0, (2000 + len(tools)) / 4},
		},
		{
			name: "tools changed: the prefix up to the change",
			calls: []call{
				{flash, reqBody(t, big, tools, msg("user", m1)), false},
				{flash, reqBody(t, big, strings.Replace(tools, "read_file", "read_fil3", 1), msg("user", m1)), false},
			},
			want: []int{0, (8000 + len(`[{"functionDeclarations":[{"description":"`) + 4000 + len(`","name":"read_fil`)) / 4},
		},
		{
			name: "the longest prefix with any earlier request, not only the last",
			calls: []call{
				{flash, reqBody(t, sys, "", msg("user", m1), msg("model", m2)), false},
				{flash, reqBody(t, sys, "", msg("user", "other task")), false},
				{flash, reqBody(t, sys, "", msg("user", m1), msg("model", m2), msg("user", m3)), false},
			},
			want: []int{0, 0, 6000 / 4},
		},
		{
			name: "two models do not share",
			calls: []call{
				{flash, reqBody(t, big, "", msg("user", m1)), false},
				{lite, reqBody(t, big, "", msg("user", m1)), false},
				{flash, reqBody(t, big, "", msg("user", m1)), false},
			},
			want: []int{0, 0, 10000 / 4},
		},
		{
			name:      "the catalogue's minimum: 4,096 tokens on 3.x and 4, 2,048 on 2.5",
			catalogue: true,
			calls: []call{
				{flash, reqBody(t, big, "", msg("user", m1)), false},
				{flash, reqBody(t, big, "", msg("user", m1), msg("model", "ok")), false}, // 2,500 tokens
				{lite, reqBody(t, big, "", msg("user", m1)), false},
				{lite, reqBody(t, big, "", msg("user", m1), msg("model", "ok")), false}, // 2,500 tokens
				{flash, reqBody(t, big+big+big, "", msg("user", m1)), false},
				{flash, reqBody(t, big+big+big, "", msg("user", m2)), false}, // 6,000 tokens
				{"acme-model", reqBody(t, big+big+big, "", msg("user", m1)), false},
				{"acme-model", reqBody(t, big, "", msg("user", m1), msg("model", "ok")), false}, // 2,500 tokens
			},
			want: []int{0, 0, 0, 2500, 0, 6000, 0, 0},
		},
		{
			name: "a request the model did not process is not cached",
			calls: []call{
				{flash, reqBody(t, big, "", msg("user", m1)), true},
				{flash, reqBody(t, big, "", msg("user", m1)), false},
				{flash, reqBody(t, big, "", msg("user", m1)), false},
			},
			want: []int{0, 0, 10000 / 4},
		},
		{
			name:  "script minimum",
			cache: Cache{MinTokens: 100},
			calls: []call{
				{flash, reqBody(t, filler("s", 400), "", msg("user", "a")), false},
				{flash, reqBody(t, filler("s", 400), "", msg("user", "b")), false},
			},
			want: []int{0, 100},
		},
		{
			name:  "caching off",
			cache: Cache{Off: true},
			calls: []call{
				{flash, reqBody(t, big, "", msg("user", m1)), false},
				{flash, reqBody(t, big, "", msg("user", m1)), false},
			},
			want: []int{0, 0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cache
			if cfg.MinTokens == 0 && !tt.catalogue {
				cfg.MinTokens = 1024
			}
			c := newImplicitCache(cfg)
			var got []int
			for i, call := range tt.calls {
				segs := promptSegments(call.body)
				cached := c.bill(call.model, segs, EstimateTokens(promptChars(segs)), !call.forget)
				if prompt := EstimateTokens(promptChars(segs)); cached > prompt {
					t.Errorf("call %d: %d cached tokens of a %d-token prompt", i, cached, prompt)
				}
				got = append(got, cached)
			}
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("cached tokens (-got +want):\n%s", diff)
			}
		})
	}
}

func TestSegmentCharsIn(t *testing.T) {
	a, b := newSegment("part text {}", "aéé"), newSegment("part text {}", "aéè")
	n := commonPrefix(a.key, b.key) // ends inside the last rune
	tests := []struct {
		bytes, want int
	}{
		{0, 0},
		{a.frame, 0},
		{a.frame + 1, 1},
		{a.frame + 2, 1}, // half of é
		{n, 2},
		{len(a.key), 3},
	}
	for _, tt := range tests {
		if got := a.charsIn(tt.bytes); got != tt.want {
			t.Errorf("charsIn(%d) = %d, want %d", tt.bytes, got, tt.want)
		}
	}
}

func TestPartFrame(t *testing.T) {
	// A part's kind, thought flag and signature are part of the prefix; its counted characters
	// are the text, the call's name and JSON args, the response's JSON.
	parts := []map[string]any{
		{"text": "abc"},
		{"text": "abc", "thought": true},
		{"text": "abc", "thoughtSignature": "c2ln"},
		{"functionCall": map[string]any{"name": "abc", "args": map[string]any{"p": "x"}}, "thoughtSignature": "c2ln"},
		{"functionResponse": map[string]any{"name": "abc", "response": map[string]any{"output": "x"}}},
	}
	var got []string
	var chars []int
	for _, p := range parts {
		s := partSegment(p)
		got = append(got, s.key[:s.frame-1])
		chars = append(chars, s.chars)
	}
	want := []string{
		`part text {}`,
		`part text {"thought":true}`,
		`part text {"thoughtSignature":"c2ln"}`,
		`part functionCall {"functionCall":{},"thoughtSignature":"c2ln"}`,
		`part functionResponse {}`,
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("frames (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(chars, []int{3, 3, 3, 3 + len(`{"p":"x"}`), len(`{"name":"abc","response":{"output":"x"}}`)}); diff != "" {
		t.Errorf("counted characters (-got +want):\n%s", diff)
	}
}

func TestCachedTokensThroughClient(t *testing.T) {
	srv := New(Script{Turns: []Turn{
		{Fault: &Fault{Status: 429}},
		{Parts: []Part{{Text: "first"}}},
		{Parts: []Part{{Text: "second"}}},
		{Parts: []Part{{Text: "scripted"}}, Usage: &Usage{Prompt: 7, Candidates: 1}},
	}})
	defer srv.Close()
	c := client(t, srv)
	cfg := noContinuation()
	cfg.SystemInstruction = genai.NewContentFromText(filler("sys", 20000), "") // past gemini-3.8-flash's 4,096
	first := userText("read the code")
	second := append(first, genai.NewContentFromText("first", genai.RoleModel), genai.NewContentFromText("go on", genai.RoleUser))

	var got []Usage
	for _, contents := range [][]*genai.Content{first, first, second, second} {
		resp, err := c.Models.GenerateContent(t.Context(), model, contents, cfg)
		if err != nil {
			got = append(got, Usage{})
			continue
		}
		u := resp.UsageMetadata
		got = append(got, Usage{Prompt: int(u.PromptTokenCount), Cached: int(u.CachedContentTokenCount), Candidates: int(u.CandidatesTokenCount)})
	}
	want := []Usage{
		{},                            // the 429: the model never read the prompt
		{Prompt: 5004, Candidates: 2}, // (20000 + 13) / 4, rounded up; nothing cached yet
		{Prompt: 5006, Cached: 5003, Candidates: 2}, // (20000 + 13 + 5 + 5) / 4, rounded up; the first request's 20,013 characters cached
		{Prompt: 7, Candidates: 1},                  // a scripted usage is reported as is
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("usage (-got +want):\n%s", diff)
	}
	var recorded []*Usage
	for _, r := range srv.Requests() {
		recorded = append(recorded, r.Usage)
	}
	// The fake fills in the tier it served; a scripted usage is reported as is but for that.
	for i := 1; i < len(want); i++ {
		want[i].ServiceTier = "standard"
	}
	if diff := cmp.Diff(recorded, []*Usage{nil, &want[1], &want[2], &want[3]}); diff != "" {
		t.Errorf("recorded usage (-got +want):\n%s", diff)
	}
}

// growingSession makes calls requests through the real client, each extending the previous one
// by a reply and 4,000 characters (1,000 tokens) of user text after a system instruction of
// sysChars characters, and returns the cachedContentTokenCount of each.
func growingSession(t *testing.T, cache Cache, sysChars, calls int) []int {
	t.Helper()
	var turns []Turn
	for range calls {
		turns = append(turns, Turn{Parts: []Part{{Text: "ok"}}})
	}
	srv := New(Script{Cache: cache, Turns: turns})
	defer srv.Close()
	c := client(t, srv)
	cfg := noContinuation()
	cfg.SystemInstruction = genai.NewContentFromText(filler("sys", sysChars), "")
	contents := userText("start")
	var cached []int
	for i := range calls {
		resp, err := c.Models.GenerateContent(t.Context(), model, contents, cfg)
		if err != nil {
			t.Fatal(err)
		}
		cached = append(cached, int(resp.UsageMetadata.CachedContentTokenCount))
		contents = append(contents, genai.NewContentFromText("ok", genai.RoleModel), genai.NewContentFromText(filler(fmt.Sprint(i), 4000), genai.RoleUser))
	}
	return cached
}

func TestImplicitCacheMissRate(t *testing.T) {
	// 40 calls past the minimum: each but the first would hit.
	misses := func(cache Cache) (n int, which []int) {
		for i, c := range growingSession(t, cache, 20000, 40)[1:] {
			if c == 0 {
				n++
				which = append(which, i)
			}
		}
		return n, which
	}
	if n, _ := misses(Cache{}); n != 0 {
		t.Errorf("without a miss rate, %d of 39 requests missed", n)
	}
	half := Cache{MissRate: 0.5, Seed: 7}
	n, first := misses(half)
	if n < 10 || n > 29 {
		t.Errorf("at a miss rate of 0.5, %d of 39 requests missed", n)
	}
	if _, again := misses(half); !cmp.Equal(again, first) {
		t.Errorf("the same seed missed %v, then %v", first, again)
	}
	if _, other := misses(Cache{MissRate: 0.5, Seed: 8}); cmp.Equal(other, first) {
		t.Errorf("another seed missed the same requests %v", first)
	}
	if n, _ := misses(Cache{MissRate: 1}); n != 39 {
		t.Errorf("at a miss rate of 1, %d of 39 requests missed", n)
	}
}

func TestImplicitCacheDeadZone(t *testing.T) {
	// Prompts of 5,002 tokens, then 1,002 more per call: calls 4 to 11 are from 9,010 to 16,024
	// tokens, in the zone.
	cached := growingSession(t, Cache{DeadZone: &Zone{From: 9000, To: 17000}}, 20000, 14)
	for i, c := range cached[1:] {
		call := i + 1
		if inZone := call >= 4 && call <= 11; inZone != (c == 0) {
			t.Errorf("call %d: %d cached tokens (in the dead zone: %v)", call, c, inZone)
		}
	}
}

// BenchmarkImplicitCache bills a 60-call session whose every request extends the previous one by
// a tool call and its 4,000-character result, after a 4,000-character system instruction:
// the cost of a request stays linear in its size however many came before.
func BenchmarkImplicitCache(b *testing.B) {
	const calls = 60
	contents := []map[string]any{msg("user", "fix the failing test")}
	var bodies []map[string]any
	for i := range calls {
		bodies = append(bodies, reqBody(b, filler("sys", 4000), `[{"functionDeclarations":[{"name":"read_file"}]}]`, contents...))
		contents = append(contents,
			map[string]any{"role": "model", "parts": []any{map[string]any{"functionCall": map[string]any{"name": "read_file", "args": map[string]any{"path": fmt.Sprintf("f%d.go", i)}}}}},
			map[string]any{"role": "user", "parts": []any{map[string]any{"functionResponse": map[string]any{"name": "read_file", "response": map[string]any{"output": filler(fmt.Sprint(i), 4000)}}}}})
	}
	var cached int
	for b.Loop() {
		c := newImplicitCache(Cache{})
		cached = 0
		for _, body := range bodies {
			cached += c.bill("gemini-3.8-flash", promptSegments(body), 0, true)
		}
	}
	b.ReportMetric(float64(cached), "cached-tokens")
}
