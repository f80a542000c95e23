package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/gemini"
	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/contextwin"
)

// hanging is a model turn that answers only after an hour: the turn runs until it is cancelled.
var hanging = geminitest.Turn{Delay: "1h", Parts: []geminitest.Part{{Text: "late"}}}

func answer(text string) geminitest.Turn {
	return geminitest.Turn{Parts: []geminitest.Part{{Text: text}}}
}

// startHanging starts a turn of l that runs until cancelled, in the background; the channel
// gets the turn's stop reason.
func startHanging(t *testing.T, srv *geminitest.Server, r *Runner, l *Live) <-chan agent.StopReason {
	t.Helper()
	asked := len(srv.Requests())
	turn, err := r.Start(t.Context(), l, false)
	if err != nil {
		t.Fatal(err)
	}
	events := turn.Run("wait for me")
	stop := make(chan agent.StopReason, 1)
	go func() {
		defer turn.End()
		reason := agent.StopReason("none")
		for ev, err := range events {
			if err == nil && ev.Type == agent.EventTurnEnd {
				reason = ev.End.StopReason
			}
		}
		stop <- reason
	}()
	for len(srv.Requests()) == asked { // the model has the request: it hangs
		time.Sleep(time.Millisecond)
	}
	return stop
}

// TestOneTurnAtATime: a second turn is refused with ErrBusy while one runs, through Start and
// through Live.Run; Stop cancels the running one and waits for it; a waiting Start gets the slot
// once the turn it waited for has ended; the next turn then runs.
func TestOneTurnAtATime(t *testing.T) {
	srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{hanging, answer("second"), answer("third")}})
	defer srv.Close()
	r := newHost(t, srv, t.TempDir())
	l, err := r.Open(t.Context(), Spec{Workspace: t.TempDir(), Model: "gemini-3.8-flash"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(context.Background(), l.ID())
	stop := startHanging(t, srv, r, l)
	if _, err := r.Start(t.Context(), l, false); !errors.Is(err, ErrBusy) {
		t.Errorf("Start while a turn runs: %v, want ErrBusy", err)
	}
	for _, err := range l.Run(t.Context(), "me too") {
		if !errors.Is(err, ErrBusy) {
			t.Errorf("Run while a turn runs: %v, want ErrBusy", err)
		}
	}
	got := make(chan error, 1)
	go func() { // the replacing prompt waits for the cancelled one
		turn, err := r.Start(t.Context(), l, true)
		if err == nil {
			turn.End()
		}
		got <- err
	}()
	if !r.Stop(t.Context(), l) {
		t.Fatal("Stop found no turn running")
	}
	if reason := <-stop; reason != agent.StopCancelled {
		t.Errorf("the stopped turn ended with %q, want cancelled", reason)
	}
	if err := <-got; err != nil {
		t.Errorf("the waiting Start: %v", err)
	}
	if r.Running(l) || r.Stop(t.Context(), l) {
		t.Error("a session with no turn is said to run one")
	}
	var answer string
	for ev, err := range l.Run(t.Context(), "again") {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == agent.EventText {
			answer += ev.Text
		}
	}
	if answer != "second" {
		t.Errorf("the next turn answered %q", answer)
	}
	if title := r.Title(l); title != "wait for me" {
		t.Errorf("title %q, want the first request's", title)
	}
}

// TestCapClosesTheLeastRecentIdle: at the cap, opening a session closes the least recently used
// idle one, which stays saved and resumes; when every open session is busy (a turn running, or a
// front-end using it) the new one is refused with FullError and nothing is closed.
func TestCapClosesTheLeastRecentIdle(t *testing.T) {
	srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{answer("one"), hanging}})
	defer srv.Close()
	r := newHost(t, srv, t.TempDir())
	r.MaxSessions = 2
	ws := t.TempDir()
	open := func() *Live {
		t.Helper()
		l, err := r.Open(t.Context(), Spec{Workspace: ws, Model: "gemini-3.8-flash"})
		if err != nil {
			t.Fatal(err)
		}
		r.Release(l)
		return l
	}
	first, second := open(), open()
	for _, err := range first.Run(t.Context(), "save me") { // on disk: it can be resumed
		if err != nil {
			t.Fatal(err)
		}
	}
	if l, err := r.Use(t.Context(), second.ID()); err != nil { // second is now the most recent
		t.Fatal(err)
	} else {
		r.Release(l)
	}
	third := open()
	if r.Lookup(first.ID()) != nil || r.Lookup(second.ID()) == nil || r.Lookup(third.ID()) == nil {
		t.Fatalf("open after the cap: %v, want second and third", ids(r))
	}
	// Every open session busy: one runs a turn, a front-end uses the other.
	stop := startHanging(t, srv, r, second)
	held, err := r.Use(t.Context(), third.ID())
	if err != nil {
		t.Fatal(err)
	}
	var full FullError
	if _, err := r.Open(t.Context(), Spec{Workspace: ws, Model: "gemini-3.8-flash"}); !errors.As(err, &full) || full.Limit != 2 {
		t.Errorf("open with every session busy: %v, want FullError{2}", err)
	}
	if _, err := r.Resume(t.Context(), first.ID(), Spec{Workspace: ws}); !errors.As(err, &full) {
		t.Errorf("resume with every session busy: %v, want FullError", err)
	}
	if got := ids(r); len(got) != 2 {
		t.Errorf("open after the refusals: %v", got)
	}
	r.Release(held)
	r.Stop(t.Context(), second)
	<-stop
	back, err := r.Resume(t.Context(), first.ID(), Spec{Workspace: ws})
	if err != nil {
		t.Fatalf("resume of the session closed at the cap: %v", err)
	}
	defer r.CloseAll()
	if back.Context().Turns != 1 {
		t.Errorf("resumed with %d turns, want 1", back.Context().Turns)
	}
	if r.Lookup(second.ID()) != nil && r.Lookup(third.ID()) != nil {
		t.Errorf("the cap is exceeded: %v", ids(r))
	}
}

