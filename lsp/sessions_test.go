package lsp

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/contextwin"
	"github.com/reprise-dev/reprise/lsp/lsptest"
)

// saveSession writes a one-turn session to st, as an earlier server would have; legacy removes
// its summary, as a server from before summaries would have left it.
func saveSession(t *testing.T, st *journal.Store, id string, legacy bool) {
	t.Helper()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	log, err := st.Create(journal.Meta{ID: id, Model: "gemini-2.5-flash", Created: at})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []journal.Record{
		{Time: at, Kind: journal.KindTurnStart, Turn: 1, Text: "title of " + id},
		{Time: at, Kind: journal.KindUsage, Usage: &contextwin.CallUsage{Prompt: 1234}},
		{Time: at, Kind: journal.KindTurnEnd, StopReason: StopEndTurn},
	} {
		if err := log.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}
	if legacy {
		if err := os.Remove(filepath.Join(st.Dir(id), journal.SummaryFile)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSessionsListDuringTurns: reprise.sessions answers while turns run, sessions open and their
// summaries are written, and while legacy logs get theirs from concurrent listings. Run it with
// -race: the listing reads the set of sessions under its lock and everything else after.
func TestSessionsListDuringTurns(t *testing.T) {
	const workers, rounds, saved = 2, 4, 6
	turns := make([]geminitest.Turn, workers*rounds)
	for i := range turns {
		turns[i] = text("done")
	}
	var srv *server
	e := newEnv(t, envOpts{server: func(s *server) { srv = s }, editor: lsptest.Options{Experimental: true}}, turns...)
	st := srv.sessions.store
	for i := range saved {
		saveSession(t, st, fmt.Sprintf("saved-%d", i), i%2 == 0)
	}

	// check verifies one listing: no error, the saved sessions as they were written.
	check := func(list []SessionInfo) error {
		seen := map[string]bool{}
		for _, s := range list {
			if seen[s.SessionID] {
				return fmt.Errorf("%s listed twice", s.SessionID)
			}
			seen[s.SessionID] = true
			if s.Error != "" {
				return fmt.Errorf("%s: %s", s.SessionID, s.Error)
			}
			if s.Saved && strings.HasPrefix(s.SessionID, "saved-") && (s.Title != "title of "+s.SessionID || s.Turns != 1 || s.Used != 1234) {
				return fmt.Errorf("saved session listed as %+v", s)
			}
		}
		for i := range saved {
			if id := fmt.Sprintf("saved-%d", i); !seen[id] {
				return fmt.Errorf("%s not listed", id)
			}
		}
		return nil
	}

	stop := make(chan struct{})
	var listers sync.WaitGroup
	for range 2 {
		listers.Go(func() { // ends when the turns are done
			for {
				select {
				case <-stop:
					return
				default:
				}
				var list []SessionInfo
				if err := e.ed.Execute(e.ctx, CommandSessions, nil, &list); err != nil {
					t.Errorf("reprise.sessions: %v", err)
					return
				}
				if err := check(list); err != nil {
					t.Errorf("reprise.sessions during turns: %v", err)
					return
				}
			}
		})
	}
	var ran sync.WaitGroup
	ids := make(chan string, workers*rounds)
	for range workers {
		ran.Go(func() { // each worker runs its turns one after another, in sessions of its own
			for range rounds {
				var res SessionResult
				if err := e.ed.Execute(e.ctx, CommandNewSession, nil, &res); err != nil {
					t.Errorf("reprise.newSession: %v", err)
					return
				}
				if err := e.ed.Execute(e.ctx, CommandAsk, AskArgs{Text: "go", SessionID: res.SessionID}, nil); err != nil {
					t.Errorf("reprise.ask: %v", err)
					return
				}
				if _, err := e.ed.AwaitTurnEnd(e.ctx, res.SessionID); err != nil {
					t.Errorf("turn_end of %s: %v", res.SessionID, err)
					return
				}
				ids <- res.SessionID
			}
		})
	}
	ran.Wait()
	close(stop)
	listers.Wait()
	close(ids)

	var list []SessionInfo
	if err := e.ed.Execute(e.ctx, CommandSessions, nil, &list); err != nil {
		t.Fatal(err)
	}
	if err := check(list); err != nil {
		t.Error(err)
	}
	byID := map[string]SessionInfo{}
	for _, s := range list {
		byID[s.SessionID] = s
	}
	for id := range ids {
		if s, ok := byID[id]; !ok || s.Saved || s.Turns != 1 {
			t.Errorf("session %s after its turn: %+v (listed: %v), want open with one turn", id, s, ok)
		}
	}
	if len(list) != saved+workers*rounds {
		t.Errorf("%d sessions listed, want %d", len(list), saved+workers*rounds)
	}
	// The listings wrote the legacy logs' summaries.
	for i := 0; i < saved; i += 2 {
		if _, err := os.Stat(filepath.Join(st.Dir(fmt.Sprintf("saved-%d", i)), journal.SummaryFile)); err != nil {
			t.Errorf("legacy log saved-%d has no summary after being listed: %v", i, err)
		}
	}
}

// TestSessionsCountTurnsApartFromCalls: reprise.sessions and reprise.context count the user's
// turns and the model calls apart; a turn with tool calls makes several calls. A saved session
// is counted the same way from its log.
func TestSessionsCountTurnsApartFromCalls(t *testing.T) {
	var srv *server
	e := newEnv(t, envOpts{server: func(s *server) { srv = s }, editor: lsptest.Options{Experimental: true},
		files: map[string]string{"a.txt": "alpha\n", "b.txt": "beta\n"}},
		call("read_file", map[string]any{"path": "a.txt"}),
		call("read_file", map[string]any{"path": "b.txt"}),
		text("Both read."),
		text("Hello."),
	)
	id := e.ask("read a.txt and b.txt", "")
	e.turnEnd(id)
	e.ask("hello", id)
	e.turnEnd(id)

	// A saved session: a first turn of two calls, a second of one.
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	log, err := srv.sessions.store.Create(journal.Meta{ID: "saved-1", Model: "gemini-3.8-flash", Created: at})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []journal.Record{
		{Time: at, Kind: journal.KindTurnStart, Turn: 1, Text: "read"},
		{Time: at, Kind: journal.KindUsage, Usage: &contextwin.CallUsage{Prompt: 100}},
		{Time: at, Kind: journal.KindUsage, Usage: &contextwin.CallUsage{Prompt: 200}},
		{Time: at, Kind: journal.KindTurnEnd, StopReason: StopEndTurn},
		{Time: at, Kind: journal.KindTurnStart, Turn: 2, Text: "again"},
		{Time: at, Kind: journal.KindUsage, Usage: &contextwin.CallUsage{Prompt: 300}},
		{Time: at, Kind: journal.KindTurnEnd, StopReason: StopEndTurn},
	} {
		if err := log.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}

	var list []SessionInfo
	if err := e.ed.Execute(e.ctx, CommandSessions, nil, &list); err != nil {
		t.Fatal(err)
	}
	type counts struct{ Turns, Calls int }
	got := map[string]counts{}
	for _, s := range list {
		got[s.SessionID] = counts{s.Turns, s.Calls}
	}
	want := map[string]counts{id: {Turns: 2, Calls: 4}, "saved-1": {Turns: 2, Calls: 3}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reprise.sessions counts (-want +got):\n%s", diff)
	}

	var view contextResult
	if err := e.ed.Execute(e.ctx, CommandContext, SessionArgs{SessionID: id}, &view); err != nil {
		t.Fatal(err)
	}
	if view.Turns != 2 || view.Calls != 4 || !strings.Contains(view.Text, "Session: 2 turns · 4 model calls · ") {
		t.Errorf("reprise.context: turns %d, calls %d, text:\n%s", view.Turns, view.Calls, view.Text)
	}
}
