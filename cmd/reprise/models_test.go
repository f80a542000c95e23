package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
)

// TestModelsCommand: `reprise models` joins the API's list with the catalogue: a model the
// catalogue lacks is listed (price unknown), retired ones only with --all, models that cannot
// generate content not at all. The list is cached on disk for a day, without the key; --refresh
// reads it again.
func TestModelsCommand(t *testing.T) {
	srv := geminitest.New(geminitest.Script{Models: []string{"gemini-3.8-flash", "gemini-4-argon", "gemini-9-experimental", "text-embedding-004", "gemini-2.5-flash"}})
	defer srv.Close()
	cache := t.TempDir()
	vars := env(map[string]string{"GEMINI_API_KEY": "secret-key-123", "GOOGLE_GEMINI_BASE_URL": srv.URL(), "XDG_CACHE_HOME": cache})
	lists := func() int {
		n := 0
		for _, r := range srv.Requests() {
			if r.Path == "/v1beta/models" {
				n++
			}
		}
		return n
	}
	code, out, errOut := runMain(t, []string{"models"}, vars)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"gemini-3.8-flash       ga (default)          1M       $0.75 · $0.075 · $3.75  4,096      yes, $0.50/h    low [medium] high",
		"gemini-4-argon         ga                    1M       $4.00 · $0.20 · $20.00  4,096      no              low medium [high]",
		"gemini-9-experimental  not in the catalogue  1M       unknown",
		"The API's list read just now.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, absent := range []string{"gemini-2.5-flash ", "text-embedding-004", "gemini-4-hydrogen"} {
		if strings.Contains(out, absent) {
			t.Errorf("output lists %q:\n%s", absent, out)
		}
	}
	if lists() != 1 {
		t.Fatalf("%d list requests", lists())
	}

	code, out, _ = runMain(t, []string{"models", "--all"}, vars)
	if code != 0 || !strings.Contains(out, "gemini-2.5-flash        retired → gemini-3.5-flash-lite") || !strings.Contains(out, "gemini-4-hydrogen       ga, not listed for this key") {
		t.Errorf("--all:\n%s", out)
	}
	if lists() != 1 || !strings.Contains(out, "cached for a day") {
		t.Errorf("the second listing read the API again (%d requests) or does not say it is cached:\n%s", lists(), out)
	}
	files, _ := filepath.Glob(filepath.Join(cache, "reprise", "models-*.json"))
	if len(files) != 1 {
		t.Fatalf("cache files %v", files)
	}
	if b, _ := os.ReadFile(files[0]); strings.Contains(string(b), "secret-key-123") || !strings.Contains(string(b), "gemini-9-experimental") {
		t.Errorf("cache file:\n%s", b)
	}
	if code, _, _ := runMain(t, []string{"models", "--refresh"}, vars); code != 0 || lists() != 2 {
		t.Errorf("--refresh: exit %d, %d list requests; want the API read again", code, lists())
	}
	if code, _, errOut := runMain(t, []string{"models"}, env(map[string]string{"XDG_CACHE_HOME": t.TempDir()})); code != 1 || !strings.Contains(errOut, "GEMINI_API_KEY") {
		t.Errorf("without a key: exit %d, %q", code, errOut)
	}
}
