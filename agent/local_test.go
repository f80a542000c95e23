package agent

import (
	"context"
	"iter"
	"strings"
	"testing"
	"time"

	"github.com/reprise-dev/reprise/agent/gemini"
	"github.com/reprise-dev/reprise/contextwin"
)

// localModel is a model on the user's machine (as agent/openai's client on a local server says)
// that takes, by the clock it reports, a local model's time: its prompt at 400 tokens a second,
// its output at 40.
type localModel struct{ Model }

func (localModel) Local() bool { return true }

func (m localModel) Generate(ctx context.Context, req *gemini.Request) iter.Seq2[gemini.Chunk, error] {
	return func(yield func(gemini.Chunk, error) bool) {
		for ch, err := range m.Model.Generate(ctx, req) {
			if d := ch.Done; d != nil {
				u := &d.Usage
				u.Wait = time.Duration(u.Prompt-u.Cached) * time.Second / 400
				u.Gen = time.Duration(u.Candidates+u.Thoughts) * time.Second / 40
			}
			if !yield(ch, err) {
				return
			}
		}
	}
}

// TestLocalModelWeighedInTime: a model the catalogue does not price, on a local server, is free:
// its calls cost $0 known (not unknown), the figures show its time, the clearing is weighed at
// the pace the session measured, in seconds, with no cache, and a resumed session counts the
// same.
func TestLocalModelWeighedInTime(t *testing.T) {
	p := contextwin.DefaultPolicy()
	p.ContextBudget, p.KeepRecentTurns = 8000, 2
	turns := append(readTurns(12), textTurn("read them all"), summaryTurn(summaryText))
	f, st, log := saved(t, fixtureOpts{policy: p, files: notes(12, 2400), clearing: true, stream: true, model: "qwen3-local-test",
		wrap: func(m Model) Model { return localModel{m} }}, turns...)
	evs, err := f.run(t.Context(), "Read every note.")
	if err != nil {
		t.Fatal(err)
	}
	end := lastEnd(t, evs)
	tot := end.Totals
	if end.StopReason != StopEndTurn || tot.Local != tot.Calls || tot.Calls == 0 || tot.Cost != 0 || !tot.CostKnown() {
		t.Fatalf("stop %s, totals %+v", end.StopReason, tot)
	}
	if tot.Time.PromptMillis == 0 || tot.Time.OutputMillis == 0 || tot.Time.Millis != tot.Time.PromptMillis+tot.Time.OutputMillis {
		t.Errorf("time %+v", tot.Time)
	}
	if text := tot.CostText(); text != "local · "+contextwin.Elapsed(tot.Time.Millis) {
		t.Errorf("cost text %q", text)
	}
	var decisions []string
	for _, e := range ofType(evs, EventUsage) {
		if e.Usage.CostUnknown || !e.Usage.Local {
			t.Fatalf("usage: unknown %v, local %v", e.Usage.CostUnknown, e.Usage.Local)
		}
		if d := e.Usage.Decision; d != "" {
			decisions = append(decisions, d)
		}
	}
	cleared := false
	for _, d := range decisions {
		if strings.Contains(d, "$") {
			t.Errorf("a decision in dollars: %q", d)
		}
		cleared = cleared || strings.HasPrefix(d, "cleared ") && strings.Contains(d, " s, the next")
	}
	if !cleared {
		t.Errorf("no clearing weighed in seconds: %q", decisions)
	}
	// The pace measured is the one the model took (400 and 40 tokens a second, ms rounded down);
	// the engine weighs at it, in seconds per million tokens, with no cache.
	prices, cached, cacheMin, inTime := f.s.bill.forPlan()
	pace := tot.Time.Pace(contextwin.Pace{Prompt: 1, Output: 1})
	if !inTime || cached != 0 || cacheMin != noCache || pace.Prompt < 400 || pace.Prompt > 402 || pace.Output < 40 || pace.Output > 42 {
		t.Errorf("forPlan: inTime %v, cached %d, cacheMin %d; pace %+v", inTime, cached, cacheMin, pace)
	}
	if prices != pace.Prices() || prices.CachedInput != prices.Input {
		t.Errorf("prices %+v, want %+v", prices, pace.Prices())
	}

	s := resumeFrom(t, f, st, log)
	if got := s.bill.sum(); got.Local != tot.Local || got.Time != tot.Time || got.CostText() != tot.CostText() {
		t.Errorf("resumed totals %+v, want %+v", got, tot)
	}
}
