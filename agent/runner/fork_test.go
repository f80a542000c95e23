package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/contextwin"
)

// forkScript answers a parent of four turns with two manual compactions, then a fork from
// checkpoint 2 and one from turn 2, each request picked by the user message it carries.
func forkScript() geminitest.Script {
	answer := func(match, text string) geminitest.Turn {
		return geminitest.Turn{Match: match, Parts: []geminitest.Part{{Text: text}}}
	}
	read := func(match, path string) geminitest.Turn {
		return geminitest.Turn{Match: match, Parts: []geminitest.Part{{FunctionCall: &geminitest.FunctionCall{Name: "read_file", Args: map[string]any{"path": path}}}}}
	}
	plan := geminitest.Turn{Match: "Read b.txt", Parts: []geminitest.Part{{FunctionCall: &geminitest.FunctionCall{Name: "write_todos", Args: map[string]any{
		"todos": []any{map[string]any{"description": "Read b", "status": "completed"}, map[string]any{"description": "Read c", "status": "pending"}}}}}}}
	note := geminitest.Turn{Match: "Read c.txt", Parts: []geminitest.Part{{FunctionCall: &geminitest.FunctionCall{Name: "save_note", Args: map[string]any{"key": "c", "value": "gamma, exactly"}}}}}
	sum := answer(contextwin.SummaryMarker, summary)
	return geminitest.Script{Turns: []geminitest.Turn{
		read("Read a.txt", "a.txt"), answer("Read a.txt", "A says alpha."),
		read("Read b.txt", "b.txt"), plan, answer("Read b.txt", "B says beta."),
		sum,
		read("Read c.txt", "c.txt"), note, answer("Read c.txt", "C says gamma."),
		sum,
		answer("Parent goes on.", "Parent three."),
		answer("Fork goes on.", "Fork three."),
		answer("Rewind.", "Rewound."),
		answer("Parent again.", "Parent four."),
		answer("Fork again.", "Fork four."),
	}}
}

