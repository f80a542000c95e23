package catalog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestFindingsRoundTripAndOverlay(t *testing.T) {
	dir := t.TempDir()
	if f, err := LoadFindings(dir); err != nil || len(f.Models) != 0 {
		t.Fatalf("no file: %+v, %v", f, err)
	}
	yes := true
	f := Findings{Models: map[string]Finding{
		"gemini-3.8-flash":       {Measured: time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC), CacheMinTokens: 2048, HitRate: 0.9, Calls: 6, OverExplicit: &yes, Requests: 20, Cost: 0.03},
		"gemini-3.1-pro-preview": {CacheMinTokens: 4096, CatalogueHolds: true},
		"not-a-model":            {CacheMinTokens: 1},
	}}
	if err := f.Save(dir); err != nil {
		t.Fatal(err)
	}
	back, err := LoadFindings(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(f, back); diff != "" {
		t.Errorf("round trip (-saved +read):\n%s", diff)
	}
	base := Builtin()
	c := base.WithFindings(back)
	if c.CacheMin("gemini-3.8-flash") != 2048 || !c.OverExplicit("gemini-3.8-flash") {
		t.Errorf("measured row: minimum %d, over explicit %v", c.CacheMin("gemini-3.8-flash"), c.OverExplicit("gemini-3.8-flash"))
	}
	if c.CacheMin("gemini-3.1-pro-preview") != base.CacheMin("gemini-3.1-pro-preview") || len(c.Rows) != len(base.Rows) {
		t.Error("a finding that agrees with the catalogue, or of a model it lacks, changed it")
	}
	if base.CacheMin("gemini-3.8-flash") != 4096 || base.OverExplicit("gemini-3.8-flash") {
		t.Error("WithFindings changed the catalogue it was given")
	}
	if err := os.WriteFile(filepath.Join(dir, FindingsFile), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadFindings(dir); err == nil || !strings.Contains(err.Error(), FindingsFile) {
		t.Errorf("a malformed file: %v", err)
	}
}
