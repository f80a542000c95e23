package agent

import (
	"testing"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/contextwin"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// TestThinkingOnEveryRequest: the session's thinking setting goes with every request, the
// summarizer's included, as a level on a model that takes levels and as a budget on 2.5; never
// both. Thought tokens count as output and are kept apart.
func TestThinkingOnEveryRequest(t *testing.T) {
	p := contextwin.DefaultPolicy()
	p.ContextBudget, p.KeepRecentTurns = 5000, 1
	for _, tt := range []struct {
		model, setting string
		level          string
		budget         int
	}{
		{"gemini-3.8-flash", "low", "LOW", 0},
		{"gemini-2.5-flash-lite", "high", "", 24576},
	} {
		t.Run(tt.model, func(t *testing.T) {
			choice, err := catalog.Builtin().Thinking(tt.model, tt.setting)
			if err != nil {
				t.Fatal(err)
			}
			turns := append(readTurns(12), textTurn("read them all"), summaryTurn(summaryText), summaryTurn(summaryText))
			turns[0].Usage = &geminitest.Usage{Prompt: 1000, Candidates: 10, Thoughts: 90}
			f := newFixture(t, fixtureOpts{model: tt.model, policy: p, files: notes(12, 1600), thinking: choice}, turns...)
			evs, err := f.run(t.Context(), "Read every note.")
			if err != nil {
				t.Fatal(err)
			}
			end := lastEnd(t, evs)
			if end.StopReason != StopEndTurn || len(summaryRequests(f.srv)) == 0 {
				t.Fatalf("stop %s, %d summaries; want a compaction", end.StopReason, len(summaryRequests(f.srv)))
			}
			for i, r := range f.srv.Requests() {
				if r.Method != "POST" {
					continue
				}
				gotBudget := 0
				if r.ThinkingBudget != nil {
					gotBudget = *r.ThinkingBudget
				}
				if r.ThinkingLevel != tt.level || gotBudget != tt.budget {
					t.Errorf("request %d: level %q, budget %d; want %q, %d", i, r.ThinkingLevel, gotBudget, tt.level, tt.budget)
				}
			}
			if end.Totals.ThoughtTokens < 90 || end.Totals.OutputTokens < end.Totals.ThoughtTokens+10 {
				t.Errorf("totals %+v: thoughts not counted as output", end.Totals)
			}
		})
	}
}
