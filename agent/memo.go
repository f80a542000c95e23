package agent

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/contextwin"
)

// Memo is what the agent keeps besides the conversation: its plan (write_todos) and notes of the
// exact values it must not paraphrase (save_note). The harness holds them, journals each change
// (a resumed session has them), and states them verbatim in the head after each compaction, where
// a summary would have worded them anew. Its methods take mu and no other lock.
type Memo struct {
	opts *Options // the session's, read-only

	mu    sync.Mutex // guards everything below
	plan  []contextwin.Todo
	notes []contextwin.Note // oldest first
	// forgotten are the keys of the notes the user deleted that the model has not been told of.
	forgotten []string
}

// Plan is the agent's plan, as its last write_todos gave it.
func (m *Memo) Plan() []contextwin.Todo {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.plan)
}

// Notes are the agent's notes, oldest first.
func (m *Memo) Notes() []contextwin.Note {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.notes)
}

// SetPlan replaces the plan (write_todos); the error says, for the model, why it is refused.
func (m *Memo) SetPlan(todos []contextwin.Todo) error {
	if err := contextwin.CheckPlan(todos); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.plan = slices.Clone(todos)
	m.opts.journal(journal.Record{Kind: journal.KindPlan, Todos: m.plan})
	return nil
}

// SaveNote saves a note, or deletes it when its value is empty (save_note); dropped are the
// oldest notes given up to stay within the bounds. Deleting a note there is not is refused.
func (m *Memo) SaveNote(n contextwin.Note) (dropped []string, err error) {
	if err := contextwin.CheckNote(n); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if n.Value == "" && !slices.ContainsFunc(m.notes, func(x contextwin.Note) bool { return x.Key == n.Key }) {
		return nil, fmt.Errorf("there is no note %q to delete", n.Key)
	}
	m.notes, dropped = contextwin.SaveNote(m.notes, n)
	m.opts.journal(journal.Record{Kind: journal.KindNote, Note: &n})
	return dropped, nil
}

// NoteError is a user's deletion of a note refused: no such note.
type NoteError struct{ Key string }

func (e *NoteError) Error() string { return fmt.Sprintf("there is no note %q", e.Key) }

// Forget deletes the note key at the user's request. The model learns it at its next call (the
// note is in its history, as the save_note call that made it): see announce.
func (m *Memo) Forget(key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !slices.ContainsFunc(m.notes, func(x contextwin.Note) bool { return x.Key == key }) {
		return &NoteError{Key: key}
	}
	n := contextwin.Note{Key: key}
	m.notes, _ = contextwin.SaveNote(m.notes, n)
	m.opts.journal(journal.Record{Kind: journal.KindNote, Note: &n})
	if !slices.Contains(m.forgotten, key) {
		m.forgotten = append(m.forgotten, key)
	}
	return nil
}

// announce is what the next call tells the model of the notes the user deleted since the last
// one, or "" when none; they are told once.
func (m *Memo) announce() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.forgotten) == 0 {
		return ""
	}
	quoted := make([]string, len(m.forgotten))
	for i, k := range m.forgotten {
		quoted[i] = strconv.Quote(k)
	}
	m.forgotten = nil
	if len(quoted) == 1 {
		return fmt.Sprintf("[The user deleted your note %s: do not rely on its value.]", quoted[0])
	}
	return fmt.Sprintf("[The user deleted your notes %s: do not rely on their values.]", strings.Join(quoted, ", "))
}

// state adds the plan and the notes to what the tracker holds: the harness's state as a head
// states it.
func (m *Memo) state(st contextwin.State) contextwin.State {
	m.mu.Lock()
	defer m.mu.Unlock()
	st.Plan, st.Notes = slices.Clone(m.plan), slices.Clone(m.notes)
	return st
}
