// Package gemini adapts the google.golang.org/genai client to what the agent loop needs: one
// call that streams text and thought deltas, merges the streamed chunks into a single model
// Content without losing thought signatures, reports usage, and retries transient failures
// itself with backoff (honouring the API's RetryInfo), turning the rest into messages a user can
// act on.
package gemini

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// Retry defaults: five attempts in all, waits from about 1s doubling up to 30s.
const (
	DefaultMaxAttempts = 5
	DefaultBaseDelay   = time.Second
	DefaultMaxDelay    = 30 * time.Second
)

// ErrNoAPIKey is returned by New when no key is configured and Vertex AI is not selected.
var ErrNoAPIKey = errors.New("no Gemini API key: set GEMINI_API_KEY (or GOOGLE_API_KEY)")

// Config says which model to call and how hard to retry. The zero value of every field but
// APIKey has a sensible default.
type Config struct {
	APIKey string
	Model  string // default: the model catalogue's default
	// BaseURL replaces the API's address (GOOGLE_GEMINI_BASE_URL; with Vertex, else
	// GOOGLE_VERTEX_BASE_URL): a proxy, or the fake in tests. Empty leaves the SDK's default.
	// The key goes there: see CheckBaseURL.
	BaseURL    string
	HTTPClient *http.Client // optional

	// Vertex selects Vertex AI (GOOGLE_GENAI_USE_VERTEXAI); the key is then optional and
	// Project and Location (GOOGLE_CLOUD_PROJECT, GOOGLE_CLOUD_LOCATION) say where to call.
	Vertex            bool
	Project, Location string

	MaxAttempts int           // attempts per Generate, first included; default 5
	BaseDelay   time.Duration // first backoff wait, doubled each retry; default 1s
	MaxDelay    time.Duration // cap on any wait, RetryInfo's included; default 30s

	// CacheDir keeps what the API said about its models (list, input limits) for a day
	// (ModelsCacheTTL). Empty: asked every time. ConfigFromEnv sets UserCacheDir.
	CacheDir string
}

// ConfigFromEnv reads the variables users of the Gemini CLI and SDKs already set. getenv is
// os.Getenv in production and a map lookup in tests.
func ConfigFromEnv(getenv func(string) string) Config {
	key := getenv("GEMINI_API_KEY")
	if key == "" {
		key = getenv("GOOGLE_API_KEY")
	}
	vertex := strings.ToLower(getenv("GOOGLE_GENAI_USE_VERTEXAI"))
	cfg := Config{
		APIKey:   key,
		BaseURL:  getenv("GOOGLE_GEMINI_BASE_URL"),
		Vertex:   vertex == "1" || vertex == "true",
		Project:  getenv("GOOGLE_CLOUD_PROJECT"),
		Location: getenv("GOOGLE_CLOUD_LOCATION"),
		CacheDir: UserCacheDir(getenv),
	}
	if cfg.Vertex && cfg.BaseURL == "" {
		// The SDK would read it from the process environment itself; reading it here too puts
		// the address credentials go to in one place, where CheckBaseURL sees it.
		cfg.BaseURL = getenv("GOOGLE_VERTEX_BASE_URL")
	}
	return cfg
}

// Client calls one model. It is safe for concurrent use.
type Client struct {
	genai               *genai.Client
	model               string
	key                 string // only to scrub it from error messages
	maxAttempts         int
	baseDelay, maxDelay time.Duration
	cacheDir, endpoint  string // where models.get answers are cached, and for which endpoint
}

