package lsp

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reprise-dev/reprise/lsp/lsptest"
)

// TestIdleSessionAnswers: a session the server closed while idle is listed saved and still
// current, and the editor's next question in it, as the current session or by its id, reopens it:
// the turn runs with the history.
func TestIdleSessionAnswers(t *testing.T) {
	var srv *server
	e := newEnv(t, envOpts{server: func(s *server) { srv = s; s.sessions.runner.IdleAfter = time.Minute }, editor: lsptest.Options{Experimental: true}},
		text("kiwi noted"), text("kiwi"), text("still kiwi"))
	id := e.ask("remember the word kiwi", "")
	e.turnEnd(id)
	idle := func() {
		t.Helper()
		r := srv.sessions.runner
		r.Stop(e.ctx, r.Lookup(id)) // past its turn_end, the turn may still be ending: wait for it
		// An hour on: the runner's clock is the real one here, and the session was used just now.
		if closed := r.CloseIdle(time.Now().Add(time.Hour)); !slices.Equal(closed, []string{id}) {
			t.Fatalf("closed while idle: %v, want %s", closed, id)
		}
		var list []SessionInfo
		if err := e.ed.Execute(e.ctx, CommandSessions, nil, &list); err != nil {
			t.Fatal(err)
		}
		if len(list) != 1 || !list[0].Saved || !list[0].Current {
			t.Errorf("sessions after the idle close: %+v, want it saved and current", list)
		}
	}
	for i, sessionID := range []string{"", id} {
		idle()
		if got := e.ask("which word?", sessionID); got != id {
			t.Fatalf("asked in %s, want %s", got, id)
		}
		if end := e.turnEnd(id); end.Update.StopReason != "end_turn" {
			t.Fatalf("turn %d after the reopening: %+v", i+2, end.Update)
		}
		reqs := e.srv.Requests()
		if last := requestText(reqs[len(reqs)-1]); !strings.Contains(last, "remember the word kiwi") {
			t.Errorf("the turn after the reopening lacks the history:\n%s", last)
		}
	}
}
