package geminitest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// Explicit caches (cachedContents, the genai Caches API) as the API serves them: created from a
// model, contents, a system instruction and tools, billed as input when created and per
// token-hour while they live, read at the cached price by a generation that names them, gone
// after their TTL. The fake's clock is simulated (Server.Advance), so a test can let a cache
// expire, or a session idle past its TTL, without waiting.

// ExplicitFaults are failures the fake gives cachedContents requests, as the API does.
type ExplicitFaults struct {
	// Create, if set, answers every cache creation with this fault (a 429 for quota, say).
	Create *Fault `json:"create,omitempty"`
	// Extend, if set, answers every update of a cache's TTL with this fault.
	Extend *Fault `json:"extend,omitempty"`
}

// defaultCacheTTL is the TTL of a cache created without one, as the API's.
const defaultCacheTTL = time.Hour

// explicitCache is one cachedContent.
type explicitCache struct {
	name, model, display string
	segs                 []segment
	tokens               int
	created, expires     time.Time
	deleted              time.Time // zero while it is not
}

// wire is the CachedContent resource the API answers with.
func (c *explicitCache) wire() map[string]any {
	return map[string]any{
		"name":          c.name,
		"model":         "models/" + c.model,
		"displayName":   c.display,
		"createTime":    c.created.UTC().Format(time.RFC3339Nano),
		"updateTime":    c.created.UTC().Format(time.RFC3339Nano),
		"expireTime":    c.expires.UTC().Format(time.RFC3339Nano),
		"usageMetadata": map[string]any{"totalTokenCount": c.tokens},
	}
}

// alive tells whether c can be used at t.
func (c *explicitCache) alive(t time.Time) bool { return c.deleted.IsZero() && t.Before(c.expires) }

// end is when c stopped being billed for storage, as of t.
func (c *explicitCache) end(t time.Time) time.Time {
	end := t
	for _, e := range []time.Time{c.expires, c.deleted} {
		if !e.IsZero() && e.Before(end) {
			end = e
		}
	}
	return end
}

// Advance moves the fake's clock forward by d: caches whose TTL passes expire, and storage is
// billed over the time.
func (s *Server) Advance(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.offset += d
}

// Now is the fake's clock: the time it started, moved forward by Advance. A session given it as
// its clock sees caches expire, and idles, as the fake bills them.
func (s *Server) Now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nowLocked()
}

// nowLocked is the fake's clock. s.mu must be held.
func (s *Server) nowLocked() time.Time { return s.start.Add(s.offset) }

// CacheStats is what explicit caching has cost so far.
type CacheStats struct {
	Created     int     // caches created
	Live        int     // caches neither deleted nor expired
	InputTokens int     // billed as input at creation
	TokenHours  float64 // storage billed: tokens × hours each cache lived
}

// ExplicitCaches returns what explicit caching has cost so far, by the fake's clock.
func (s *Server) ExplicitCaches() CacheStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.nowLocked()
	var st CacheStats
	for _, c := range s.explicit {
		st.Created++
		st.InputTokens += c.tokens
		st.TokenHours += float64(c.tokens) * c.end(now).Sub(c.created).Hours()
		if c.alive(now) {
			st.Live++
		}
	}
	return st
}

