package geminitest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFlexScript: a script sheds Flex requests with 429 or 503 and nothing else.
func TestFlexScript(t *testing.T) {
	tests := []struct {
		json, wantErr string
	}{
		{`{"flex": {"shed": 2}, "turns": []}`, ""},
		{`{"flex": {"shed": 1, "status": 503}, "turns": []}`, ""},
		{`{"flex": {"shed": -1}, "turns": []}`, "negative flex shed"},
		{`{"flex": {"shed": 1, "status": 500}, "turns": []}`, "neither 429 nor 503"},
	}
	for _, tt := range tests {
		path := filepath.Join(t.TempDir(), "s.json")
		if err := os.WriteFile(path, []byte(tt.json), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := LoadScript(path)
		if (tt.wantErr == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("%s: %v, want %q", tt.json, err, tt.wantErr)
		}
	}
	if f := (Flex{}).shedFault("gemini-3.8-flash"); f.Status != 429 || !strings.Contains(f.Message, "No capacity available for model gemini-3.8-flash") {
		t.Errorf("default shed fault %+v", f)
	}
}
