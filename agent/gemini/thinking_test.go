package gemini

import (
	"strings"
	"testing"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
)

// TestThinkingSent: a level goes out as thinkingConfig.thinkingLevel, a budget as
// thinkingBudget, never both; nothing set sends no thinking configuration.
func TestThinkingSent(t *testing.T) {
	budget := 8192
	tests := []struct {
		name     string
		model    string
		thinking Thinking
		level    string
		budget   bool
	}{
		{"none", "gemini-3.8-flash", Thinking{}, "", false},
		{"level", "gemini-3.8-flash", Thinking{Level: "LOW"}, "LOW", false},
		{"budget", "gemini-2.5-flash-lite", Thinking{Budget: &budget}, "", true},
		{"both: the level wins", "gemini-3.8-flash", Thinking{Level: "HIGH", Budget: &budget}, "HIGH", false},
	}
	for _, tt := range tests {
		for _, mode := range modes {
			t.Run(tt.name+"/"+mode.name, func(t *testing.T) {
				srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{{Parts: []geminitest.Part{{Text: "ok"}}}}})
				defer srv.Close()
				c := newClient(t, srv, func(c *Config) { c.Model = tt.model })
				if got := run(t.Context(), c, &Request{Contents: userTurn("hi"), Stream: mode.stream, Thinking: tt.thinking}); got.err != nil {
					t.Fatal(got.err)
				}
				r := srv.Requests()[0]
				if r.ThinkingLevel != tt.level || (r.ThinkingBudget != nil) != tt.budget || tt.budget && *r.ThinkingBudget != budget {
					t.Errorf("sent level %q, budget %v; want %q, %v", r.ThinkingLevel, r.ThinkingBudget, tt.level, tt.budget)
				}
				if tt.thinking == (Thinking{}) && strings.Contains(string(r.Body), "thinkingConfig") {
					t.Errorf("a thinking configuration was sent: %s", r.Body)
				}
			})
		}
	}
}
