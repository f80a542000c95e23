package tools

import (
	"context"
	"fmt"
	"strings"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/contextwin"
)

// write_todos and save_note: what the agent keeps besides the conversation. They change no file
// and need no approval; the harness holds what they give (Env.Memo), journals it and states it
// verbatim in the head after each compaction.

// Memo holds the agent's plan and notes: the session, which bounds and journals them.
type Memo interface {
	// SetPlan replaces the plan; an error says, for the model, why it is refused.
	SetPlan(todos []contextwin.Todo) error
	// SaveNote saves a note, or deletes it when its value is empty; dropped are the keys of the
	// oldest notes given up to stay within the bounds.
	SaveNote(n contextwin.Note) (dropped []string, err error)
}

var writeTodosTool = tool{
	// Every request pays for a declaration: the schema says what the description need not.
	decl: func() *genai.FunctionDeclaration {
		item := object(map[string]any{
			"description": str(),
			"status": map[string]any{"type": "string", "enum": []string{contextwin.TodoPending, contextwin.TodoInProgress,
				contextwin.TodoCompleted, contextwin.TodoCancelled}},
		}, "description", "status")
		return &genai.FunctionDeclaration{
			Description:          "Replace your plan with this whole list; one item in_progress at most.",
			ParametersJsonSchema: object(map[string]any{"todos": map[string]any{"type": "array", "items": item}}, "todos"),
		}
	},
	run: runWriteTodos,
	describe: func(a *args) string {
		todos, _ := todosOf(a)
		return fmt.Sprintf("Update the plan (%d items)", len(todos))
	},
	kind: KindThink,
}

var saveNoteTool = tool{
	decl: func() *genai.FunctionDeclaration {
		return &genai.FunctionDeclaration{
			Description:          "Keep an exact value through compactions; an empty value deletes.",
			ParametersJsonSchema: object(map[string]any{"key": str(), "value": str()}, "key", "value"),
		}
	},
	run: runSaveNote,
	describe: func(a *args) string {
		k, _ := a.str("key", false)
		return "Save the note " + k
	},
	kind: KindThink,
}

// str is the schema of a string whose name says what it holds.
func str() map[string]any { return map[string]any{"type": "string"} }

func runWriteTodos(_ context.Context, env *Env, _ Call, a *args) Result {
	todos, ok := todosOf(a)
	if !ok {
		return failure(a.problem)
	}
	if env.Memo == nil {
		return failure("nothing holds a plan in this session")
	}
	if err := env.Memo.SetPlan(todos); err != nil {
		return failure("plan not saved: " + err.Error())
	}
	counts := map[string]int{}
	for _, t := range todos {
		counts[t.Status]++
	}
	return success(fmt.Sprintf("Plan saved: %d items, %d completed, %d in progress.", len(todos),
		counts[contextwin.TodoCompleted], counts[contextwin.TodoInProgress]))
}

// todosOf reads the todos argument: a list of {description, status} objects.
func todosOf(a *args) ([]contextwin.Todo, bool) {
	v, present := a.m["todos"]
	if !present || v == nil {
		a.missing("todos")
		return nil, false
	}
	var items []map[string]any
	switch l := v.(type) {
	case []any:
		for i, x := range l {
			m, ok := x.(map[string]any)
			if !ok {
				a.fail("todos[%d] must be an object with description and status, got %s", i, typeName(x))
				return nil, false
			}
			items = append(items, m)
		}
	case []map[string]any:
		items = l
	default:
		a.fail("argument \"todos\" must be a list, got %s", typeName(v))
		return nil, false
	}
	todos := make([]contextwin.Todo, 0, len(items))
	for i, m := range items {
		item := &args{m: m}
		d, _ := item.str("description", true)
		s, _ := item.str("status", true)
		if item.problem != "" {
			a.fail("todos[%d]: %s", i, item.problem)
			return nil, false
		}
		todos = append(todos, contextwin.Todo{Description: d, Status: s})
	}
	return todos, true
}

func runSaveNote(_ context.Context, env *Env, _ Call, a *args) Result {
	key, _ := a.str("key", true)
	value, _ := a.str("value", true)
	if a.problem != "" {
		return failure(a.problem)
	}
	if env.Memo == nil {
		return failure("nothing holds notes in this session")
	}
	dropped, err := env.Memo.SaveNote(contextwin.Note{Key: key, Value: value})
	switch {
	case err != nil:
		return failure("note not saved: " + err.Error())
	case value == "":
		return success(fmt.Sprintf("Note %q deleted.", key))
	case len(dropped) > 0:
		return success(fmt.Sprintf("Note %q saved. To stay within %d notes and %d characters, the oldest were dropped: %s.",
			key, contextwin.MaxNotes, contextwin.MaxNotesChars, strings.Join(dropped, ", ")))
	}
	return success(fmt.Sprintf("Note %q saved.", key))
}
