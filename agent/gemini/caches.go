package gemini

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"google.golang.org/genai"
)

// Explicit caches (cachedContents): a stable prefix of the requests (system instruction, tools
// and the older history) stored once, billed as input when created, per token-hour while it
// lives and at the cached price when a request reads it. Unlike implicit caching, a hit does not
// depend on luck. Each operation is tried once: on any failure the session goes on with implicit
// caching, which is always there.

// CacheRef names the explicit cache a request reads: it holds the system instruction, the tools
// and the first Messages messages of Contents, which the request then does not send.
type CacheRef struct {
	Name     string // cachedContents/…
	Messages int
}

// CacheSpec is what an explicit cache is made of.
type CacheSpec struct {
	System   string
	Tools    []*genai.FunctionDeclaration
	Contents []*genai.Content
	TTL      time.Duration
	// DisplayName identifies the session that owns the cache, so that one left behind by a
	// crash can be found and deleted on resume.
	DisplayName string
}

// Cache is an explicit cache as the API described it.
type Cache struct {
	Name        string
	DisplayName string
	Tokens      int // billed as input at creation, then per token-hour
	Expires     time.Time
}

// CacheFailure says why an explicit-cache operation failed, for the fallback it calls for.
type CacheFailure int

// Reasons an explicit cache cannot be used.
const (
	CacheFailed      CacheFailure = iota // anything else (a transport failure, a 5xx)
	CacheUnsupported                     // the model has no explicit caching (400)
	CacheTooSmall                        // below the model's minimum (400 "too small")
	CacheGone                            // expired or deleted (403 or 404)
	CacheQuota                           // quota exhausted (429)
)

// CacheFailureOf classifies an error of an explicit-cache operation, or of a request that named
// a cache.
func CacheFailureOf(err error) CacheFailure {
	status, msg := 0, ""
	var ae genai.APIError
	var e *Error
	switch {
	case errors.As(err, &ae):
		status, msg = ae.Code, ae.Message
	case errors.As(err, &e):
		status, msg = e.Status, e.Message
	}
	switch {
	case status == http.StatusTooManyRequests:
		return CacheQuota
	case status == http.StatusForbidden || status == http.StatusNotFound:
		return CacheGone
	case status == http.StatusBadRequest && strings.Contains(strings.ToLower(msg), "too small"):
		return CacheTooSmall
	case status == http.StatusBadRequest:
		return CacheUnsupported
	}
	return CacheFailed
}

func cacheOf(cc *genai.CachedContent) Cache {
	c := Cache{Name: cc.Name, DisplayName: cc.DisplayName, Expires: cc.ExpireTime}
	if cc.UsageMetadata != nil {
		c.Tokens = int(cc.UsageMetadata.TotalTokenCount)
	}
	return c
}

// CreateCache stores spec as an explicit cache of the client's model.
func (c *Client) CreateCache(ctx context.Context, spec CacheSpec) (Cache, error) {
	cfg := &genai.CreateCachedContentConfig{TTL: spec.TTL, DisplayName: spec.DisplayName, Contents: spec.Contents}
	if spec.System != "" {
		cfg.SystemInstruction = &genai.Content{Parts: []*genai.Part{{Text: spec.System}}}
	}
	if len(spec.Tools) > 0 {
		cfg.Tools = []*genai.Tool{{FunctionDeclarations: spec.Tools}}
	}
	cc, err := c.genai.Caches.Create(ctx, c.model, cfg)
	if err != nil {
		return Cache{}, fmt.Errorf("create an explicit cache of %s: %w", c.model, scrub(err, c.key))
	}
	return cacheOf(cc), nil
}

// ExtendCache gives the cache name ttl more to live, from now.
func (c *Client) ExtendCache(ctx context.Context, name string, ttl time.Duration) (time.Time, error) {
	cc, err := c.genai.Caches.Update(ctx, name, &genai.UpdateCachedContentConfig{TTL: ttl})
	if err != nil {
		return time.Time{}, fmt.Errorf("extend explicit cache %s: %w", name, scrub(err, c.key))
	}
	return cc.ExpireTime, nil
}

// DeleteCache deletes the cache name; one already gone is not an error.
func (c *Client) DeleteCache(ctx context.Context, name string) error {
	if _, err := c.genai.Caches.Delete(ctx, name, nil); err != nil && CacheFailureOf(err) != CacheGone {
		return fmt.Errorf("delete explicit cache %s: %w", name, scrub(err, c.key))
	}
	return nil
}

// Caches lists the live caches whose display name starts with prefix: those a session left
// behind, to delete on resume.
func (c *Client) Caches(ctx context.Context, prefix string) ([]Cache, error) {
	var out []Cache
	for cc, err := range c.genai.Caches.All(ctx) {
		if err != nil {
			return out, fmt.Errorf("list explicit caches: %w", scrub(err, c.key))
		}
		if strings.HasPrefix(cc.DisplayName, prefix) {
			out = append(out, cacheOf(cc))
		}
	}
	return out, nil
}
