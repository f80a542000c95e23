package tools

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-dev/reprise/contextwin"
)

// fakeMemo records what the tools give it; refuse, when set, is its answer.
type fakeMemo struct {
	plan    []contextwin.Todo
	notes   []contextwin.Note
	dropped []string
	refuse  error
}

func (m *fakeMemo) SetPlan(todos []contextwin.Todo) error {
	if m.refuse != nil {
		return m.refuse
	}
	m.plan = todos
	return nil
}

func (m *fakeMemo) SaveNote(n contextwin.Note) ([]string, error) {
	if m.refuse != nil {
		return nil, m.refuse
	}
	m.notes = append(m.notes, n)
	return m.dropped, nil
}

func TestWriteTodos(t *testing.T) {
	ws := workspace(t, nil)
	todos := []any{
		map[string]any{"description": "Read the handler", "status": "completed"},
		map[string]any{"description": "Fix the threshold", "status": "in_progress"},
	}
	m := &fakeMemo{}
	res := Run(t.Context(), &Env{Workspace: ws, Memo: m}, Call{Name: "write_todos", Args: map[string]any{"todos": todos}})
	if res.IsError || res.Output != "Plan saved: 2 items, 1 completed, 1 in progress." {
		t.Fatalf("result %+v", res)
	}
	want := []contextwin.Todo{{Description: "Read the handler", Status: "completed"}, {Description: "Fix the threshold", Status: "in_progress"}}
	if d := cmp.Diff(want, m.plan); d != "" {
		t.Errorf("plan held (-want +got):\n%s", d)
	}
	for _, tc := range []struct {
		name string
		args map[string]any
		memo Memo
		want string
	}{
		{"no todos", map[string]any{}, m, `"todos"`},
		{"not a list", map[string]any{"todos": "read, fix"}, m, "must be a list"},
		{"not an object", map[string]any{"todos": []any{"read"}}, m, "todos[0] must be an object"},
		{"no status", map[string]any{"todos": []any{map[string]any{"description": "read"}}}, m, `todos[0]: `},
		{"refused", map[string]any{"todos": todos}, &fakeMemo{refuse: errors.New("2 items are in_progress")}, "plan not saved: 2 items are in_progress"},
		{"no memo", map[string]any{"todos": todos}, nil, "nothing holds a plan"},
	} {
		res := Run(t.Context(), &Env{Workspace: ws, Memo: tc.memo}, Call{Name: "write_todos", Args: tc.args})
		if !res.IsError || !strings.Contains(res.Output, tc.want) {
			t.Errorf("%s: %+v, want an error saying %q", tc.name, res, tc.want)
		}
	}
}

func TestSaveNote(t *testing.T) {
	ws := workspace(t, nil)
	m := &fakeMemo{}
	run := func(args map[string]any) Result {
		return Run(t.Context(), &Env{Workspace: ws, Memo: m}, Call{Name: "save_note", Args: args})
	}
	if res := run(map[string]any{"key": "rule", "value": "dès 50 unités"}); res.IsError || res.Output != `Note "rule" saved.` {
		t.Fatalf("save: %+v", res)
	}
	if res := run(map[string]any{"key": "rule", "value": ""}); res.IsError || res.Output != `Note "rule" deleted.` {
		t.Fatalf("delete: %+v", res)
	}
	m.dropped = []string{"old"}
	if res := run(map[string]any{"key": "new", "value": "x"}); res.IsError || !strings.Contains(res.Output, "the oldest were dropped: old.") {
		t.Fatalf("drop: %+v", res)
	}
	if d := cmp.Diff([]contextwin.Note{{Key: "rule", Value: "dès 50 unités"}, {Key: "rule"}, {Key: "new", Value: "x"}}, m.notes); d != "" {
		t.Errorf("notes given (-want +got):\n%s", d)
	}
	if res := run(map[string]any{"key": "rule"}); !res.IsError || !strings.Contains(res.Output, `"value"`) {
		t.Errorf("no value: %+v", res)
	}
	m.refuse = errors.New("a note needs a key")
	if res := run(map[string]any{"key": "", "value": "x"}); !res.IsError || res.Output != "note not saved: a note needs a key" {
		t.Errorf("refused: %+v", res)
	}
	if title, kind := Describe(Call{Name: "save_note", Args: map[string]any{"key": "rule"}}); title != "Save the note rule" || kind != KindThink {
		t.Errorf("Describe: %q %q", title, kind)
	}
}