// serveCaches answers the cachedContents endpoints: create (POST), list (GET), get (GET name),
// update of the TTL (PATCH name) and delete (DELETE name).
func (s *Server) serveCaches(w http.ResponseWriter, r *http.Request, id string) {
	req := Request{Method: r.Method, Path: r.URL.Path, HasAPIKey: r.Header.Get("x-goog-api-key") != "", Turn: -1}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	req.Body = body
	s.record(req)
	if err != nil {
		writeError(w, http.StatusBadRequest, "geminitest: read request body: "+err.Error())
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.nowLocked()
	switch {
	case id == "" && r.Method == http.MethodPost:
		s.createCacheLocked(w, body, now)
	case id == "" && r.Method == http.MethodGet:
		var out []map[string]any
		for _, c := range s.explicit {
			if c.alive(now) {
				out = append(out, c.wire())
			}
		}
		writeJSON(w, http.StatusOK, map[string]any{"cachedContents": out})
	default:
		c := s.cacheLocked("cachedContents/" + id)
		if c == nil || !c.alive(now) {
			writeError(w, http.StatusForbidden, "CachedContent not found (or permission denied)")
			return
		}
		switch r.Method {
		case http.MethodGet:
			writeJSON(w, http.StatusOK, c.wire())
		case http.MethodDelete:
			c.deleted = now
			writeJSON(w, http.StatusOK, map[string]any{})
		case http.MethodPatch:
			if f := s.explicitFaults.Extend; f != nil {
				writeJSON(w, f.Status, errorBody(*f))
				return
			}
			var upd struct {
				TTL        string    `json:"ttl"`
				ExpireTime time.Time `json:"expireTime"`
			}
			if err := json.Unmarshal(body, &upd); err != nil {
				writeError(w, http.StatusBadRequest, "geminitest: bad cachedContent update: "+err.Error())
				return
			}
			switch {
			case upd.TTL != "":
				ttl, err := time.ParseDuration(upd.TTL)
				if err != nil || ttl <= 0 {
					writeError(w, http.StatusBadRequest, fmt.Sprintf("geminitest: ttl %q is not a duration such as \"300s\"", upd.TTL))
					return
				}
				c.expires = now.Add(ttl)
			case !upd.ExpireTime.IsZero():
				c.expires = upd.ExpireTime
			}
			writeJSON(w, http.StatusOK, c.wire())
		default:
			writeError(w, http.StatusMethodNotAllowed, "geminitest: cachedContents/"+id+" does not answer "+r.Method)
		}
	}
}

// createCacheLocked creates a cache as the API does: refused on a model without explicit caching
// (the catalogue's explicitCaching), below the model's minimum ("too small"), or with the
// script's create fault. s.mu must be held.
func (s *Server) createCacheLocked(w http.ResponseWriter, body []byte, now time.Time) {
	if f := s.explicitFaults.Create; f != nil {
		writeJSON(w, f.Status, errorBody(*f))
		return
	}
	var generic map[string]any
	var head struct {
		Model       string `json:"model"`
		DisplayName string `json:"displayName"`
		TTL         string `json:"ttl"`
	}
	err := json.Unmarshal(body, &generic)
	if err == nil {
		err = json.Unmarshal(body, &head)
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, "geminitest: bad cachedContent: "+err.Error())
		return
	}
	model := strings.TrimPrefix(head.Model, "models/")
	if model == "" {
		writeError(w, http.StatusBadRequest, "geminitest: a cachedContent needs a model")
		return
	}
	if m, ok := catalog.Builtin().Lookup(model); ok && !m.ExplicitCaching {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("models/%s does not support explicit caching (cachedContents)", model))
		return
	}
	ttl := defaultCacheTTL
	if head.TTL != "" {
		d, err := time.ParseDuration(head.TTL)
		if err != nil || d <= 0 {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("geminitest: ttl %q is not a duration such as \"300s\"", head.TTL))
			return
		}
		ttl = d
	}
	segs := promptSegments(generic)
	tokens := EstimateTokens(promptChars(segs))
	if least := s.cache.cfg.minTokens(model); tokens < least {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("Cached content is too small. total_token_count=%d, min_total_token_count=%d", tokens, least))
		return
	}
	c := &explicitCache{name: fmt.Sprintf("cachedContents/c%d", len(s.explicit)+1), model: model, display: head.DisplayName, segs: segs, tokens: tokens, created: now, expires: now.Add(ttl)}
	s.explicit = append(s.explicit, c)
	writeJSON(w, http.StatusOK, c.wire())
}

// cacheLocked finds a cache by name, nil when none was created. s.mu must be held.
func (s *Server) cacheLocked(name string) *explicitCache {
	for _, c := range s.explicit {
		if c.name == name {
			return c
		}
	}
	return nil
}

// useCache resolves the cachedContent a generation names: its segments come before the request's,
// and its tokens are billed cached. A request naming none gets (nil, "" , 0). A cache that
// expired or was deleted is a 403, as the API answers; so is one of another model, and a request
// that also sets what the cache holds is a 400.
func (s *Server) useCache(generic map[string]any, model string) (c *explicitCache, msg string, code int) {
	name, _ := generic["cachedContent"].(string)
	if name == "" {
		return nil, "", 0
	}
	for _, k := range []string{"systemInstruction", "tools", "toolConfig"} {
		if _, ok := generic[k]; ok {
			return nil, "CachedContent can not be used with GenerateContent request setting system_instruction, tools or tool_config.\n\nProposed fix: move those values to CachedContent from GenerateContent request.", http.StatusBadRequest
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c = s.cacheLocked(name)
	if c == nil || !c.alive(s.nowLocked()) {
		return nil, "CachedContent not found (or permission denied)", http.StatusForbidden
	}
	if !catalog.Builtin().Same(c.model, model) {
		return nil, fmt.Sprintf("Model used by GenerateContent request (models/%s) and CachedContent (models/%s) has to be the same.", model, c.model), http.StatusBadRequest
	}
	return c, "", 0
}