// TestOwnMCPServersCloseWithTheSession: servers the session owns (ACP's) close with it, and when
// the session cannot be made (no model); shared ones (LSP's) are the front-end's to close.
func TestOwnMCPServersCloseWithTheSession(t *testing.T) {
	srv := geminitest.New(geminitest.Script{})
	defer srv.Close()
	r := newHost(t, srv, t.TempDir())
	own, shared := &fakeMCP{}, &fakeMCP{}
	a, err := r.Open(t.Context(), Spec{Workspace: t.TempDir(), External: own, OwnExternal: true})
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.Open(t.Context(), Spec{Workspace: t.TempDir(), External: shared})
	if err != nil {
		t.Fatal(err)
	}
	if a.External != own || b.External != shared {
		t.Error("the sessions do not tell their MCP servers")
	}
	if err := r.Close(t.Context(), a.ID()); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(t.Context(), a.ID()); !errors.Is(err, ErrNotOpen) {
		t.Errorf("second close: %v, want ErrNotOpen", err)
	}
	r.CloseAll()
	if own.closed != 1 || shared.closed != 0 {
		t.Errorf("closed: own %d times, shared %d times; want 1 and 0", own.closed, shared.closed)
	}
	failed := &fakeMCP{}
	r.Models = func(context.Context, string) (agent.Model, int, error) { return nil, 0, gemini.ErrNoAPIKey }
	if _, err := r.Open(t.Context(), Spec{Workspace: t.TempDir(), External: failed, OwnExternal: true}); err == nil {
		t.Fatal("opened without a model")
	}
	if failed.closed != 1 || len(r.List()) != 0 {
		t.Errorf("a session that failed to open: its servers closed %d times, %d sessions open", failed.closed, len(r.List()))
	}
}

