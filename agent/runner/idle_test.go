package runner

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/cmdpolicy"
	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/contextwin"
)

// clock is a simulated clock for the runner. It starts in 2100 so that the sessions' own stamps,
// taken from the real clock by the agent, are always older than the runner's: a session's
// activity is then when the runner last saw it used.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2100, 1, 1, 9, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}

// logBuffer keeps what a logger wrote, for the tests to read while sessions log from their
// goroutines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// idleHost is a runner on a simulated clock that closes sessions idle for 30 minutes, and its log.
func idleHost(t *testing.T, srv *geminitest.Server) (*Runner, *clock, *logBuffer) {
	r := newHost(t, srv, t.TempDir())
	c, logs := newClock(), &logBuffer{}
	r.Now, r.IdleAfter = c.Now, 30*time.Minute
	r.Logger = slog.New(slog.NewTextHandler(logs, nil))
	return r, c, logs
}

// opened opens a session of ws with spec's other fields, and releases it.
func opened(t *testing.T, r *Runner, spec Spec) *Live {
	t.Helper()
	if spec.Model == "" {
		spec.Model = "gemini-3.8-flash"
	}
	l, err := r.Open(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	r.Release(l)
	return l
}

// turn runs text as a turn of l and returns the answer.
func turn(t *testing.T, l *Live, text string) string {
	t.Helper()
	var answer string
	for ev, err := range l.Run(t.Context(), text) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == agent.EventText {
			answer += ev.Text
		}
	}
	return answer
}

// lastAsked is the body of the last model call.
func lastAsked(srv *geminitest.Server) string {
	reqs := srv.Requests()
	for _, r := range slices.Backward(reqs) {
		if strings.Contains(r.Path, "enerateContent") {
			return string(r.Body)
		}
	}
	return ""
}

// TestIdleSessionsClose: CloseIdle closes a session idle for IdleAfter, not a nanosecond before,
// and never one that runs a turn or that a front-end uses; the one closed stays saved and Use
// reopens it with its history, and its next turn runs. Both are logged.
func TestIdleSessionsClose(t *testing.T) {
	srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{answer("kiwi noted"), hanging, answer("kiwi")}})
	defer srv.Close()
	r, c, logs := idleHost(t, srv)
	defer r.CloseAll()
	ws := t.TempDir()
	start := c.Now()
	idle := opened(t, r, Spec{Workspace: ws})
	if got := turn(t, idle, "remember the word kiwi"); got != "kiwi noted" {
		t.Fatalf("first turn answered %q", got)
	}
	running := opened(t, r, Spec{Workspace: ws})
	stop := startHanging(t, srv, r, running)
	used := opened(t, r, Spec{Workspace: ws})
	held, err := r.Use(t.Context(), used.ID())
	if err != nil {
		t.Fatal(err)
	}

	if got := r.CloseIdle(start.Add(r.IdleAfter - time.Nanosecond)); len(got) != 0 {
		t.Errorf("closed before IdleAfter: %v", got)
	}
	if got := r.CloseIdle(start.Add(r.IdleAfter)); !slices.Equal(got, []string{idle.ID()}) {
		t.Errorf("closed at IdleAfter: %v, want only the idle %s", got, idle.ID())
	}
	if r.Lookup(idle.ID()) != nil || r.Lookup(running.ID()) != running || r.Lookup(used.ID()) != used {
		t.Errorf("open after the sweep: %v, want the running and the used one", ids(r))
	}
	if got := r.CloseIdle(start.Add(24 * time.Hour)); len(got) != 0 {
		t.Errorf("busy sessions closed: %v", got)
	}
	r.Release(held)
	r.Stop(t.Context(), running)
	<-stop

	c.advance(time.Hour)
	back, err := r.Use(t.Context(), idle.ID())
	if err != nil {
		t.Fatalf("Use of the session closed while idle: %v", err)
	}
	if back == idle || back.ID() != idle.ID() || back.Context().Turns != 1 {
		t.Errorf("reopened %p %s with %d turns, want a new host of %s with its turn", back, back.ID(), back.Context().Turns, idle.ID())
	}
	if got := turn(t, back, "which word?"); got != "kiwi" {
		t.Errorf("the turn after the reopening answered %q", got)
	}
	if asked := lastAsked(srv); !strings.Contains(asked, "remember the word kiwi") || !strings.Contains(asked, "which word?") {
		t.Errorf("the model was not given the history: %s", asked)
	}
	for _, want := range []string{`msg="session closed after being idle; using it reopens it" session=` + idle.ID(), `msg="session reopened from its log" session=` + idle.ID()} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log does not say %q:\n%s", want, logs)
		}
	}
	// Reopened an hour after the others were last used, on the runner's clock: they are idle now
	// that nothing holds them, it is not.
	r.Release(back)
	want := []string{running.ID(), used.ID()}
	slices.Sort(want)
	if got := r.CloseIdle(c.Now().Add(r.IdleAfter - time.Second)); !slices.Equal(got, want) {
		t.Errorf("closed %v, want the sessions no longer busy %v and not the one just used", got, want)
	}
}

