package contextwin

import (
	"strings"
	"testing"
)

func TestCheckPlan(t *testing.T) {
	item := func(s string) Todo { return Todo{Description: "step", Status: s} }
	many := make([]Todo, MaxTodos+1)
	for i := range many {
		many[i] = item(TodoPending)
	}
	long := []Todo{{Description: strings.Repeat("x", MaxPlanChars+1), Status: TodoPending}}
	for _, tc := range []struct {
		name string
		plan []Todo
		want string // "" = accepted
	}{
		{"empty", nil, ""},
		{"every status", []Todo{item(TodoPending), item(TodoInProgress), item(TodoCompleted), item(TodoCancelled)}, ""},
		{"unknown status", []Todo{item("done")}, `status "done"`},
		{"two in progress", []Todo{item(TodoInProgress), item(TodoInProgress)}, "2 items are in_progress"},
		{"no description", []Todo{{Description: "  ", Status: TodoPending}}, "no description"},
		{"too many", many, "at most 50"},
		{"too long", long, "at most 4000"},
	} {
		err := CheckPlan(tc.plan)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
}

func TestCheckNote(t *testing.T) {
	for _, tc := range []struct {
		note Note
		want string
	}{
		{Note{"threshold", "dès 50 unités"}, ""},
		{Note{"", "x"}, "needs a key"},
		{Note{" padded", "x"}, "one line"},
		{Note{"two\nlines", "x"}, "one line"},
		{Note{strings.Repeat("k", MaxNoteKey+1), "x"}, "at most 80"},
		{Note{"big", strings.Repeat("v", MaxNotesChars+1)}, "at most 6000"},
	} {
		err := CheckNote(tc.note)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: refused: %v", tc.note.Key, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%q: %v, want an error saying %q", tc.note.Key, err, tc.want)
		}
	}
}

// TestStateRendersPlanAndNotes: the head states the plan and the notes as given, values byte for
// byte, after the files and the verdict.
func TestStateRendersPlanAndNotes(t *testing.T) {
	value := "Remise de 5 % dès 50 unités,\n10 % dès 200 (README, « Remises »)"
	s := State{
		Plan:  []Todo{{"Read the pricing code", TodoCompleted}, {"Fix the threshold", TodoInProgress}},
		Notes: []Note{{"rule", value}},
	}
	got := s.Render()
	for _, want := range []string{"  1. [completed] Read the pricing code\n  2. [in_progress] Fix the threshold\n", "  - rule: " + value + "\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("Render() = %q, missing %q", got, want)
		}
	}
	if strings.Contains(State{}.Render(), "Plan") || strings.Contains(State{}.Render(), "Notes") {
		t.Error("an empty state mentions a plan or notes")
	}
}

func TestSaveNoteKeepsTheBounds(t *testing.T) {
	var notes []Note
	for i := range MaxNotes {
		notes, _ = SaveNote(notes, Note{Key: strings.Repeat("k", i+1), Value: "v"})
	}
	notes, dropped := SaveNote(notes, Note{Key: "k", Value: "changed"}) // an existing key moves last
	if len(dropped) != 0 || notes[len(notes)-1] != (Note{"k", "changed"}) || len(notes) != MaxNotes {
		t.Fatalf("changed: %v, dropped %v", notes[len(notes)-1], dropped)
	}
	notes, dropped = SaveNote(notes, Note{Key: "new", Value: "v"})
	if len(notes) != MaxNotes || len(dropped) != 1 || dropped[0] != "kk" {
		t.Fatalf("past %d notes: %d kept, dropped %v", MaxNotes, len(notes), dropped)
	}
	big := strings.Repeat("x", MaxNotesChars-10)
	notes, dropped = SaveNote(notes, Note{Key: "big", Value: big})
	if NotesChars(notes) > MaxNotesChars || notes[len(notes)-1].Value != big || len(dropped) == 0 {
		t.Fatalf("past %d characters: %d held, dropped %v", MaxNotesChars, NotesChars(notes), dropped)
	}
	notes, _ = SaveNote(notes, Note{Key: "big"})
	if len(notes) != 1 || notes[0].Key != "new" {
		t.Errorf("after deleting big: %v, want new alone (new and big fit together)", notes)
	}
}
