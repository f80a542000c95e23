package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/contextwin"
)

func TestStatusLine(t *testing.T) {
	tests := []struct {
		end  agent.TurnEnd
		want string
	}{
		{
			agent.TurnEnd{StopReason: agent.StopEndTurn, Calls: 13, Totals: contextwin.Totals{InputTokens: 46704, CachedTokens: 39066, OutputTokens: 520, Cost: 0.00483}},
			"status completed · 13 model calls · 46,704 input tokens (39,066 cached) · 520 output · $0.0048",
		},
		{
			agent.TurnEnd{StopReason: agent.StopCapped, Calls: 2, Totals: contextwin.Totals{InputTokens: 900, OutputTokens: 12, Cost: 0.0003}},
			"status capped · 2 model calls · 900 input tokens (0 cached) · 12 output · $0.0003",
		},
		{
			agent.TurnEnd{StopReason: agent.StopEndTurn, Calls: 3, Totals: contextwin.Totals{InputTokens: 30000, CachedTokens: 11600, OutputTokens: 90, Cost: 0.0152, CacheExpected: 20000, CacheReported: 11600}},
			"status completed · 3 model calls · 30,000 input tokens (11,600 cached) · 90 output · $0.0152 · cache: 58 % of the expected hits",
		},
		{
			agent.TurnEnd{StopReason: agent.StopEndTurn, Calls: 5, Totals: contextwin.Totals{InputTokens: 20000, OutputTokens: 500, Cost: 0.0150,
				Summaries: contextwin.SummaryTotals{CallTotals: contextwin.CallTotals{Calls: 1, InputTokens: 2355, OutputTokens: 300, Cost: 0.0012}, Flex: 1}}},
			"status completed · 5 model calls · 20,000 input tokens (0 cached) · 500 output · $0.0150 · of which 1 summary $0.0012 (2,355 input, 0 cached; 1 on Flex)",
		},
	}
	var got, want []string
	for _, tt := range tests {
		got = append(got, status(&tt.end))
		want = append(want, tt.want)
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("closing lines (-got +want):\n%s", diff)
	}
}

// TestTablePlanLines: each plan the agent writes is one line under the row of the call that wrote
// it: how far it is, and the item in progress.
func TestTablePlanLines(t *testing.T) {
	var b strings.Builder
	tb := newTable(&b, false)
	plan := func(statuses ...string) []contextwin.Todo {
		out := make([]contextwin.Todo, len(statuses))
		for i, s := range statuses {
			out[i] = contextwin.Todo{Description: fmt.Sprintf("step %d", i+1), Status: s}
		}
		return out
	}
	tb.handle(agent.Event{Type: agent.EventModelCall, Call: &agent.CallRecord{Turn: 1, Prompt: 900, Tool: "write_todos"}})
	tb.handle(agent.Event{Type: agent.EventPlan, Plan: plan(contextwin.TodoInProgress, contextwin.TodoPending, contextwin.TodoPending)})
	tb.handle(agent.Event{Type: agent.EventModelCall, Call: &agent.CallRecord{Turn: 2, Prompt: 950, Tool: "write_todos"}})
	tb.handle(agent.Event{Type: agent.EventPlan, Plan: plan(contextwin.TodoCompleted, contextwin.TodoCancelled, contextwin.TodoCompleted)})
	tb.handle(agent.Event{Type: agent.EventTurnEnd, End: &agent.TurnEnd{StopReason: agent.StopEndTurn}})
	var lines []string
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.Contains(l, "plan:") {
			lines = append(lines, strings.TrimSpace(l))
		}
	}
	want := []string{"↳ plan: 0/3 completed, now: step 1", "↳ plan: 2/3 completed"}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("plan lines (-want +got):\n%s\n%s", diff, b.String())
	}
}
