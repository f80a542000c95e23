package runner

import (
	"context"
	"strings"
	"testing"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// TestSubagentsThroughTheRunner: a hosted session's subagents run on the catalogue's subagent
// model at its thinking, are saved as sessions of their own naming their parent, and a resumed
// parent has their figures; subagents off declares no task; a subagentModel the API does not
// serve fails the session, as compactionModel does.
func TestSubagentsThroughTheRunner(t *testing.T) {
	srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{
		{Parts: []geminitest.Part{{FunctionCall: &geminitest.FunctionCall{Name: "task", Args: map[string]any{"description": "look", "prompt": "TASK-R look"}}}}},
		{Agent: "TASK-R", Parts: []geminitest.Part{{Text: "REPORT-R"}}},
		{Parts: []geminitest.Part{{Text: "Done."}}},
		{Parts: []geminitest.Part{{Text: "No task here."}}},
	}})
	defer srv.Close()
	home, ws := t.TempDir(), t.TempDir()
	h := newHost(t, srv, home)
	o, err := h.Open(t.Context(), Spec{Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range o.Run(t.Context(), "look around") {
		if err != nil {
			t.Fatal(err)
		}
	}
	model, thinking := catalog.Builtin().SubagentModel()
	var child []geminitest.Request
	for _, r := range srv.Requests() {
		if r.Method == "POST" && len(r.Contents) > 0 && strings.Contains(string(r.Body), "TASK-R look") && r.Model == model {
			child = append(child, r)
		}
	}
	if len(child) != 1 || !strings.EqualFold(child[0].ThinkingLevel, thinking) {
		t.Fatalf("subagent requests on %s: %d (thinking %q, want %s)", model, len(child), child[0].ThinkingLevel, thinking)
	}
	tot := o.Context().Totals
	if err := h.Close(t.Context(), o.ID()); err != nil {
		t.Fatal(err)
	}
	st, _ := h.Store(ws)
	list, err := st.List(nil)
	if err != nil {
		t.Fatal(err)
	}
	var saved journal.Summary
	for _, s := range list {
		if s.Subagent != "" {
			saved = s
		}
	}
	if saved.Parent != o.ID() || saved.Subagent != "look" || saved.Calls != 1 {
		t.Errorf("the subagent's saved session %+v", saved)
	}
	r, err := h.Resume(t.Context(), o.ID(), Spec{Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Context().Totals; got.Subagents != tot.Subagents || got.Subagents.Calls != 1 || got.Calls != tot.Calls {
		t.Errorf("resumed totals %+v, before %+v", got.Subagents, tot.Subagents)
	}
	h.Close(context.Background(), r.ID())

	off, err := h.Open(t.Context(), Spec{Workspace: ws, Config: agent.Config{Subagents: agent.SubagentSettings{Off: true}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range off.Run(t.Context(), "plain") {
		if err != nil {
			t.Fatal(err)
		}
	}
	reqs := srv.Requests()
	for _, f := range reqs[len(reqs)-1].Functions {
		if f == "task" {
			t.Error("subagents off still declares task")
		}
	}
	h.Close(context.Background(), off.ID())
	if _, err := h.Open(t.Context(), Spec{Workspace: ws, Config: agent.Config{Subagents: agent.SubagentSettings{Model: "gemini-3-pro-preview"}}}); err == nil || !strings.Contains(err.Error(), "subagentModel gemini-3-pro-preview") {
		t.Errorf("an unserved subagentModel: %v", err)
	}
}
