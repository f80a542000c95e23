package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Findings are what `reprise doctor cache` measured of the API with the user's own key, by model:
// facts Google does not document (whether a read of an explicit cache also gets implicit hits),
// or that the catalogue states from documentation the API may not follow (the cache minimum).
// Each carries its date; the catalogue's rows are its own otherwise.
type Findings struct {
	Models map[string]Finding `json:"models"`
}

// Finding is one model's measurements.
type Finding struct {
	// Measured is when (RFC 3339).
	Measured time.Time `json:"measured"`
	// CacheMinTokens is the smallest shared prefix, of those tried, the API reported cached; 0
	// when none was (NoImplicit) or when it agrees with the catalogue (CatalogueHolds).
	CacheMinTokens int  `json:"cacheMinTokens,omitempty"`
	CatalogueHolds bool `json:"catalogueHolds,omitempty"`
	NoImplicit     bool `json:"noImplicit,omitempty"`
	// LastMissed is the largest shared prefix tried that was not reported cached.
	LastMissed int `json:"lastMissed,omitempty"`
	// HitRate is reported ÷ expected cached tokens on a growing prefix past the minimum, over
	// Calls calls.
	HitRate float64 `json:"hitRate"`
	Calls   int     `json:"calls"`
	// OverExplicit: a request reading an explicit cache also got implicit hits on the rest; nil
	// when it could not be told (no explicit caching, or every try missed).
	OverExplicit *bool `json:"overExplicit,omitempty"`
	// What measuring cost: requests made, and dollars at the catalogue's prices.
	Requests int     `json:"requests"`
	Cost     float64 `json:"cost"`
}

// FindingsFile is the findings' file name in the user's state directory.
const FindingsFile = "cache-findings.json"

// LoadFindings reads the findings saved in dir; none (no file) is not an error.
func LoadFindings(dir string) (Findings, error) {
	data, err := os.ReadFile(filepath.Join(dir, FindingsFile))
	if errors.Is(err, fs.ErrNotExist) {
		return Findings{}, nil
	}
	if err != nil {
		return Findings{}, err
	}
	var f Findings
	if err := json.Unmarshal(data, &f); err != nil {
		return Findings{}, fmt.Errorf("%s: %w", filepath.Join(dir, FindingsFile), err)
	}
	return f, nil
}

// Save writes f to dir, replacing what was there (written whole to a temporary file, then
// renamed: a crash leaves the old findings or the new).
func (f Findings) Save(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, FindingsFile+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, FindingsFile))
}

// WithFindings returns c with f's measurements in its rows: a cache minimum the API did not
// follow, and whether a read of an explicit cache gets implicit hits too. A model c lacks is left
// out: a finding does not add a row.
func (c *Catalog) WithFindings(f Findings) *Catalog {
	out := *c
	out.Rows = slices.Clone(c.Rows)
	for _, id := range slices.Sorted(maps.Keys(f.Models)) {
		i := slices.IndexFunc(out.Rows, func(m Model) bool { return m.ID == id })
		if i < 0 {
			continue
		}
		m, row := f.Models[id], &out.Rows[i]
		if m.CacheMinTokens > 0 && !m.CatalogueHolds {
			row.CacheMinTokens = m.CacheMinTokens
		}
		if m.OverExplicit != nil {
			row.OverExplicit = *m.OverExplicit
		}
	}
	return &out
}
