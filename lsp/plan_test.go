package lsp

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-dev/reprise/contextwin"
	"github.com/reprise-dev/reprise/lsp/lsptest"
)

// TestPlanOverLSP: each plan the agent writes reaches the editor as a plan update with every
// entry, in order with the tool calls; reprise.context states it with the notes.
func TestPlanOverLSP(t *testing.T) {
	todos := []any{
		map[string]any{"description": "Read the handler", "status": "completed"},
		map[string]any{"description": "Fix the threshold", "status": "in_progress"},
	}
	e := newEnv(t, envOpts{editor: lsptest.Options{Experimental: true}},
		call("write_todos", map[string]any{"todos": todos}),
		call("save_note", map[string]any{"key": "rule", "value": "dès 50 unités"}),
		text("Planned."))
	id := e.ask("Plan the fix.", "")
	e.turnEnd(id)
	ups := e.updates(id, UpdatePlan)
	want := []contextwin.Todo{{Description: "Read the handler", Status: "completed"}, {Description: "Fix the threshold", Status: "in_progress"}}
	if len(ups) != 1 || ups[0].Entries == nil {
		t.Fatalf("plan updates %+v", ups)
	}
	if d := cmp.Diff(want, *ups[0].Entries); d != "" {
		t.Errorf("plan entries (-want +got):\n%s", d)
	}
	var rep struct {
		State contextwin.State `json:"state"`
	}
	if err := e.ed.Execute(e.ctx, CommandContext, SessionArgs{SessionID: id}, &rep); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, rep.State.Plan); d != "" {
		t.Errorf("reprise.context plan (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]contextwin.Note{{Key: "rule", Value: "dès 50 unités"}}, rep.State.Notes); d != "" {
		t.Errorf("reprise.context notes (-want +got):\n%s", d)
	}
}