// TestIdleNeverWithout: IdleAfter 0 closes nothing, however old; a session that could not be
// reopened unnoticed stays open however idle: one not saved, one with MCP servers of its own that
// cannot be built again.
func TestIdleNeverWithout(t *testing.T) {
	srv := geminitest.New(geminitest.Script{})
	defer srv.Close()
	r, c, _ := idleHost(t, srv)
	defer r.CloseAll()
	ws := t.TempDir()
	own := opened(t, r, Spec{Workspace: ws, External: &fakeMCP{}, OwnExternal: true})
	r.IdleAfter = 0
	if got := r.CloseIdle(c.advance(24 * time.Hour)); got != nil {
		t.Errorf("IdleAfter 0 closed %v", got)
	}
	r.WatchIdle(t.Context()) // returns at once
	r.IdleAfter = time.Minute
	unsaved := newHost(t, srv, "")
	unsaved.Now, unsaved.IdleAfter = c.Now, time.Minute
	defer unsaved.CloseAll()
	opened(t, unsaved, Spec{Workspace: ws})
	if got := append(r.CloseIdle(c.advance(24*time.Hour)), unsaved.CloseIdle(c.Now())...); len(got) != 0 {
		t.Errorf("closed sessions that cannot reopen: %v", got)
	}
	if r.Lookup(own.ID()) != own {
		t.Error("the session with its own servers was closed")
	}
}

// TestIdleRebuildsOwnServers: a session's own MCP servers close with it when it is idle, and it
// reopens with servers built anew and started, as its spec's NewExternal builds them.
func TestIdleRebuildsOwnServers(t *testing.T) {
	srv := geminitest.New(geminitest.Script{})
	defer srv.Close()
	r, c, _ := idleHost(t, srv)
	defer r.CloseAll()
	first := &fakeMCP{}
	var built []*fakeMCP
	l := opened(t, r, Spec{Workspace: t.TempDir(), External: first, OwnExternal: true,
		NewExternal: func() External { m := &fakeMCP{}; built = append(built, m); return m }})
	if got := r.CloseIdle(c.advance(time.Hour)); len(got) != 1 || first.closed != 1 {
		t.Fatalf("closed %v, its servers %d times; want it and them once", got, first.closed)
	}
	back, err := r.Use(t.Context(), l.ID())
	if err != nil {
		t.Fatal(err)
	}
	r.Release(back)
	if len(built) != 1 || back.External != built[0] || built[0].startCtx == nil || !built[0].declared {
		t.Fatalf("reopened with servers %v (built %d), want new ones started before the declarations", back.External, len(built))
	}
	if err := r.Close(t.Context(), l.ID()); err != nil || built[0].closed != 1 {
		t.Errorf("close: %v; the new servers closed %d times", err, built[0].closed)
	}
}

// TestCloseForgetsParked: Close of a session closed while idle forgets it (Use no longer
// reopens it, a second Close says it is not open), and it stays saved: Resume reopens it.
func TestCloseForgetsParked(t *testing.T) {
	srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{answer("ok")}})
	defer srv.Close()
	r, c, _ := idleHost(t, srv)
	defer r.CloseAll()
	ws := t.TempDir()
	l := opened(t, r, Spec{Workspace: ws})
	turn(t, l, "hello")
	if got := r.CloseIdle(c.advance(time.Hour)); len(got) != 1 {
		t.Fatalf("closed %v", got)
	}
	if err := r.Close(t.Context(), l.ID()); err != nil {
		t.Fatalf("Close of the parked session: %v", err)
	}
	if _, err := r.Use(t.Context(), l.ID()); !errors.Is(err, ErrNotOpen) {
		t.Errorf("Use after Close: %v, want ErrNotOpen", err)
	}
	if err := r.Close(t.Context(), l.ID()); !errors.Is(err, ErrNotOpen) {
		t.Errorf("second Close: %v, want ErrNotOpen", err)
	}
	back, err := r.Resume(t.Context(), l.ID(), Spec{Workspace: ws})
	if err != nil || back.Context().Turns != 1 {
		t.Fatalf("Resume after Close: %v", err)
	}
	r.Release(back)
}

