package gemini

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
)

// TestListModels: every page of models.list is read through the real client; models that cannot
// generate content are left out, a model the catalogue lacks is kept.
func TestListModels(t *testing.T) {
	ids := []string{"gemini-3.8-flash", "text-embedding-004", "gemini-9-experimental"}
	for i := range 60 { // past the fake's page of 50
		ids = append(ids, "tuned-"+string(rune('a'+i%26))+string(rune('a'+i/26)))
	}
	srv := geminitest.New(geminitest.Script{Models: ids})
	defer srv.Close()
	got, err := newClient(t, srv).ListModels(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(ids)-1 {
		t.Fatalf("%d models, want %d", len(got), len(ids)-1)
	}
	want := []ListedModel{
		{ID: "gemini-3.8-flash", DisplayName: "Gemini 3.8 Flash", InputTokenLimit: 1048576, OutputTokenLimit: 65536},
		{ID: "gemini-9-experimental", DisplayName: "gemini-9-experimental", InputTokenLimit: 1048576, OutputTokenLimit: 65536},
	}
	if diff := cmp.Diff(got[:2], want); diff != "" {
		t.Errorf("models (-got +want):\n%s", diff)
	}
	pages := 0
	for _, r := range srv.Requests() {
		if r.Path == "/v1beta/models" {
			pages++
		}
	}
	if pages != 2 {
		t.Errorf("%d pages read, want 2", pages)
	}
}

// TestModelAnswersCachedForADay: what the API said about a model (its list, its input limit) is
// kept on disk for a day per endpoint, without the key, so a new session does not ask again;
// another endpoint, or a day later, asks again. Without a cache directory every client asks.
func TestModelAnswersCachedForADay(t *testing.T) {
	srv := geminitest.New(geminitest.Script{InputTokenLimit: 200_000})
	defer srv.Close()
	count := func(path string) int {
		n := 0
		for _, r := range srv.Requests() {
			if r.Path == path {
				n++
			}
		}
		return n
	}
	dir := t.TempDir()
	cached := func(c *Config) { c.CacheDir = dir; c.Model = "gemini-3.8-flash" }
	for i := range 2 {
		limit, err := newClient(t, srv, cached).InputTokenLimit(t.Context())
		if err != nil || limit != 200_000 {
			t.Fatalf("client %d: limit %d, %v", i, limit, err)
		}
	}
	if n := count("/v1beta/models/gemini-3.8-flash"); n != 1 {
		t.Errorf("%d models.get requests for two clients, want 1 (the second from the cache)", n)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	for _, f := range files {
		if b, _ := os.ReadFile(f); strings.Contains(string(b), testKey) {
			t.Errorf("%s holds the key:\n%s", f, b)
		}
	}

	// The list answers for every model it names, limits included.
	now := time.Now()
	l, fromCache, err := ListModelsCached(t.Context(), Config{APIKey: testKey, BaseURL: srv.URL(), CacheDir: dir}, now, false)
	if err != nil || fromCache || len(l.Models) == 0 {
		t.Fatalf("list: %d models, cached %v, %v", len(l.Models), fromCache, err)
	}
	if _, fromCache, _ = ListModelsCached(t.Context(), Config{APIKey: testKey, BaseURL: srv.URL(), CacheDir: dir}, now.Add(time.Hour), false); !fromCache {
		t.Error("the list was read again an hour later")
	}
	other := func(c *Config) { c.CacheDir = dir; c.Model = "gemini-3.5-flash-lite" }
	before := count("/v1beta/models/gemini-3.5-flash-lite")
	if _, err := newClient(t, srv, other).InputTokenLimit(t.Context()); err != nil {
		t.Fatal(err)
	}
	if count("/v1beta/models/gemini-3.5-flash-lite") != before {
		t.Error("a model the cached list names was asked with models.get")
	}

	if _, fromCache, _ = ListModelsCached(t.Context(), Config{APIKey: testKey, BaseURL: srv.URL(), CacheDir: dir}, now.Add(ModelsCacheTTL+time.Minute), false); fromCache {
		t.Error("a list a day old was reused")
	}
	// Another endpoint never reuses this one's answers.
	srv2 := geminitest.New(geminitest.Script{InputTokenLimit: 100_000})
	defer srv2.Close()
	if limit, _ := newClient(t, srv2, cached).InputTokenLimit(t.Context()); limit != 100_000 {
		t.Errorf("another endpoint's limit = %d, want its own 100000", limit)
	}
	// No cache directory: asked every time.
	for range 2 {
		_, _ = newClient(t, srv).InputTokenLimit(t.Context())
	}
	if n := count("/v1beta/models/gemini-3.8-flash"); n != 3 {
		t.Errorf("%d models.get requests, want 3 (two without a cache)", n)
	}
}
