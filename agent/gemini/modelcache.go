package gemini

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// ModelsCacheTTL is how long what the API said about its models (models.list, models.get) is
// reused from disk: the list changes a few times a year, and reading it on every start would
// add a round trip to each session.
const ModelsCacheTTL = 24 * time.Hour

// ModelList is the API's list of models as cached on disk: no key, only what the list said,
// where from and when.
type ModelList struct {
	Fetched  time.Time        `json:"fetched"`
	Endpoint string           `json:"endpoint"`
	Models   []catalog.Listed `json:"models"`
}

// modelLimit is one models.get answer as cached on disk.
type modelLimit struct {
	Fetched  time.Time `json:"fetched"`
	Endpoint string    `json:"endpoint"`
	Model    string    `json:"model"`
	Limit    int       `json:"inputTokenLimit"`
}

// UserCacheDir is where Reprise caches what the API said: $XDG_CACHE_HOME/reprise, else the OS's
// cache directory under the HOME getenv gives. Empty when neither is known: then nothing is
// cached. getenv, not the process environment, so that tests choose it.
func UserCacheDir(getenv func(string) string) string {
	if d := getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "reprise")
	}
	switch runtime.GOOS {
	case "windows":
		if d := getenv("LocalAppData"); d != "" {
			return filepath.Join(d, "reprise")
		}
	case "darwin":
		if h := getenv("HOME"); h != "" {
			return filepath.Join(h, "Library", "Caches", "reprise")
		}
	default:
		if h := getenv("HOME"); h != "" {
			return filepath.Join(h, ".cache", "reprise")
		}
	}
	return ""
}

// Endpoint names where cfg's calls go, so that one endpoint's answers are never reused for
// another (a proxy, Vertex in another project).
func (cfg Config) Endpoint() string {
	e := cfg.BaseURL
	if e == "" {
		e = "default"
	}
	if cfg.Vertex {
		e += " vertex " + cfg.Project + " " + cfg.Location
	}
	return e
}

// ListModelsCached is the API's list of models, or its copy on disk when it is less than a day
// old (cached true) and refresh is false. cfg.CacheDir empty reads the API every time.
func ListModelsCached(ctx context.Context, cfg Config, now time.Time, refresh bool) (ModelList, bool, error) {
	endpoint := cfg.Endpoint()
	path := cachePath(cfg.CacheDir, "models", endpoint)
	if !refresh && path != "" {
		var l ModelList
		if readCache(path, &l) && fresh(l.Endpoint == endpoint, l.Fetched, now) {
			return l, true, nil
		}
	}
	client, err := New(ctx, cfg)
	if err != nil {
		return ModelList{}, false, err
	}
	listed, err := client.ListModels(ctx)
	if err != nil {
		return ModelList{}, false, err
	}
	l := ModelList{Fetched: now, Endpoint: endpoint}
	for _, m := range listed {
		l.Models = append(l.Models, catalog.Listed{ID: m.ID, DisplayName: m.DisplayName, InputTokenLimit: m.InputTokenLimit, OutputTokenLimit: m.OutputTokenLimit})
	}
	writeCache(path, l) // a cache that cannot be written is read again next time
	return l, false, nil
}

// cachedLimit is the model's input limit as the API last said it, from the cached list or an
// earlier models.get, when that is less than a day old.
func (c *Client) cachedLimit(now time.Time) (int, bool) {
	var l ModelList
	if p := cachePath(c.cacheDir, "models", c.endpoint); p != "" && readCache(p, &l) && fresh(l.Endpoint == c.endpoint, l.Fetched, now) {
		for _, m := range l.Models {
			if m.ID == c.model && m.InputTokenLimit > 0 {
				return m.InputTokenLimit, true
			}
		}
	}
	var g modelLimit
	if p := cachePath(c.cacheDir, "model", c.endpoint+"\x00"+c.model); p != "" && readCache(p, &g) &&
		fresh(g.Endpoint == c.endpoint && g.Model == c.model, g.Fetched, now) && g.Limit > 0 {
		return g.Limit, true
	}
	return 0, false
}

// keepLimit caches one models.get answer.
func (c *Client) keepLimit(limit int, now time.Time) {
	writeCache(cachePath(c.cacheDir, "model", c.endpoint+"\x00"+c.model),
		modelLimit{Fetched: now, Endpoint: c.endpoint, Model: c.model, Limit: limit})
}

func fresh(same bool, fetched, now time.Time) bool {
	return same && !now.Before(fetched) && now.Sub(fetched) <= ModelsCacheTTL
}

// cachePath names one cached answer: a kind and a hash of what it is for (the endpoint, and
// the model for models.get). Empty when there is no cache directory.
func cachePath(dir, kind, key string) string {
	if dir == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(dir, kind+"-"+hex.EncodeToString(sum[:6])+".json")
}

func readCache(path string, v any) bool {
	b, err := os.ReadFile(path)
	return err == nil && json.Unmarshal(b, v) == nil
}

// writeCache replaces path whole (a temporary file renamed over it), so that a reader never sees
// half a file; any failure leaves the cache as it was.
func writeCache(path string, v any) {
	if path == "" {
		return
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil || os.MkdirAll(filepath.Dir(path), 0o700) != nil {
		return
	}
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*")
	if err != nil {
		return
	}
	_, werr := f.Write(b)
	if cerr := f.Close(); werr != nil || cerr != nil || os.Rename(f.Name(), path) != nil {
		_ = os.Remove(f.Name())
	}
}
