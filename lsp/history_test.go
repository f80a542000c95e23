package lsp

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/lsp/lsptest"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files of testdata/")

// resumedSession is testdata/resumed-session.json: what an editor got live for a session (its
// questions, the updates, and what the user did with the changes) and the history a restarted
// server gives for it. The editors' own tests rebuild their chat from both and compare.
const resumedSession = "testdata/resumed-session.json"

// liveStep is one thing a chat learned live: a question asked, an update streamed, or the
// outcome of a Keep or Undo the user clicked.
type liveStep struct {
	Ask    string          `json:"ask,omitempty"`
	Update json.RawMessage `json:"update,omitempty"`
	Review *liveReview     `json:"review,omitempty"`
}

type liveReview struct {
	Turn   int      `json:"turn"`
	Paths  []string `json:"paths"`
	Review string   `json:"review"`
	Reason string   `json:"reason,omitempty"`
}

func calls(fcs ...*geminitest.FunctionCall) geminitest.Turn {
	var t geminitest.Turn
	for _, fc := range fcs {
		t.Parts = append(t.Parts, geminitest.Part{FunctionCall: fc})
	}
	return t
}

// TestHistoryAfterRestartShowsEditsAndChanges: after a restart on the same state, reprise.history
// gives each edit the diff its tool_call_update carried, and each turn end the files turn_end
// listed, with what the user did since: kept, undone, an undo refused with its reason, or nothing.
func TestHistoryAfterRestartShowsEditsAndChanges(t *testing.T) {
	opts := envOpts{editor: lsptest.Options{Experimental: true}, files: map[string]string{
		"notes.txt": "# Notes\n\nRemember the milk.\n", "todo.txt": "one\ntwo\n",
	}}
	e := newEnv(t, opts,
		call("read_file", map[string]any{"path": "notes.txt"}),
		text("They say remember the milk."),
		calls(
			&geminitest.FunctionCall{Name: "edit_file", Args: map[string]any{"path": "notes.txt", "old": "the milk", "new": "the oat milk"}},
			&geminitest.FunctionCall{Name: "write_file", Args: map[string]any{"path": "chores.md", "content": "# Chores\n\n- shopping\n"}},
			&geminitest.FunctionCall{Name: "edit_file", Args: map[string]any{"path": "todo.txt", "old": "two", "new": "TWO"}},
			&geminitest.FunctionCall{Name: "write_file", Args: map[string]any{"path": "extra.md", "content": "extra\n"}},
		),
		text("Tidied: notes.txt, chores.md, todo.txt and extra.md."),
	)
	id := e.ask("What do the notes say?", "")
	e.turnEnd(id)
	first := len(rawUpdates(e, id))
	e.ask("Tidy the notes", id)
	end := e.turnEnd(id)
	if got := len(end.Update.Changes); got != 4 {
		t.Fatalf("turn_end lists %d changed files, want 4: %+v", got, end.Update)
	}
	steps := []liveStep{{Ask: "What do the notes say?"}}
	for i, u := range rawUpdates(e, id) {
		if i == first {
			steps = append(steps, liveStep{Ask: "Tidy the notes"})
		}
		steps = append(steps, liveStep{Update: u})
	}
	steps = append(steps, review(t, e, id)...)

	var live historyResult
	if err := e.ed.Execute(e.ctx, CommandHistory, SessionArgs{SessionID: id}, &live); err != nil {
		t.Fatal(err)
	}
	e2 := e.restart(opts)
	if err := e2.ed.Execute(e2.ctx, CommandResume, SessionArgs{SessionID: id}, nil); err != nil {
		t.Fatal(err)
	}
	var h historyResult
	if err := e2.ed.Execute(e2.ctx, CommandHistory, SessionArgs{SessionID: id}, &h); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(live, h); diff != "" {
		t.Errorf("history after the restart differs (-before +after):\n%s", diff)
	}
	checkHistory(t, e, id, h)
	golden(t, e.ws, id, steps, h)
}

