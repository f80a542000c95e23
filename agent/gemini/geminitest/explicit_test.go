package geminitest

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/genai"
)

// apiCode is the HTTP status of a genai.APIError, 0 for another error.
func apiCode(err error) int {
	var ae genai.APIError
	if errors.As(err, &ae) {
		return ae.Code
	}
	return 0
}

func TestExplicitCacheThroughClient(t *testing.T) {
	srv := New(Script{Turns: []Turn{{Parts: []Part{{Text: "one"}}}, {Parts: []Part{{Text: "two"}}}}})
	defer srv.Close()
	c := client(t, srv)
	ctx := t.Context()
	sys := genai.NewContentFromText(filler("sys", 20000), "") // 5,000 tokens, past the minimum
	cc, err := c.Caches.Create(ctx, model, &genai.CreateCachedContentConfig{
		DisplayName: "reprise session s1", SystemInstruction: sys, Contents: userText("the task"), TTL: 5 * time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	if cc.Name == "" || cc.DisplayName != "reprise session s1" || cc.UsageMetadata == nil || cc.UsageMetadata.TotalTokenCount != 5002 {
		t.Errorf("created %+v", cc)
	}
	// A generation over the cache: its tokens are the prompt's first ones, all billed cached.
	cfg := noContinuation()
	cfg.CachedContent = cc.Name
	resp, err := c.Models.GenerateContent(ctx, model, userText("go on"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	// (20,000 + 8 characters) / 4 cached, and 5 more characters.
	if u := resp.UsageMetadata; u.CachedContentTokenCount != 5002 || u.PromptTokenCount != 5004 {
		t.Errorf("usage over the cache: prompt %d, cached %d; want 5004, 5002", u.PromptTokenCount, u.CachedContentTokenCount)
	}
	// Setting what the cache holds is refused.
	both := noContinuation()
	both.CachedContent, both.SystemInstruction = cc.Name, sys
	if _, err := c.Models.GenerateContent(ctx, model, userText("go on"), both); apiCode(err) != http.StatusBadRequest {
		t.Errorf("system instruction beside the cache: %v, want a 400", err)
	}
	// The TTL extended, it outlives its first expiry; deleted or expired, it is a 403.
	srv.Advance(4 * time.Minute)
	if _, err := c.Caches.Update(ctx, cc.Name, &genai.UpdateCachedContentConfig{TTL: 5 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	srv.Advance(4 * time.Minute)
	if _, err := c.Caches.Get(ctx, cc.Name, nil); err != nil {
		t.Errorf("the cache expired despite its extension: %v", err)
	}
	page, err := c.Caches.List(ctx, nil)
	if err != nil || len(page.Items) != 1 {
		t.Errorf("list: %v, %d caches, want 1", err, len(page.Items))
	}
	srv.Advance(2 * time.Minute)
	if _, err := c.Models.GenerateContent(ctx, model, userText("go on"), cfg); apiCode(err) != http.StatusForbidden {
		t.Errorf("over an expired cache: %v, want a 403", err)
	}
	if _, err := c.Caches.Delete(ctx, cc.Name, nil); apiCode(err) != http.StatusForbidden {
		t.Errorf("deleting an expired cache: %v, want a 403", err)
	}
	// Billed: 5,002 tokens at creation, stored 9 minutes (until it expired).
	st := srv.ExplicitCaches()
	if diff := cmp.Diff(st, CacheStats{Created: 1, InputTokens: 5002, TokenHours: 5002 * 9.0 / 60}, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("stats (-got +want):\n%s", diff)
	}
	// A cache deleted stops being billed.
	cc2, err := c.Caches.Create(ctx, model, &genai.CreateCachedContentConfig{SystemInstruction: sys})
	if err != nil {
		t.Fatal(err)
	}
	srv.Advance(30 * time.Minute)
	if _, err := c.Caches.Delete(ctx, cc2.Name, nil); err != nil {
		t.Fatal(err)
	}
	srv.Advance(time.Hour)
	if st := srv.ExplicitCaches(); st.Live != 0 || !cmp.Equal(st.TokenHours, 5002*9.0/60+5000*0.5, cmpopts.EquateApprox(0, 1e-9)) {
		t.Errorf("after a delete: %+v", st)
	}
}

func TestExplicitCacheRefusals(t *testing.T) {
	sys := genai.NewContentFromText(filler("sys", 20000), "")
	tests := []struct {
		name   string
		cache  Cache
		model  string
		system *genai.Content
		want   int
	}{
		{"too small", Cache{}, model, genai.NewContentFromText("short", ""), http.StatusBadRequest},
		{"a model without explicit caching", Cache{}, "gemini-4-argon", sys, http.StatusBadRequest},
		{"quota", Cache{Explicit: ExplicitFaults{Create: &Fault{Status: 429, Message: "Quota exceeded"}}}, model, sys, http.StatusTooManyRequests},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := New(Script{Cache: tt.cache})
			defer srv.Close()
			c := client(t, srv)
			_, err := c.Caches.Create(t.Context(), tt.model, &genai.CreateCachedContentConfig{SystemInstruction: tt.system})
			if apiCode(err) != tt.want {
				t.Errorf("create: %v, want a %d", err, tt.want)
			}
			if st := srv.ExplicitCaches(); st.Created != 0 {
				t.Errorf("%d caches created", st.Created)
			}
		})
	}
	// A cache nobody created.
	srv := New(Script{Turns: []Turn{{Parts: []Part{{Text: "x"}}}}})
	defer srv.Close()
	cfg := noContinuation()
	cfg.CachedContent = "cachedContents/nope"
	if _, err := client(t, srv).Models.GenerateContent(t.Context(), model, userText("hi"), cfg); apiCode(err) != http.StatusForbidden {
		t.Errorf("over a cache never created: %v, want a 403", err)
	}
}

// TestOverExplicit: a request reading an explicit cache gets implicit hits on the rest of its
// prompt only with Cache.OverExplicit; off, it gets the cache's tokens alone.
func TestOverExplicit(t *testing.T) {
	for _, over := range []bool{false, true} {
		srv := New(Script{Cache: Cache{OverExplicit: over}, Turns: []Turn{{Parts: []Part{{Text: "one"}}}, {Parts: []Part{{Text: "two"}}}}})
		c := client(t, srv)
		cc, err := c.Caches.Create(t.Context(), model, &genai.CreateCachedContentConfig{SystemInstruction: genai.NewContentFromText(filler("sys", 20000), "")})
		if err != nil {
			t.Fatal(err)
		}
		cfg := noContinuation()
		cfg.CachedContent = cc.Name
		rest := filler("rest", 20000) // 5,000 tokens past the cache
		var cached []int32
		for _, q := range []string{"\nfirst", "\nsecond"} {
			resp, err := c.Models.GenerateContent(t.Context(), model, userText(rest+q), cfg)
			if err != nil {
				t.Fatal(err)
			}
			cached = append(cached, resp.UsageMetadata.CachedContentTokenCount)
		}
		srv.Close()
		want := []int32{5000, 5000}
		if over {
			want[1] = 10000 // the cache's 5,000, and 5,000 of the rest shared (its characters, the newline too, over 4, floored)
		}
		if diff := cmp.Diff(want, cached); diff != "" {
			t.Errorf("overExplicit %v: cached (-want +got):\n%s", over, diff)
		}
	}
}