// TestForkFromCheckpointAndTurn: through the real genai client, a fork from checkpoint 2 sends
// at its first call the head and kept turns the parent sent right after checkpoint 2, with the
// plan and notes of then; a fork from turn 2 sends nothing from turn 2's message on; parent and
// forks then go on without touching each other's log; an unknown checkpoint or turn is refused.
func TestForkFromCheckpointAndTurn(t *testing.T) {
	srv := geminitest.New(forkScript())
	defer srv.Close()
	home, ws := t.TempDir(), t.TempDir()
	for _, f := range []string{"a", "b", "c"} {
		os.WriteFile(filepath.Join(ws, f+".txt"), []byte(strings.Repeat(f+" line\n", 40)), 0o644)
	}
	h := newHost(t, srv, home)
	policy := contextwin.DefaultPolicy()
	policy.KeepRecentTurns = 1
	spec := Spec{Workspace: ws, Model: "gemini-3.8-flash", Config: agent.Config{ContextPolicy: policy}}
	specFor := func(string) Spec { return spec }
	p, err := h.Open(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background(), p.ID())
	run := func(l *Live, text string) {
		t.Helper()
		for _, err := range l.Run(t.Context(), text) {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	compact := func() {
		t.Helper()
		if _, err := Do(t.Context(), p.Session, Verb{Kind: Compact}, nil); err != nil {
			t.Fatal(err)
		}
	}
	run(p, "Read a.txt")
	run(p, "Read b.txt")
	compact()
	run(p, "Read c.txt")
	compact()
	run(p, "Parent goes on.")

	// The requests a user message began, by that message.
	first := func(msg string) []*genai.Content {
		t.Helper()
		for _, r := range srv.Requests() {
			if c := r.Contents; len(c) > 0 && len(c[len(c)-1].Parts) > 0 && c[len(c)-1].Parts[0].Text == msg {
				return c
			}
		}
		t.Fatalf("no request ends with %q", msg)
		return nil
	}
	same := func(what string, a, b []*genai.Content) {
		t.Helper()
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if !bytes.Equal(ja, jb) {
			t.Errorf("%s differ:\n%s\n%s", what, ja, jb)
		}
	}

	parentLog := filepath.Join(p.Log.Dir(), "events.jsonl")
	before, _ := os.ReadFile(parentLog)
	f, err := h.Fork(t.Context(), p.ID(), journal.ForkPoint{Checkpoint: 2}, specFor)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background(), f.ID())
	if after, _ := os.ReadFile(parentLog); !bytes.Equal(before, after) {
		t.Error("forking wrote to the parent's log")
	}
	if got := f.Memo().Notes(); len(got) != 1 || got[0].Value != "gamma, exactly" {
		t.Errorf("the fork's notes %+v", got)
	}
	if got := f.Memo().Plan(); len(got) != 2 || got[1].Description != "Read c" {
		t.Errorf("the fork's plan %+v", got)
	}
	if cps := f.Conversation().Checkpoints(); len(cps) != 2 {
		t.Errorf("the fork has %d checkpoints, want 2", len(cps))
	}
	run(f, "Fork goes on.")
	parent3, fork3 := first("Parent goes on."), first("Fork goes on.")
	if len(parent3) != len(fork3) {
		t.Fatalf("the fork's first call sends %d messages, the parent's after checkpoint 2 %d", len(fork3), len(parent3))
	}
	same("the head and kept turns after checkpoint 2", parent3[:len(parent3)-1], fork3[:len(fork3)-1])
	if !strings.Contains(contextwin.HeadText(fork3[0]), "gamma, exactly") {
		t.Errorf("the fork's head does not state the note:\n%s", contextwin.HeadText(fork3[0]))
	}

	r, err := h.Fork(t.Context(), p.ID(), journal.ForkPoint{Turn: 2}, specFor)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background(), r.ID())
	run(r, "Rewind.")
	rewound := first("Rewind.")
	same("the history before turn 2", first("Read b.txt")[:len(rewound)-1], rewound[:len(rewound)-1])
	for _, c := range rewound {
		for _, part := range c.Parts {
			if strings.Contains(part.Text, "Read b.txt") || part.FunctionCall != nil && part.FunctionCall.Name == "write_todos" {
				t.Errorf("the rewound fork sends turn 2: %+v", part)
			}
		}
	}
	if got := r.Memo().Plan(); len(got) != 0 {
		t.Errorf("the rewound fork has the plan written in turn 2: %+v", got)
	}

	// They go on independently: each log holds its own turn, none the other's.
	run(p, "Parent again.")
	run(f, "Fork again.")
	logs := map[string]string{}
	for _, l := range []*Live{p, f, r} {
		b, _ := os.ReadFile(filepath.Join(l.Log.Dir(), "events.jsonl"))
		logs[l.ID()] = string(b)
	}
	if !strings.Contains(logs[p.ID()], "Parent again.") || strings.Contains(logs[p.ID()], "Fork goes on.") || strings.Contains(logs[p.ID()], "Fork again.") || strings.Contains(logs[p.ID()], "Rewind.") {
		t.Error("the parent's log holds a fork's turn, or lacks its own")
	}
	if !strings.Contains(logs[f.ID()], "Fork again.") || strings.Contains(logs[f.ID()], "Parent again.") || strings.Contains(logs[f.ID()], "Parent goes on.") {
		t.Error("the fork's log holds the parent's turns after checkpoint 2, or lacks its own")
	}
	if last := first("Fork again."); strings.Contains(mustJSON(last), "Parent goes on.") || strings.Contains(mustJSON(last), "Parent again.") {
		t.Error("the fork's second turn sends the parent's")
	}
	st, _ := h.Store(ws)
	if s, err := st.Load(f.ID()); err != nil || s.Meta.Parent != p.ID() || s.Meta.From != "checkpoint 2" {
		t.Errorf("the fork's meta %+v, %v", s.Meta, err)
	}

	// Bad points: refused, nothing made.
	n := len(sessionDirs(t, home, ws))
	for _, at := range []journal.ForkPoint{{Checkpoint: 9}, {Turn: 9}, {Checkpoint: -1}, {Checkpoint: 1, Turn: 1}} {
		var fe *journal.ForkError
		if _, err := h.Fork(t.Context(), p.ID(), at, specFor); !errors.As(err, &fe) {
			t.Errorf("fork at %+v: %v, want a ForkError", at, err)
		}
	}
	if _, err := h.Fork(t.Context(), "20260101-000000-abcdef", journal.ForkPoint{Turn: 1}, specFor); !errors.Is(err, journal.ErrNotFound) {
		t.Errorf("fork of an unknown session: %v", err)
	}
	if got := len(sessionDirs(t, home, ws)); got != n {
		t.Errorf("refused forks left %d sessions, want %d", got, n)
	}
	// No point: the session as it is now, its last turn included.
	now, err := h.Fork(t.Context(), p.ID(), journal.ForkPoint{}, specFor)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background(), now.ID())
	if got, want := mustJSON(now.Conversation().History()), mustJSON(p.Conversation().History()); got != want {
		t.Errorf("a fork of now has another history:\n%s\n%s", got, want)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// sessionDirs lists the saved sessions of ws.
func sessionDirs(t *testing.T, home, ws string) []os.DirEntry {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(journal.WorkspaceDir(home, ws), "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	return entries
}
