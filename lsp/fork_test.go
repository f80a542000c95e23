package lsp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reprise-dev/reprise/lsp/lsptest"
)

// TestForkOverLSP: reprise.fork from a turn makes a new session, the current one, that holds
// nothing from that turn on; it says the files were not touched and which turn of the parent
// reprise.restore would take back; bad points and sessions are InvalidParams, nothing made.
func TestForkOverLSP(t *testing.T) {
	opts := envOpts{editor: lsptest.Options{Experimental: true}, files: map[string]string{"a.txt": "alpha\n"}}
	e := newEnv(t, opts,
		text("First answer."),
		call("write_file", map[string]any{"path": "a.txt", "content": "changed\n"}),
		text("Changed a.txt."),
		text("The fork answers."))
	id := e.ask("First question.", "")
	e.turnEnd(id)
	e.turnEnd(e.ask("Change a.txt.", id))
	for _, tt := range []struct {
		arg  ForkArgs
		want string
	}{
		{ForkArgs{SessionID: id, Checkpoint: 9}, "reprise.fork: fork session " + id + ": no checkpoint 9 (it has 0)"},
		{ForkArgs{SessionID: id, Turn: 7}, "reprise.fork: fork session " + id + ": no turn 7 (it has 2)"},
		{ForkArgs{SessionID: id, Turn: 1, Checkpoint: 1}, "reprise.fork: give a checkpoint or a turn (1 or more), not both"},
		{ForkArgs{SessionID: "20260101-000000-abcdef", Turn: 1}, `unknown session "20260101-000000-abcdef"`},
	} {
		err := e.ed.Execute(e.ctx, CommandFork, tt.arg, nil)
		if code, msg := rpcError(t, err); code != -32602 || msg != tt.want {
			t.Errorf("fork %+v: %d %q, want -32602 %q", tt.arg, code, msg, tt.want)
		}
	}
	var sessions []struct {
		ID string `json:"sessionId"`
	}
	if err := e.ed.Execute(e.ctx, CommandSessions, nil, &sessions); err != nil || len(sessions) != 1 {
		t.Fatalf("sessions after refused forks: %+v, %v", sessions, err)
	}
	var f forkResult
	if err := e.ed.Execute(e.ctx, CommandFork, ForkArgs{Turn: 2}, &f); err != nil {
		t.Fatal(err)
	}
	if f.SessionID == "" || f.SessionID == id || f.Parent != id || f.From != "turn 2" || f.RestoreTurn != 2 ||
		!strings.Contains(f.Note, "the files on disk are as the parent session left them") {
		t.Errorf("reprise.fork = %+v", f)
	}
	if b, _ := os.ReadFile(filepath.Join(e.ws, "a.txt")); string(b) != "changed\n" {
		t.Errorf("the fork touched a.txt: %q", b)
	}
	var h historyResult
	if err := e.ed.Execute(e.ctx, CommandHistory, SessionArgs{}, &h); err != nil || h.SessionID != f.SessionID {
		t.Fatalf("the current session after the fork: %+v, %v", h.SessionID, err)
	}
	for _, en := range h.Entries {
		if en.Turn >= 2 || strings.Contains(en.Text, "Change a.txt.") {
			t.Errorf("the fork's history holds turn 2: %+v", en)
		}
	}
	e.turnEnd(e.ask("Go another way.", f.SessionID))
	reqs := e.srv.Requests()
	if got := requestText(reqs[len(reqs)-1]); strings.Contains(got, "Change a.txt.") || !strings.Contains(got, "First answer.") {
		t.Errorf("the fork's call sends:\n%s", got)
	}
	// The parent is unchanged, and resumes on its own.
	var ph historyResult
	if err := e.ed.Execute(e.ctx, CommandHistory, SessionArgs{SessionID: id}, &ph); err != nil {
		t.Fatal(err)
	}
	if last := ph.Entries[len(ph.Entries)-2]; !strings.Contains(last.Text, "Changed a.txt.") {
		t.Errorf("the parent's history ends %+v", ph.Entries[len(ph.Entries)-2:])
	}
}