// New checks cfg and builds the genai client. The SDK's own HTTP retries stay off: Generate
// retries, so that it can report each retry and discard what a failed stream already showed.
func New(ctx context.Context, cfg Config) (*Client, error) {
	if cfg.APIKey == "" && !cfg.Vertex {
		return nil, ErrNoAPIKey
	}
	// The version is the catalogue's, never the SDK's default (v1 since genai v1.78.0, where
	// cachedContents does not exist) nor GOOGLE_GENAI_API_VERSION's.
	api := catalog.Builtin().API
	cc := &genai.ClientConfig{
		Backend:     genai.BackendGeminiAPI,
		APIKey:      cfg.APIKey,
		HTTPClient:  cfg.HTTPClient,
		HTTPOptions: genai.HTTPOptions{BaseURL: cfg.BaseURL, APIVersion: api.Version},
	}
	if cfg.Vertex {
		cc.Backend, cc.HTTPOptions.APIVersion = genai.BackendVertexAI, api.VertexVersion
		cc.Project, cc.Location = cfg.Project, cfg.Location
		if cfg.Project != "" || cfg.Location != "" {
			// With a project, Vertex authenticates with Application Default Credentials; a key
			// is only for express mode, and the SDK refuses some mixes of the two.
			cc.APIKey = ""
		}
	}
	gc, err := genai.NewClient(ctx, cc)
	if err != nil {
		// The SDK prints its whole ClientConfig, key included, in some of its errors.
		return nil, fmt.Errorf("create Gemini client: %w", scrub(err, cfg.APIKey))
	}
	c := &Client{
		genai:       gc,
		model:       cmpOr(cfg.Model, catalog.Builtin().DefaultModel()),
		key:         cfg.APIKey,
		maxAttempts: cmpOr(cfg.MaxAttempts, DefaultMaxAttempts),
		baseDelay:   cmpOr(cfg.BaseDelay, DefaultBaseDelay),
		maxDelay:    cmpOr(cfg.MaxDelay, DefaultMaxDelay),
		cacheDir:    cfg.CacheDir,
		endpoint:    cfg.Endpoint(),
	}
	return c, nil
}

// cmpOr is cmp.Or where only a positive value counts as set: a negative MaxAttempts or delay
// gets the default rather than disabling calls or retries.
func cmpOr[T int | time.Duration | string](v, def T) T {
	var zero T
	if v <= zero {
		return def
	}
	return v
}

// Model is the model name requests go to, for display and for usage accounting.
func (c *Client) Model() string {
	return c.model
}

// InputTokenLimit is the model's context window, which the context policy divides up. When the
// API cannot say (an error, or 0), it returns the model catalogue's figure for the model
// (catalog.FallbackInputTokenLimit for a model it does not know) along with the error, so the
// caller can log it and carry on.
func (c *Client) InputTokenLimit(ctx context.Context) (int, error) {
	fallback := catalog.Builtin().InputLimit(c.model)
	now := time.Now()
	if limit, ok := c.cachedLimit(now); ok {
		return limit, nil
	}
	m, err := c.genai.Models.Get(ctx, c.model, nil)
	if err != nil {
		return fallback, fmt.Errorf("read the input token limit of %s: %w", c.model, c.describe(ctx, err))
	}
	if m.InputTokenLimit <= 0 {
		return fallback, fmt.Errorf("read the input token limit of %s: the API reported %d", c.model, m.InputTokenLimit)
	}
	c.keepLimit(int(m.InputTokenLimit), now)
	return int(m.InputTokenLimit), nil
}

// describe words the error of a single call that is not retried.
func (c *Client) describe(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return c.final(classify(err, c.key), 1)
}

// final is the error a call ends with after attempts attempts, the last one being f. A 404 is
// the model itself missing (retired, or never served to this key): never retried, it names the
// model and what the catalogue says to use instead, in one line.
func (c *Client) final(f failure, attempts int) *Error {
	e := f.giveUp(attempts)
	if e.Status != 404 {
		return e
	}
	cat := catalog.Builtin()
	instead := "reprise models lists the models this key can use"
	if m, ok := cat.Lookup(c.model); ok && m.Replacement != "" {
		instead = fmt.Sprintf("use %s, the replacement the model catalogue of %s names", m.Replacement, cat.CurrentAsOf)
		if m.Shutdown != "" {
			instead = fmt.Sprintf("it was shut down on %s; %s", m.Shutdown, instead)
		}
	}
	e.Message = fmt.Sprintf("model %s is not available (%d %s: %s): %s", c.model, f.status, f.code, f.msg, instead)
	return e
}
