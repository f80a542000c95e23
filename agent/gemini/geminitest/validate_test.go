package geminitest

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/genai"
)

// TestThinkingValidation: the fake answers thinking configurations as the API does, by the
// catalogue's row of the model: a budget beside a level, or any budget on Gemini 4, is a 400; so
// is a level the model does not take. What was sent is recorded.
func TestThinkingValidation(t *testing.T) {
	budget := func(n int32) *int32 { return &n }
	tests := []struct {
		model string
		tc    genai.ThinkingConfig
		err   string // "" = served
	}{
		{"gemini-3.8-flash", genai.ThinkingConfig{ThinkingLevel: genai.ThinkingLevelLow}, ""},
		{"gemini-3.8-flash", genai.ThinkingConfig{ThinkingLevel: genai.ThinkingLevelLow, ThinkingBudget: budget(1024)}, "thinking_budget and thinking_level are not supported together"},
		{"gemini-3.8-flash", genai.ThinkingConfig{ThinkingLevel: genai.ThinkingLevelMinimal}, "thinking_level MINIMAL is not supported by gemini-3.8-flash; supported: LOW, MEDIUM, HIGH"},
		{"gemini-4-argon", genai.ThinkingConfig{ThinkingBudget: budget(1024)}, "thinking_budget is not supported by gemini-4-argon"},
		{"gemini-4-hydrogen", genai.ThinkingConfig{ThinkingLevel: "XHIGH"}, ""},
		{"gemini-2.5-flash-lite", genai.ThinkingConfig{ThinkingBudget: budget(1024)}, ""},
		{"gemini-2.5-flash-lite", genai.ThinkingConfig{ThinkingLevel: genai.ThinkingLevelLow}, "thinking_level is not supported by gemini-2.5-flash-lite"},
		{"acme-model", genai.ThinkingConfig{ThinkingLevel: genai.ThinkingLevelHigh}, ""},
	}
	for _, tt := range tests {
		srv := New(Script{Turns: []Turn{{Parts: []Part{{Text: "ok"}}}}})
		cfg := noContinuation()
		tc := tt.tc
		cfg.ThinkingConfig = &tc
		_, err := client(t, srv).Models.GenerateContent(t.Context(), tt.model, userText("hi"), cfg)
		var apiErr genai.APIError
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("%s %+v: %v", tt.model, tt.tc, err)
		case tt.err != "" && (!errors.As(err, &apiErr) || apiErr.Code != 400 || !strings.Contains(apiErr.Message, tt.err)):
			t.Errorf("%s %+v: err = %v, want a 400 saying %q", tt.model, tt.tc, err, tt.err)
		case tt.err != "" && srv.Pending() != 1:
			t.Errorf("%s %+v: a rejected request consumed a turn", tt.model, tt.tc)
		}
		r := srv.Requests()[0]
		if r.ThinkingLevel != string(tt.tc.ThinkingLevel) || (r.ThinkingBudget == nil) != (tt.tc.ThinkingBudget == nil) {
			t.Errorf("%s: recorded level %q budget %v", tt.model, r.ThinkingLevel, r.ThinkingBudget)
		}
		srv.Close()
	}
}

// TestThoughtSignaturesRequired: on a 3.x or 4 model, a function call of the current turn sent
// back without the signature the fake gave it is a 400, as the API answers; with it, or on a 2.5
// model, or once a newer user message starts another turn, it is served.
func TestThoughtSignaturesRequired(t *testing.T) {
	call := Turn{Parts: []Part{{FunctionCall: &FunctionCall{Name: "read_file", Args: map[string]any{"path": "a.go"}}, ThoughtSignature: "c2lnLTE="}}}
	history := func(sig []byte, more ...*genai.Content) []*genai.Content {
		fc := &genai.Part{FunctionCall: &genai.FunctionCall{Name: "read_file", Args: map[string]any{"path": "a.go"}}, ThoughtSignature: sig}
		h := []*genai.Content{
			genai.NewContentFromText("read a.go", genai.RoleUser),
			{Role: genai.RoleModel, Parts: []*genai.Part{fc}},
			{Role: genai.RoleUser, Parts: []*genai.Part{genai.NewPartFromFunctionResponse("read_file", map[string]any{"output": "package a"})}},
		}
		return append(h, more...)
	}
	for _, tt := range []struct {
		name     string
		model    string
		contents []*genai.Content
		err      bool
	}{
		{"dropped", "gemini-3.8-flash", history(nil), true},
		{"changed", "gemini-4-argon", history([]byte("other")), true},
		{"kept", "gemini-3.8-flash", history([]byte("sig-1")), false},
		{"2.5 does not check", "gemini-2.5-flash-lite", history(nil), false},
		{"an earlier turn is not checked", "gemini-3.8-flash", history(nil, genai.NewContentFromText("and now?", genai.RoleModel), genai.NewContentFromText("thanks; now b.go", genai.RoleUser)), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := New(Script{Turns: []Turn{call, {Parts: []Part{{Text: "done"}}}}})
			defer srv.Close()
			c := client(t, srv)
			if _, err := c.Models.GenerateContent(t.Context(), tt.model, userText("read a.go"), noContinuation()); err != nil {
				t.Fatal(err)
			}
			_, err := c.Models.GenerateContent(t.Context(), tt.model, tt.contents, noContinuation())
			var apiErr genai.APIError
			if tt.err != (err != nil) {
				t.Fatalf("err = %v, want an error: %v", err, tt.err)
			}
			if tt.err && (!errors.As(err, &apiErr) || apiErr.Code != 400 || !strings.Contains(apiErr.Message, "missing a thought_signature") || !strings.Contains(apiErr.Message, "read_file")) {
				t.Errorf("err = %v, want the API's 400 about the thought signature", err)
			}
		})
	}
}
