package geminitest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLoadScript(t *testing.T) {
	got, err := LoadScript(filepath.Join("testdata", "example.json"))
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	want := Script{
		InputTokenLimit: 20000,
		Cache:           Cache{MinTokens: 2048},
		Turns: []Turn{
			{Chunks: 3, Parts: []Part{
				{Text: "Let me look at the tests first.", Thought: true},
				{FunctionCall: &FunctionCall{Name: "read_file", Args: map[string]any{"path": "main_test.go"}}, ThoughtSignature: "c2lnLTE="},
			}},
			{Fault: &Fault{Status: 429, Message: "Resource has been exhausted", RetryDelay: "0.05s"}},
			{Match: "Summarize the conversation", Parts: []Part{{Text: "## Goal\nFix the failing test."}}},
			{Parts: []Part{{Text: "The test passes now."}}, Usage: &Usage{Prompt: 1200, Cached: 800, Candidates: 6, Thoughts: 40}},
		},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("script (-got +want):\n%s", diff)
	}
}

func TestLoadScriptErrors(t *testing.T) {
	tests := []struct {
		name, json, want string
	}{
		{"unknown field", `{"turns":[{"part":[]}]}`, `unknown field "part"`},
		{"signature not base64", `{"turns":[{"parts":[{"text":"a","thoughtSignature":"sig-1"}]}]}`, "turn 0: part 0: thoughtSignature"},
		{"call without name", `{"turns":[{},{"parts":[{"functionCall":{"args":{}}}]}]}`, "turn 1: part 0: functionCall without a name"},
		{"status not an error", `{"turns":[{"fault":{"status":200}}]}`, "fault status 200"},
		{"bad retry delay", `{"turns":[{"fault":{"status":429,"retryDelay":"soon"}}]}`, "fault retryDelay"},
		{"negative chunks", `{"turns":[{"chunks":-1}]}`, "negative chunks"},
		{"negative cache minimum", `{"cache":{"minTokens":-1},"turns":[]}`, "negative cache minTokens"},
		{"miss rate over 1", `{"cache":{"missRate":1.5},"turns":[]}`, "cache missRate 1.5"},
		{"empty dead zone", `{"cache":{"deadZone":{"from":17000,"to":9000}},"turns":[]}`, "cache deadZone from 17000 to 9000"},
		{"create fault without a status", `{"cache":{"explicit":{"create":{"message":"x"}}},"turns":[]}`, "cache explicit create fault status 0"},
		{"unknown cache field", `{"cache":{"min":1},"turns":[]}`, `unknown field "min"`},
		{"not JSON", `turns:`, "invalid character"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "script.json")
			if err := os.WriteFile(path, []byte(tt.json), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadScript(path)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
	if _, err := LoadScript(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Errorf("loading a missing file succeeded")
	}
}

func TestInvalidTurnPanics(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "turn 0: part 0: thoughtSignature") {
			t.Errorf("recovered %v, want a panic naming the turn", r)
		}
	}()
	New(Script{Turns: []Turn{{Parts: []Part{{ThoughtSignature: "not base64!"}}}}}).Close()
}
