package gemini

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

func TestExplicitCacheRoundTrip(t *testing.T) {
	srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{{Parts: []geminitest.Part{{Text: "done"}}}, {Parts: []geminitest.Part{{Text: "again"}}}}})
	defer srv.Close()
	c := newClient(t, srv)
	ctx := t.Context()
	system := strings.Repeat("You are careful. ", 1500) // 25,500 characters: past the minimum
	tools := []*genai.FunctionDeclaration{{Name: "read_file", Description: "reads a file"}}
	history := append(userTurn("fix the bug"), genai.NewContentFromText("reading", genai.RoleModel), genai.NewContentFromText("here it is", genai.RoleUser))
	cache, err := c.CreateCache(ctx, CacheSpec{System: system, Tools: tools, Contents: history[:2], TTL: 10 * time.Minute, DisplayName: "reprise s1"})
	if err != nil {
		t.Fatal(err)
	}
	if cache.Name == "" || cache.Tokens < 4096 || cache.DisplayName != "reprise s1" || cache.Expires.IsZero() {
		t.Fatalf("cache %+v", cache)
	}
	// The request over the cache sends neither the system instruction nor the tools nor the
	// messages the cache holds, and its cached tokens are the cache's.
	r := run(ctx, c, &Request{System: system, Tools: tools, Contents: history, Cache: &CacheRef{Name: cache.Name, Messages: 2}})
	if r.err != nil {
		t.Fatal(r.err)
	}
	if u := r.done.Usage; u.Cached != cache.Tokens || u.Prompt <= cache.Tokens {
		t.Errorf("usage %+v over a cache of %d tokens", u, cache.Tokens)
	}
	reqs := srv.Requests()
	last := reqs[len(reqs)-1]
	if last.SystemInstruction != nil || last.Tools != 0 || len(last.Contents) != 1 || !strings.Contains(string(last.Body), cache.Name) {
		t.Errorf("request over the cache sent system %v, %d tools, %d messages: %s", last.SystemInstruction != nil, last.Tools, len(last.Contents), last.Body)
	}
	if _, err := c.ExtendCache(ctx, cache.Name, time.Hour); err != nil {
		t.Fatal(err)
	}
	left, err := c.Caches(ctx, "reprise s1")
	if err != nil || len(left) != 1 {
		t.Errorf("caches of s1: %v, %v", left, err)
	}
	if err := c.DeleteCache(ctx, cache.Name); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteCache(ctx, cache.Name); err != nil {
		t.Errorf("deleting a cache already gone: %v", err)
	}
	// A request over the deleted cache fails once, not retried, as CacheGone.
	r = run(ctx, c, &Request{Contents: history, Cache: &CacheRef{Name: cache.Name, Messages: 2}})
	if r.err == nil || CacheFailureOf(r.err) != CacheGone || len(r.retries) != 0 {
		t.Errorf("over a deleted cache: %v (%v), %d retries", r.err, CacheFailureOf(r.err), len(r.retries))
	}
	if st := srv.ExplicitCaches(); st.Live != 0 || st.Created != 1 {
		t.Errorf("fake's caches %+v", st)
	}
}

func TestExplicitCacheFailures(t *testing.T) {
	big := strings.Repeat("You are careful. ", 1500)
	tests := []struct {
		name   string
		cache  geminitest.Cache
		model  string
		system string
		want   CacheFailure
	}{
		{"a model without explicit caching", geminitest.Cache{}, "gemini-4-argon", big, CacheUnsupported},
		{"too small", geminitest.Cache{}, "gemini-3.8-flash", "short", CacheTooSmall},
		{"quota", geminitest.Cache{Explicit: geminitest.ExplicitFaults{Create: &geminitest.Fault{Status: 429}}}, "gemini-3.8-flash", big, CacheQuota},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := geminitest.New(geminitest.Script{Cache: tt.cache})
			defer srv.Close()
			c := newClient(t, srv, func(cfg *Config) { cfg.Model = tt.model })
			_, err := c.CreateCache(t.Context(), CacheSpec{System: tt.system})
			if err == nil || CacheFailureOf(err) != tt.want {
				t.Errorf("create: %v, classified %v, want %v", err, CacheFailureOf(err), tt.want)
			}
			if strings.Contains(err.Error(), testKey) {
				t.Errorf("the error shows the key: %v", err)
			}
		})
	}
}

// TestAPIVersionPinned: the client calls the catalogue's API version whatever the SDK's default
// (v1 since genai v1.78.0, where the fake, as the API, has no cachedContents) or the environment
// says; without the pin the cache below fails with a 404.
func TestAPIVersionPinned(t *testing.T) {
	t.Setenv("GOOGLE_GENAI_API_VERSION", "v1")
	srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{{Parts: []geminitest.Part{{Text: "done"}}}}})
	defer srv.Close()
	c := newClient(t, srv)
	cache, err := c.CreateCache(t.Context(), CacheSpec{System: strings.Repeat("You are careful. ", 1500), TTL: time.Minute, DisplayName: "reprise s1"})
	if err != nil {
		t.Fatal(err)
	}
	if r := run(t.Context(), c, &Request{Contents: userTurn("hi"), Cache: &CacheRef{Name: cache.Name}}); r.err != nil {
		t.Fatal(r.err)
	}
	want := "/" + catalog.Builtin().API.Version + "/"
	for _, r := range srv.Requests() {
		if !strings.HasPrefix(r.Path, want) {
			t.Errorf("%s %s: not on %s", r.Method, r.Path, want)
		}
	}
}
