package agent

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/contextwin"
)

// todosArg is write_todos' argument for plan.
func todosArg(plan []contextwin.Todo) map[string]any {
	items := make([]any, len(plan))
	for i, t := range plan {
		items[i] = map[string]any{"description": t.Description, "status": t.Status}
	}
	return map[string]any{"todos": items}
}

// memoNotes are five exact values, accents, quotes and a line break included.
var memoNotes = []contextwin.Note{
	{Key: "discount rule", Value: "Remise de 5 % dès 50 unités, 10 % dès 200 (README, « Remises »)"},
	{Key: "error", Value: `panic: runtime error: index out of range [3] with length 3`},
	{Key: "endpoint", Value: "POST /v2/orders/{id}:cancel"},
	{Key: "decision", Value: "keep the float cents: the ledger rounds at export,\nnot before"},
	{Key: "flag", Value: "--max-retries=7"},
}

// TestPlanAndNotesSurviveCompactions: a plan written at call 2 and updated at call 9, and five
// notes, are stated byte for byte in the head of every request after each of three forced
// compactions; a resumed session has both; the editor hears each plan as it is written.
func TestPlanAndNotesSurviveCompactions(t *testing.T) {
	planA := []contextwin.Todo{
		{Description: "Read the pricing code", Status: contextwin.TodoInProgress},
		{Description: "Fix the threshold", Status: contextwin.TodoPending},
		{Description: "Run the tests", Status: contextwin.TodoPending},
	}
	planB := []contextwin.Todo{
		{Description: "Read the pricing code", Status: contextwin.TodoCompleted},
		{Description: "Fix the threshold", Status: contextwin.TodoInProgress},
		{Description: "Run the tests", Status: contextwin.TodoPending},
	}
	turns := []geminitest.Turn{
		callTurn("read_file", map[string]any{"path": "notes/0.txt"}, sig),
		callTurn("write_todos", todosArg(planA), sig), // call 2
	}
	for _, n := range memoNotes {
		turns = append(turns, callTurn("save_note", map[string]any{"key": n.Key, "value": n.Value}, sig))
	}
	turns = append(turns, textTurn("planned"), // call 8
		callTurn("write_todos", todosArg(planB), sig), // call 9
		textTurn("on it"),
		summaryTurn(summaryText), textTurn("still on it"),
		summaryTurn(summaryText), textTurn("next"),
		summaryTurn(summaryText), textTurn("nearly there"))
	p := contextwin.DefaultPolicy()
	p.KeepRecentTurns = 1
	f, st, log := saved(t, fixtureOpts{policy: p, files: notes(1, 400)}, turns...)
	var told [][]contextwin.Todo
	ask := func(text string) {
		t.Helper()
		evs, err := f.run(t.Context(), text)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range ofType(evs, EventPlan) {
			told = append(told, ev.Plan)
		}
	}
	compact := func() {
		t.Helper()
		if _, err := f.s.Compact(t.Context(), ""); err != nil {
			t.Fatal(err)
		}
	}
	ask("Plan the fix.")
	ask("Go on.")
	for _, text := range []string{"Next step.", "Next.", "Finish."} {
		compact()
		ask(text)
	}
	if n := len(f.s.Conversation().Checkpoints()); n != 3 {
		t.Fatalf("%d checkpoints, want 3", n)
	}
	if d := cmp.Diff([][]contextwin.Todo{planA, planB}, told); d != "" {
		t.Errorf("plans told (-want +got):\n%s", d)
	}
	checkHeads(t, mainRequests(f.srv), planB)
	s := resumeFrom(t, f, st, log)
	if d := cmp.Diff(planB, s.Memo().Plan()); d != "" {
		t.Errorf("resumed plan (-want +got):\n%s", d)
	}
	if d := cmp.Diff(memoNotes, s.Memo().Notes()); d != "" {
		t.Errorf("resumed notes (-want +got):\n%s", d)
	}
}

// checkHeads: every request whose first message is a head (one after each compaction) states
// the plan and the notes byte for byte.
func checkHeads(t *testing.T, reqs []geminitest.Request, plan []contextwin.Todo) {
	t.Helper()
	// The head may end with the notes: its last line break is not part of it.
	want := []string{contextwin.RenderPlan(plan), strings.TrimSuffix(contextwin.RenderNotes(memoNotes), "\n")}
	heads := 0
	for _, r := range reqs {
		head := firstText(r.Contents[0])
		if !strings.Contains(head, "State held by the harness") {
			continue
		}
		heads++
		for _, w := range want {
			if !strings.Contains(head, w) {
				t.Errorf("request %d: the head does not hold %q:\n%s", heads, w, head)
			}
		}
	}
	if heads < 3 {
		t.Errorf("%d requests with a head, want one at least after each of the 3 compactions", heads)
	}
}

// TestPlanAndNotesRefused: what the harness refuses reaches the model as an error it can act on,
// and leaves the plan and the notes as they were.
func TestPlanAndNotesRefused(t *testing.T) {
	good := []contextwin.Todo{{Description: "step", Status: contextwin.TodoPending}}
	two := []contextwin.Todo{{Description: "a", Status: contextwin.TodoInProgress}, {Description: "b", Status: contextwin.TodoInProgress}}
	big := make([]contextwin.Todo, contextwin.MaxTodos+1)
	for i := range big {
		big[i] = contextwin.Todo{Description: fmt.Sprintf("step %d", i), Status: contextwin.TodoPending}
	}
	turns := []geminitest.Turn{
		callTurn("write_todos", todosArg(good), sig),
		callTurn("write_todos", map[string]any{"todos": []any{map[string]any{"description": "x", "status": "done"}}}, sig),
		callTurn("write_todos", todosArg(two), sig),
		callTurn("write_todos", todosArg(big), sig),
		callTurn("save_note", map[string]any{"key": "k", "value": "v"}, sig),
		callTurn("save_note", map[string]any{"key": "missing", "value": ""}, sig),
		callTurn("save_note", map[string]any{"key": "huge", "value": strings.Repeat("x", contextwin.MaxNotesChars+1)}, sig),
		textTurn("done"),
	}
	f := newFixture(t, fixtureOpts{}, turns...)
	if _, err := f.run(t.Context(), "Plan."); err != nil {
		t.Fatal(err)
	}
	got := responses(mainRequests(f.srv)[len(turns)-1])
	want := map[string][]string{
		"write_todos": {
			"Plan saved: 1 items, 0 completed, 0 in progress.",
			`error: plan not saved: item 1 has status "done"; use pending, in_progress, completed or cancelled`,
			"error: plan not saved: 2 items are in_progress; at most one may be: mark the others pending or completed",
			"error: plan not saved: the plan has 51 items; at most 50 are kept: merge or drop some",
		},
		"save_note": {
			`Note "k" saved.`,
			`error: note not saved: there is no note "missing" to delete`,
			"error: note not saved: the value holds 6001 characters; notes hold at most 6000 together: save the exact part that matters",
		},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("answers (-want +got):\n%s", d)
	}
	if d := cmp.Diff(good, f.s.Memo().Plan()); d != "" {
		t.Errorf("plan (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]contextwin.Note{{Key: "k", Value: "v"}}, f.s.Memo().Notes()); d != "" {
		t.Errorf("notes (-want +got):\n%s", d)
	}
}
