package lsp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"

	"github.com/reprise-dev/reprise/lsp/lsptest"
)

// TestReviewChanges is issue 12's review through the real server: a turn edits one file and
// creates another, the edits arrive as ACP diffs, reprise.changes lists both with their diffs, one
// file is undone and the other kept, and a user edit blocks only its own file.
func TestReviewChanges(t *testing.T) {
	allow := func(json.RawMessage) any { return map[string]string{"title": ActionAllowOnce} }
	e := newEnv(t, envOpts{editor: lsptest.Options{Experimental: true, Approve: allow}, files: map[string]string{"a.txt": "one\ntwo\n", "c.txt": "c\n"}},
		call("edit_file", map[string]any{"path": "a.txt", "old": "two", "new": "TWO"}),
		call("write_file", map[string]any{"path": "b.txt", "content": "new\n"}),
		call("edit_file", map[string]any{"path": "c.txt", "old": "c", "new": "C"}),
		text("done"),
	)
	id := e.ask("edit", "")
	e.turnEnd(id)
	ups := e.updates(id, UpdateToolCallUpdate)
	if len(ups) != 3 {
		t.Fatalf("%d tool_call_update, want 3", len(ups))
	}
	oldA := "one\ntwo\n"
	wantDiffs := []toolContent{
		{Type: "diff", Path: filepath.Join(e.ws, "a.txt"), OldText: &oldA, NewText: ptr("one\nTWO\n")},
		{Type: "diff", Path: filepath.Join(e.ws, "b.txt"), NewText: ptr("new\n")},
	}
	for i, want := range wantDiffs {
		if got := ups[i].ToolContent; len(got) != 1 || got[0].Type != want.Type || got[0].Path != want.Path || !eqPtr(got[0].OldText, want.OldText) || !eqPtr(got[0].NewText, want.NewText) {
			t.Errorf("update %d content = %s, want %+v", i, mustJSON(got), want)
		}
	}
	if !hasRaw(e.ed.Notifications(MethodSessionUpdate), `"content":[{"type":"diff","path":`) {
		t.Error("no tool_call_update carries content:[{type:diff,path…}] on the wire")
	}

	var ch changesResult
	if err := e.ed.Execute(e.ctx, CommandChanges, ChangesArgs{SessionID: id}, &ch); err != nil {
		t.Fatal(err)
	}
	if len(ch.Files) != 3 || ch.Files[0].Path != "a.txt" || ch.Files[0].State != "modified" || ch.Files[0].Added != 1 || ch.Files[0].Removed != 1 ||
		!strings.Contains(ch.Files[0].Diff, "-two\n+TWO\n") || ch.Files[1].State != "created" || ch.Files[0].AbsPath != filepath.Join(e.ws, "a.txt") {
		t.Fatalf("reprise.changes = %s", mustJSON(ch))
	}

	// The user edits c.txt: undoing a.txt and c.txt restores a.txt, refuses c.txt; b.txt stays.
	os.WriteFile(filepath.Join(e.ws, "c.txt"), []byte("user\n"), 0o644)
	var res restoreResult
	if err := e.ed.Execute(e.ctx, CommandRestore, RestoreArgs{SessionID: id, Turn: 1, Paths: &[]string{"a.txt", "c.txt"}}, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Restored) != 1 || res.Restored[0] != "a.txt" || len(res.Refused) != 1 || res.Refused[0].Path != "c.txt" || !strings.Contains(res.Refused[0].Reason, "changed since the agent") {
		t.Errorf("restore = %s", mustJSON(res))
	}
	read := func(name string) string { b, _ := os.ReadFile(filepath.Join(e.ws, name)); return string(b) }
	if read("a.txt") != "one\ntwo\n" || read("b.txt") != "new\n" || read("c.txt") != "user\n" {
		t.Errorf("a=%q b=%q c=%q", read("a.txt"), read("b.txt"), read("c.txt"))
	}
	// c.txt alone: nothing restored is an error naming it.
	err := e.ed.Execute(e.ctx, CommandRestore, RestoreArgs{SessionID: id, Turn: 1, Paths: &[]string{"c.txt"}}, nil)
	if code, msg := rpcError(t, err); code != int(jsonrpc2.InvalidRequest) || !strings.Contains(msg, "c.txt") {
		t.Errorf("restoring only the user-changed file: %d %s", code, msg)
	}
	if err := e.ed.Execute(e.ctx, CommandChanges, ChangesArgs{SessionID: id}, &ch); err != nil {
		t.Fatal(err)
	}
	if len(ch.Files) != 2 || ch.Files[0].Path != "b.txt" || !ch.Files[1].UserChanged {
		t.Errorf("changes after the undo = %s", mustJSON(ch))
	}

	for _, tc := range []struct {
		name, command string
		arg           any
		want          string
	}{
		{"outside", CommandRestore, map[string]any{"turn": 1, "paths": []string{"../x"}}, "outside the workspace"},
		{"unchanged", CommandRestore, map[string]any{"turn": 1, "paths": []string{"a.txt"}}, "not changed by the agent"},
		{"empty paths", CommandRestore, map[string]any{"turn": 1, "paths": []string{}}, "paths is empty"},
		{"paths type", CommandRestore, map[string]any{"turn": 1, "paths": "b.txt"}, "paths must be an array, got a string"},
		{"turn 0", CommandChanges, map[string]any{"turn": 0}, "turn must be"},
		{"turn type", CommandChanges, map[string]any{"turn": "1"}, "turn must be a int"},
	} {
		err := e.ed.Execute(e.ctx, tc.command, tc.arg, nil)
		if code, msg := rpcError(t, err); code != int(jsonrpc2.InvalidParams) || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: %d %q, want InvalidParams with %q", tc.name, code, msg, tc.want)
		}
	}
}

func ptr(s string) *string { return &s }

func eqPtr(a, b *string) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

func hasRaw(raws []json.RawMessage, sub string) bool {
	for _, r := range raws {
		if strings.Contains(string(r), sub) {
			return true
		}
	}
	return false
}