// TestCapParksAndUseReopens: a session closed at the cap reopens on Use, closing the least
// recently used idle one in its turn (the cap holds), with its history and its command policy
// (what "Always allow" and Reconfigure added); a lazy session closed before its first turn
// reopens empty under its id and leaves nothing on disk.
func TestCapParksAndUseReopens(t *testing.T) {
	srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{answer("one"), answer("two")}})
	defer srv.Close()
	home := t.TempDir()
	r := newHost(t, srv, home)
	r.MaxSessions = 1
	defer r.CloseAll()
	ws := t.TempDir()
	first := opened(t, r, Spec{Workspace: ws, Model: "gemini-3.8-flash"})
	turn(t, first, "the first")
	first.Commands.AllowAlways("make lint")
	lazy := opened(t, r, Spec{Workspace: ws, Model: "gemini-3.8-flash", Lazy: true}) // closes first
	if r.Lookup(first.ID()) != nil {
		t.Fatalf("open past the cap: %v", ids(r))
	}
	p := contextwin.DefaultPolicy()
	p.CompactAt = 0.6
	r.Reconfigure(Settings{Policy: p, Allow: []string{"make test"}}) // reaches first, parked
	back, err := r.Use(t.Context(), first.ID())
	if err != nil {
		t.Fatalf("Use of the session closed at the cap: %v", err)
	}
	r.Release(back)
	if got := ids(r); !slices.Equal(got, []string{first.ID()}) {
		t.Errorf("open after the reopening: %v, want only %s", got, first.ID())
	}
	if back.Context().Turns != 1 || back.Context().Policy.CompactAt != 0.6 {
		t.Errorf("reopened with %d turns, compactAt %.2f; want 1 and the new setting", back.Context().Turns, back.Context().Policy.CompactAt)
	}
	for _, cmd := range []string{"make lint", "make test"} {
		if v := back.Commands.Check(cmd); v.Action != cmdpolicy.Allow {
			t.Errorf("%s after the reopening: %+v, want allowed as before", cmd, v)
		}
	}
	again, err := r.Use(t.Context(), lazy.ID())
	if err != nil {
		t.Fatalf("Use of the empty session closed at the cap: %v", err)
	}
	r.Release(again)
	if again.ID() != lazy.ID() || again.Context().Turns != 0 || again.Log == nil {
		t.Errorf("the empty session reopened as %s with %d turns", again.ID(), again.Context().Turns)
	}
	if _, err := os.Stat(filepath.Join(journal.WorkspaceDir(home, ws), "sessions", lazy.ID())); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the empty session is on disk: %v", err)
	}
	if got := turn(t, again, "now"); got != "two" {
		t.Errorf("the empty session's first turn answered %q", got)
	}
}

// TestUseReopensOnce: front-end calls that use a parked session at once reopen it once and share
// it; the runner's slot of the cap is not leaked.
func TestUseReopensOnce(t *testing.T) {
	srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{answer("ok")}})
	defer srv.Close()
	r, c, _ := idleHost(t, srv)
	r.MaxSessions = 1
	defer r.CloseAll()
	l := opened(t, r, Spec{Workspace: t.TempDir()})
	turn(t, l, "hello")
	r.CloseIdle(c.advance(time.Hour))
	const callers = 8
	got := make([]*Live, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			l, err := r.Use(context.Background(), l.ID())
			if err != nil {
				t.Error(err)
				return
			}
			got[i] = l
		})
	}
	wg.Wait()
	for _, g := range got {
		if g != got[0] || g == nil {
			t.Fatalf("the callers got different sessions: %p and %p", g, got[0])
		}
		r.Release(g)
	}
	if open := ids(r); len(open) != 1 {
		t.Errorf("open: %v", open)
	}
	if _, err := r.Open(t.Context(), Spec{Workspace: t.TempDir()}); err != nil { // its slot is free
		t.Errorf("open after the reopening: %v", err)
	}
}

// TestWatchIdle: the loop closes, on its ticker, a session idle past IdleAfter on the runner's
// clock, and ends with its context.
func TestWatchIdle(t *testing.T) {
	srv := geminitest.New(geminitest.Script{})
	defer srv.Close()
	r, c, logs := idleHost(t, srv)
	r.IdleAfter = time.Millisecond // a tick each millisecond of real time
	defer r.CloseAll()
	l := opened(t, r, Spec{Workspace: t.TempDir()})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { // ends when cancel is called
		defer close(done)
		r.WatchIdle(ctx)
	}()
	c.advance(time.Hour)
	for r.Lookup(l.ID()) != nil { // closed at a tick
		select {
		case <-t.Context().Done():
			t.Fatalf("not closed; the log:\n%s", logs)
		case <-time.After(time.Millisecond):
		}
	}
	cancel()
	<-done
}
