package contextwin

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// What the agent keeps besides the conversation (issue 34): its plan, a to-do list it rewrites
// whole (write_todos), and notes of exact values (save_note). The harness holds both and states
// them verbatim in the head after each compaction, where a summary would paraphrase them.

// Todo is one item of the agent's plan.
type Todo struct {
	Description string `json:"description"`
	Status      string `json:"status"`
}

// Todo statuses, Gemini CLI's.
const (
	TodoPending    = "pending"
	TodoInProgress = "in_progress"
	TodoCompleted  = "completed"
	TodoCancelled  = "cancelled"
)

// Note is one exact value the agent saved under a key.
type Note struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Bounds of what rides in every head: a plan or notes past them are refused (the plan) or lose
// their oldest entries (the notes), with words for the model.
const (
	MaxTodos      = 50
	MaxPlanChars  = 4000
	MaxNotes      = 30
	MaxNotesChars = 6000
	MaxNoteKey    = 80
)

// CheckPlan tells what is wrong with a plan, in words for the model; nil when it may be held.
func CheckPlan(todos []Todo) error {
	if len(todos) > MaxTodos {
		return fmt.Errorf("the plan has %d items; at most %d are kept: merge or drop some", len(todos), MaxTodos)
	}
	inProgress, chars := 0, 0
	for i, t := range todos {
		switch t.Status {
		case TodoPending, TodoCompleted, TodoCancelled:
		case TodoInProgress:
			inProgress++
		default:
			return fmt.Errorf("item %d has status %q; use pending, in_progress, completed or cancelled", i+1, t.Status)
		}
		if strings.TrimSpace(t.Description) == "" {
			return fmt.Errorf("item %d has no description", i+1)
		}
		chars += utf8.RuneCountInString(t.Description)
	}
	if inProgress > 1 {
		return fmt.Errorf("%d items are in_progress; at most one may be: mark the others pending or completed", inProgress)
	}
	if chars > MaxPlanChars {
		return fmt.Errorf("the plan's descriptions hold %d characters; at most %d are kept: shorten them", chars, MaxPlanChars)
	}
	return nil
}

// CheckNote tells what is wrong with a note's key, in words for the model; nil when it may be
// saved. A value longer than all notes may hold together is refused too.
func CheckNote(n Note) error {
	switch k := strings.TrimSpace(n.Key); {
	case k == "":
		return fmt.Errorf("a note needs a key")
	case k != n.Key || strings.ContainsAny(n.Key, "\n\r"):
		return fmt.Errorf("a note's key is one line without surrounding spaces: %q", n.Key)
	case utf8.RuneCountInString(n.Key) > MaxNoteKey:
		return fmt.Errorf("a note's key is at most %d characters", MaxNoteKey)
	case utf8.RuneCountInString(n.Value) > MaxNotesChars:
		return fmt.Errorf("the value holds %d characters; notes hold at most %d together: save the exact part that matters", utf8.RuneCountInString(n.Value), MaxNotesChars)
	}
	return nil
}

// NotesChars is what notes hold, keys and values, in characters.
func NotesChars(notes []Note) int {
	n := 0
	for _, x := range notes {
		n += utf8.RuneCountInString(x.Key) + utf8.RuneCountInString(x.Value)
	}
	return n
}

// RenderPlan is the plan as the head states it, one line an item.
func RenderPlan(todos []Todo) string {
	var b strings.Builder
	for i, t := range todos {
		fmt.Fprintf(&b, "  %d. [%s] %s\n", i+1, t.Status, t.Description)
	}
	return b.String()
}

// RenderNotes is the notes as the head states them, their values as saved.
func RenderNotes(notes []Note) string {
	var b strings.Builder
	for _, n := range notes {
		fmt.Fprintf(&b, "  - %s: %s\n", n.Key, n.Value)
	}
	return b.String()
}

// SaveNote is notes with n saved: a new or changed note goes last (the most recent), an empty
// value deletes its key; past MaxNotes or MaxNotesChars the oldest are dropped, their keys
// returned. n must have passed CheckNote. The session and the journal's replay both apply it, so
// a resumed session drops what the live one dropped.
func SaveNote(notes []Note, n Note) (out []Note, dropped []string) {
	out = make([]Note, 0, len(notes)+1)
	for _, x := range notes {
		if x.Key != n.Key {
			out = append(out, x)
		}
	}
	if n.Value == "" {
		return out, nil
	}
	out = append(out, n)
	for len(out) > MaxNotes || NotesChars(out) > MaxNotesChars {
		dropped = append(dropped, out[0].Key)
		out = out[1:]
	}
	return out, dropped
}
