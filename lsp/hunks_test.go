package lsp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"

	"github.com/reprise-dev/reprise/lsp/lsptest"
)

const cartOld = "package cart\n\nfunc A() int { return 1 }\n\nfunc B() int { return 2 }\n\nfunc C() int { return 3 }\n\nfunc D() int { return 4 }\n"
const cartNew = "package cart\n\nfunc A() int { return 10 }\n\nfunc B() int { return 2 }\nfunc B2() int { return 22 }\n\n\nfunc D() int { return 4 }\n"

// TestReviewByHunk is issue 37's review by hunk through the real server: reprise.changes lists
// the three changes of a rewritten file with ids; reprise.keep and reprise.restore take ids; a
// rejected hunk is reverted on disk alone; a hunk the user edited is refused with the reason; a
// plain client gets an undo and a keep per hunk as code actions on its lines, with the outcome
// shown; and the review survives a restart.
func TestReviewByHunk(t *testing.T) {
	allow := func(json.RawMessage) any { return map[string]string{"title": ActionAllowOnce} }
	o := envOpts{editor: lsptest.Options{Experimental: true, Approve: allow}, files: map[string]string{"cart.go": cartOld}}
	e := newEnv(t, o, call("write_file", map[string]any{"path": "cart.go", "content": cartNew}), text("done"))
	id := e.ask("rewrite", "")
	e.turnEnd(id)
	changes := func(e *env) fileChange {
		t.Helper()
		var ch changesResult
		if err := e.ed.Execute(e.ctx, CommandChanges, ChangesArgs{SessionID: id}, &ch); err != nil {
			t.Fatal(err)
		}
		if len(ch.Files) != 1 {
			t.Fatalf("reprise.changes = %s", mustJSON(ch))
		}
		return ch.Files[0]
	}
	f := changes(e)
	if len(f.Hunks) != 3 || f.Hunks[0].NewStart != 3 || f.Hunks[1].OldLines != 0 || f.Hunks[2].NewLines != 0 || f.Hunks[0].Review != "pending" {
		t.Fatalf("hunks = %s", mustJSON(f.Hunks))
	}
	if !strings.Contains(mustJSON(f), `"hunks":[{"id":"h`) {
		t.Errorf("on the wire: %s", mustJSON(f))
	}
	a, b, c := f.Hunks[0].ID, f.Hunks[1].ID, f.Hunks[2].ID
	read := func() string { d, _ := os.ReadFile(filepath.Join(e.ws, "cart.go")); return string(d) }

	// Bad arguments are refused, nothing touched.
	for _, tt := range []struct {
		args RestoreArgs
		code int
		want string
	}{
		{RestoreArgs{SessionID: id, Turn: 1, Hunks: []string{"h1"}, Paths: &[]string{"cart.go"}}, -32602, "not both"},
		{RestoreArgs{SessionID: id, Turn: 1, Hunks: []string{""}}, -32602, "empty id"},
		{RestoreArgs{SessionID: id, Turn: 1, Hunks: []string{"h000000000000"}}, -32600, "no longer in the file"},
	} {
		code, msg := rpcError(t, e.ed.Execute(e.ctx, CommandRestore, tt.args, nil))
		if code != tt.code || !strings.Contains(msg, tt.want) {
			t.Errorf("%+v: %d %q, want %d saying %q", tt.args, code, msg, tt.code, tt.want)
		}
	}
	if read() != cartNew {
		t.Fatal("a refused call touched the file")
	}

	// The middle hunk rejected: only its line goes.
	var res restoreResult
	if err := e.ed.Execute(e.ctx, CommandRestore, RestoreArgs{SessionID: id, Turn: 1, Hunks: []string{b}}, &res); err != nil || !slices.Equal(res.Hunks, []string{b}) {
		t.Fatalf("restore b: %v %+v", err, res)
	}
	if want := strings.Replace(cartNew, "func B2() int { return 22 }\n", "", 1); read() != want {
		t.Errorf("after rejecting B2:\n%s", read())
	}
	var kept keepResult
	if err := e.ed.Execute(e.ctx, CommandKeep, KeepArgs{SessionID: id, Turn: 1, Hunks: []string{a}}, &kept); err != nil || !slices.Equal(kept.Kept, []string{"cart.go"}) {
		t.Fatalf("keep a: %v %+v", err, kept)
	}
	f = changes(e)
	if len(f.Hunks) != 2 || f.Hunks[0].ID != a || f.Hunks[0].Review != "kept" || f.Hunks[1].ID != c || f.HunksUndone != 1 {
		t.Errorf("after one rejected, one kept: %s", mustJSON(f))
	}

	// A plain client: on the gap C left, an undo and a keep; on A's line, the undo only (kept).
	titles := func(line int) []string {
		var out []string
		for _, x := range e.codeActions("cart.go", at(line, 0), nil) {
			if x.Command.Command == CommandUndoHunk || x.Command.Command == CommandKeepHunk {
				out = append(out, x.Title)
			}
		}
		return out
	}
	if got := titles(2); !slices.Equal(got, []string{"Reprise: undo the agent's change at line 3"}) {
		t.Errorf("on A's line: %q", got)
	}
	if got := titles(5); !slices.Equal(got, []string{"Reprise: undo the agent's change at line 6 (1 removed)", "Reprise: keep the agent's change at line 6 (1 removed)"}) {
		t.Errorf("beside the removed C: %q", got)
	}
	if got := titles(0); len(got) != 0 {
		t.Errorf("on an unchanged line: %q", got)
	}
	var undoC action
	for _, x := range e.codeActions("cart.go", at(6, 0), nil) {
		if x.Command.Command == CommandUndoHunk {
			undoC = x
		}
	}
	if err := e.ed.Execute(e.ctx, undoC.Command.Command, undoC.Command.Arguments[0], nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ed.AwaitNotification(e.ctx, "window/showMessage", func(p json.RawMessage) bool {
		return strings.Contains(string(p), "undid the change in cart.go")
	}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(read(), "func C() int { return 3 }") {
		t.Errorf("C not back:\n%s", read())
	}
	// Executed again, the same action is refused with the reason, shown as a warning.
	err := e.ed.Execute(e.ctx, undoC.Command.Command, undoC.Command.Arguments[0], nil)
	if code, msg := rpcError(t, err); code != int(jsonrpc2.InvalidRequest) || !strings.Contains(msg, "no longer in the file") {
		t.Errorf("a second undo: %d %q", code, msg)
	}
	if _, err := e.ed.AwaitNotification(e.ctx, "window/showMessage", func(p json.RawMessage) bool {
		return strings.Contains(string(p), "not undone: this change is no longer in the file")
	}); err != nil {
		t.Fatal(err)
	}

	// After a restart, the review is the same.
	o.files = nil // the workspace as it is now
	e2 := e.restart(o)
	if err := e2.ed.Execute(e2.ctx, CommandResume, map[string]string{"sessionId": id}, nil); err != nil {
		t.Fatal(err)
	}
	f = changes(e2)
	if len(f.Hunks) != 1 || f.Hunks[0].ID != a || f.Hunks[0].Review != "kept" || f.HunksUndone != 2 {
		t.Errorf("resumed: %s", mustJSON(f))
	}
	var h historyResult
	if err := e2.ed.Execute(e2.ctx, CommandHistory, SessionArgs{SessionID: id}, &h); err != nil {
		t.Fatal(err)
	}
	var row fileChange
	for _, en := range h.Entries {
		for _, ch := range en.Changes {
			row = ch
		}
	}
	if row.Path != "cart.go" || row.HunksKept != 1 || row.HunksUndone != 2 || row.Review != "pending" {
		t.Errorf("history row: %s", mustJSON(row))
	}
}