// TestResumeOfAnOpenSession returns the hosted session rather than a second copy of its log;
// an unknown id is journal.ErrNotFound and takes no place under the cap.
func TestResumeOfAnOpenSession(t *testing.T) {
	srv := geminitest.New(geminitest.Script{})
	defer srv.Close()
	r := newHost(t, srv, t.TempDir())
	r.MaxSessions = 1
	ws := t.TempDir()
	l, err := r.Open(t.Context(), Spec{Workspace: ws, Model: "gemini-3.8-flash"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.CloseAll()
	again, err := r.Resume(t.Context(), l.ID(), Spec{Workspace: ws})
	if err != nil || again != l {
		t.Fatalf("resume of the open session: %p %v, want %p", again, err, l)
	}
	r.Release(again)
	r.Release(l)
	for i := range 3 {
		id := fmt.Sprintf("20260101-00000%d-abcdef", i)
		if _, err := r.Resume(t.Context(), id, Spec{Workspace: ws}); !errors.Is(err, journal.ErrNotFound) {
			t.Errorf("resume of unknown %s: %v", id, err)
		}
	}
	if r.Lookup(l.ID()) != l {
		t.Error("failed resumes closed the open session")
	}
}

func ids(r *Runner) []string {
	var out []string
	for _, l := range r.List() {
		out = append(out, l.ID())
	}
	slices.Sort(out)
	return out
}

// TestEventsBetweenTurns: the runner tells a session's usage, with the session's own thresholds,
// when it opens, when it resumes, after new settings and after its instructions change; nothing
// for a change to other files.
func TestEventsBetweenTurns(t *testing.T) {
	srv := geminitest.New(geminitest.Script{})
	defer srv.Close()
	r := newHost(t, srv, t.TempDir())
	var told []string
	r.Events = func(id string, ev agent.Event) {
		if ev.Type == agent.EventUsage {
			told = append(told, fmt.Sprintf("%s %.2f/%.2f", id[len(id)-6:], ev.Usage.CompactAt, ev.Usage.BlockAt))
		}
	}
	ws := t.TempDir()
	p := contextwin.DefaultPolicy()
	l, err := r.Open(t.Context(), Spec{Workspace: ws, Model: "gemini-3.8-flash", Config: agent.Config{ContextPolicy: p}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.CloseAll()
	short := l.ID()[len(l.ID())-6:]
	p.CompactAt, p.BlockAt = 0.6, 0.9
	r.Reconfigure(Settings{Policy: p})
	r.FilesChanged([]string{"main.go"}, false)
	if err := os.WriteFile(filepath.Join(ws, "AGENTS.md"), []byte("Answer in French."), 0o644); err != nil {
		t.Fatal(err)
	}
	r.FilesChanged([]string{"AGENTS.md"}, true)
	d := contextwin.DefaultPolicy()
	want := []string{
		fmt.Sprintf("%s %.2f/%.2f", short, d.CompactAt, d.BlockAt),
		short + " 0.60/0.90",
		short + " 0.60/0.90",
	}
	if !slices.Equal(told, want) {
		t.Errorf("usage told: %q, want %q", told, want)
	}
	if l.Context().Breakdown.CustomInstructions == 0 {
		t.Error("the changed instructions were not read again")
	}
}

// TestSessionsTellBetweenTurns: what a session tells on its own between turns (a background
// compaction landing, a note of its cache: agent.Options.Between) reaches the front-end's sink
// and the observer under the session's id.
func TestSessionsTellBetweenTurns(t *testing.T) {
	srv := geminitest.New(geminitest.Script{})
	defer srv.Close()
	r := newHost(t, srv, t.TempDir())
	var between func(agent.Event)
	r.Observe = func(o agent.Options) { between = o.Between }
	type told struct {
		id  string
		typ agent.EventType
	}
	var events, observed []told
	r.Events = func(id string, ev agent.Event) { events = append(events, told{id, ev.Type}) }
	r.ObserveEvents = func(id string, ev agent.Event) { observed = append(observed, told{id, ev.Type}) }
	l, err := r.Open(t.Context(), Spec{Workspace: t.TempDir(), Model: "gemini-3.8-flash"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.CloseAll()
	if between == nil {
		t.Fatal("the session was opened without a Between sink")
	}
	events, observed = nil, nil
	between(agent.Event{Type: agent.EventWarning, Text: "the explicit cache could not be kept alive"})
	want := []told{{l.ID(), agent.EventWarning}}
	if !slices.Equal(events, want) || !slices.Equal(observed, want) {
		t.Errorf("told %v, observed %v; want %v", events, observed, want)
	}
}