// rawUpdates are the session's reprise/sessionUpdate updates as they came.
func rawUpdates(e *env, id string) []json.RawMessage {
	var out []json.RawMessage
	for _, raw := range e.ed.Notifications(MethodSessionUpdate) {
		var p struct {
			SessionID string          `json:"sessionId"`
			Update    json.RawMessage `json:"update"`
		}
		if json.Unmarshal(raw, &p) == nil && p.SessionID == id {
			out = append(out, p.Update)
		}
	}
	return out
}

// review does what a user of the Changes list does after turn 2, and returns the outcomes as the
// chat records them: todo.txt, edited by the user since, cannot be undone; chores.md is kept;
// notes.txt is undone; extra.md is left.
func review(t *testing.T, e *env, id string) []liveStep {
	t.Helper()
	if err := os.WriteFile(filepath.Join(e.ws, "todo.txt"), []byte("one\nTWO\nmine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	two := 2
	err := e.ed.Execute(e.ctx, CommandRestore, RestoreArgs{SessionID: id, Turn: two, Paths: &[]string{"todo.txt"}}, nil)
	if err == nil {
		t.Fatal("undoing todo.txt, edited by the user, was not refused")
	}
	_, msg := rpcError(t, err)
	_, reason, _ := strings.Cut(msg, "todo.txt: ")
	var kept keepResult
	if err := e.ed.Execute(e.ctx, CommandKeep, KeepArgs{SessionID: id, Turn: two, Paths: []string{"chores.md"}}, &kept); err != nil || len(kept.Kept) != 1 {
		t.Fatalf("reprise.keep = %+v, %v", kept, err)
	}
	var res restoreResult
	if err := e.ed.Execute(e.ctx, CommandRestore, RestoreArgs{SessionID: id, Turn: two, Paths: &[]string{"notes.txt"}}, &res); err != nil || len(res.Restored) != 1 {
		t.Fatalf("undo notes.txt = %+v, %v", res, err)
	}
	return []liveStep{
		{Review: &liveReview{Turn: two, Paths: []string{"todo.txt"}, Review: ReviewRefused, Reason: reason}},
		{Review: &liveReview{Turn: two, Paths: []string{"chores.md"}, Review: ReviewKept}},
		{Review: &liveReview{Turn: two, Paths: []string{"notes.txt"}, Review: ReviewUndone}},
	}
}

// checkHistory holds the history to what the live updates said.
func checkHistory(t *testing.T, e *env, id string, h historyResult) {
	t.Helper()
	content := map[string][]toolContent{}
	for _, u := range e.updates(id, UpdateToolCallUpdate) {
		content[u.ToolCallID] = u.ToolContent
	}
	var tools, diffs int
	var ends []historyEntry
	for _, en := range h.Entries {
		switch en.Kind {
		case EntryTool:
			tools++
			if diff := cmp.Diff(content[en.ToolCallID], en.Content); diff != "" {
				t.Errorf("tool %s %q: content differs from its tool_call_update (-live +history):\n%s", en.ToolCallID, en.Title, diff)
			}
			if len(en.Content) > 0 {
				diffs++
			}
			if en.RawInput["path"] == nil {
				t.Errorf("tool %s has no rawInput: %+v", en.ToolCallID, en)
			}
		case EntryTurnEnd:
			ends = append(ends, en)
		}
	}
	if tools != 5 || diffs != 4 || len(ends) != 2 {
		t.Fatalf("%d tools (%d with diffs) and %d turn ends in %+v", tools, diffs, len(ends), h.Entries)
	}
	got := map[string]string{}
	for _, f := range ends[1].Changes {
		got[f.Path] = f.Review
		if f.Review == ReviewRefused {
			got[f.Path] += ": " + f.Reason
		}
	}
	want := map[string]string{"notes.txt": ReviewUndone, "chores.md": ReviewKept, "extra.md": ReviewPending,
		"todo.txt": ReviewRefused + ": changed since the agent last wrote it; not restored, so that edit is kept"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("turn 2's changes (-want +got):\n%s", diff)
	}
	if ends[1].StopReason != StopEndTurn || ends[1].Calls != 4 || len(ends[0].Changes) != 0 {
		t.Errorf("turn ends = %+v", ends)
	}
}

// golden writes the session as the editors' tests read it, the workspace as /ws and the session
// as s1, and holds it to testdata/ (go test -run TestHistoryAfterRestart -update rewrites it).
// turn_end's totals are left out: they vary with the workspace path's length in the prompt.
func golden(t *testing.T, ws, id string, steps []liveStep, h historyResult) {
	t.Helper()
	for i, s := range steps {
		if s.Update == nil {
			continue
		}
		var u map[string]any
		if err := json.Unmarshal(s.Update, &u); err != nil {
			t.Fatal(err)
		}
		if fig, ok := u["turn"].(map[string]any); ok {
			delete(fig, "totals")
		}
		steps[i].Update, _ = json.Marshal(u)
	}
	b, err := json.MarshalIndent(map[string]any{"sessionId": id, "live": steps, "history": h.Entries}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.ReplaceAll(b, []byte(ws), []byte("/ws"))
	b = append(bytes.ReplaceAll(b, []byte(id), []byte("s1")), '\n')
	if *updateGolden {
		if err := os.WriteFile(resumedSession, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(resumedSession)
	if err != nil {
		t.Fatalf("%v (go test ./lsp -run TestHistoryAfterRestart -update writes it)", err)
	}
	if diff := cmp.Diff(string(want), string(b)); diff != "" {
		t.Errorf("%s is not what the server sends (-file +now; -update rewrites it):\n%s", resumedSession, diff)
	}
}

// TestKeepArguments: reprise.keep records only files the turn changed, inside the workspace.
func TestKeepArguments(t *testing.T) {
	e := newEnv(t, envOpts{editor: lsptest.Options{Experimental: true}, files: map[string]string{"a.txt": "a\n", "b.txt": "b\n"}},
		call("edit_file", map[string]any{"path": "a.txt", "old": "a", "new": "A"}), text("done"))
	id := e.ask("edit a", "")
	e.turnEnd(id)
	for _, tt := range []struct {
		args KeepArgs
		want string
	}{
		{KeepArgs{SessionID: id, Turn: 0, Paths: []string{"a.txt"}}, "turn must be a turn number"},
		{KeepArgs{SessionID: id, Turn: 1}, "paths or hunks is required"},
		{KeepArgs{SessionID: id, Turn: 1, Paths: []string{"a.txt"}, Hunks: []string{"h1"}}, "not both"},
		{KeepArgs{SessionID: id, Turn: 1, Hunks: []string{"h000000000000"}}, "not among the agent's changes now"},
		{KeepArgs{SessionID: id, Turn: 1, Paths: []string{" "}}, "must not hold an empty path"},
		{KeepArgs{SessionID: id, Turn: 1, Paths: []string{"../a.txt"}}, "outside the workspace"},
		{KeepArgs{SessionID: id, Turn: 1, Paths: []string{"b.txt"}}, "not changed by the agent in turn 1"},
		{KeepArgs{SessionID: id, Turn: 2, Paths: []string{"a.txt"}}, "not changed by the agent in turn 2"},
	} {
		code, msg := rpcError(t, e.ed.Execute(e.ctx, CommandKeep, tt.args, nil))
		if code != -32602 || !strings.Contains(msg, tt.want) {
			t.Errorf("%+v: %d %q, want -32602 saying %q", tt.args, code, msg, tt.want)
		}
	}
	var kept keepResult
	if err := e.ed.Execute(e.ctx, CommandKeep, KeepArgs{SessionID: id, Turn: 1, Paths: []string{filepath.Join(e.ws, "a.txt"), "a.txt"}}, &kept); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a.txt"}, kept.Kept); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
}
