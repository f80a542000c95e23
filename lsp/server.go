package lsp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/mcp"
	"github.com/reprise-dev/reprise/agent/secret"
	"github.com/reprise-dev/reprise/contextwin"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// Options configure a server.
type Options struct {
	Version string
	// NewModel builds the model client for a model name and returns its input token limit. The
	// command wires Gemini from the environment; tests wire the fake server.
	NewModel func(ctx context.Context, model string) (agent.Model, int, error)
	// NewProviderModel builds the client of a model on another provider than Gemini (the provider
	// settings); nil: only Gemini is offered.
	NewProviderModel func(ctx context.Context, p ModelProvider, model string) (agent.Model, int, error)
	// ListModels is the API's list of models for reprise.models, read again when refresh is
	// set, else possibly a copy cached for a day (cached true). Nil: the catalogue's alone.
	ListModels func(ctx context.Context, refresh bool) (listed []catalog.Listed, fetched time.Time, cached bool, err error)
	// ListProviderModels lists what another provider's server serves, for reprise.models when the
	// provider setting names one; nil: its models are not listed.
	ListProviderModels func(ctx context.Context, p ModelProvider) ([]catalog.Listed, error)
	// StateHome is where sessions are saved ($REPRISE_HOME), one directory per workspace.
	StateHome string
	// ConfigHome is the user's Reprise configuration directory: mcp.json (the user's MCP
	// servers) and the consents to start servers a workspace declares. "" reads no user file
	// and remembers no consent beyond the connection.
	ConfigHome string
	// UserSettings is the user settings file ($REPRISE_CONFIG, else settings.json in the config
	// directory): the settings of initializationOptions, read at initialize before them, for
	// clients whose every settings channel a project can reach. "" reads none.
	UserSettings string
	// Logger writes to stderr; stdout belongs to the protocol.
	Logger *slog.Logger
	// NoWatch turns the workspace watcher off (tests that do not need it).
	NoWatch bool
	// Observe, when set, sees the options of every session opened (runner.Runner.Observe).
	Observe func(agent.Options)
	// ObserveEvents, when set, sees every event a session tells (runner.Runner.ObserveEvents).
	ObserveEvents func(id string, ev agent.Event)
	// DefaultModel is used until a setting names another.
	DefaultModel string
	// Warnings found before the editor connected (a model endpoint that is not Google's) are
	// shown and logged once it is initialized; see startupWarnings.
	Warnings []string
	// IdleAfter closes a session idle this long, to free its memory and its log's lock; it
	// reopens when a command names it (runner.Runner.IdleAfter). 0: never. A server option, as
	// the limits are: whoever starts the server sets it (`reprise serve --idle-after`).
	IdleAfter time.Duration

	// Set by tests in this package only: the server's bounds are its own (limits.go), lowered
	// here to reach them in a test. maxMessageBytes bounds one incoming message (default 64 MiB);
	// limits bound what the connection can make the server hold.
	maxMessageBytes int64
	limits          limits
	// testServer is called with the server before it reads its first message, to install hooks
	// and observe its state.
	testServer func(*server)
}

// ErrExitWithoutShutdown is returned by Serve when the client sent exit before shutdown: the
// process should exit with code 1, as LSP asks.
var ErrExitWithoutShutdown = errors.New("exit without shutdown")

// server is one connection to one editor. It holds collaborators, each guarding its own state.
type server struct {
	opts Options
	log  *slog.Logger
	conn jsonrpc2.Conn
	// ctx is connection-scoped: cancelled when the connection ends. It is the one context kept in
	// a struct, the parent of every request's and turn's context.
	ctx    context.Context
	cancel context.CancelFunc

	life     *lifecycle
	calls    *inflight
	progress *progressTokens
	docs     *documents
	sessions *sessionSet
	mcp      *mcpHost
	cfg      *configStore
	trace    *traceLevel
	roots    *rootGate
	// Set by initialize before any other message is handled, then only read.
	root            string
	client          clientCaps
	pendingWarnings []string
	sandboxNotice   sync.Once        // the user is told once that commands cannot be sandboxed
	networkNotice   sync.Once        // the user is told once what allowing the network opens
	limitNotice     sync.Once        // the user is told once that commands get no process limit
	memoryNotice    sync.Once        // and that their memory is bounded per process only
	secrets         *secret.Redactor // the credentials of the server's environment, read once
	wg              sync.WaitGroup   // goroutines serving calls and background work
	spawnMu         sync.Mutex       // guards stopping, and orders wg.Add before stop's wg.Wait
	stopping        bool
	// onSweep, set by tests before the first message, hears how the start's sweep of explicit
	// caches ended (caches.go).
	onSweep func(deleted []string, err error)
}

// Serve runs the server over rwc until the client exits or the connection closes. A clean end
// (exit after shutdown, or the input closing) returns nil; a message too long to skip ends it
// with an error wrapping ErrMessageTooLong.
func Serve(ctx context.Context, rwc io.ReadWriteCloser, opts Options) error {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if opts.DefaultModel == "" {
		opts.DefaultModel = catalog.Builtin().DefaultModel()
	}
	if opts.NewModel == nil {
		return errors.New("serve: no model factory")
	}
	opts.limits = opts.limits.withDefaults()
	stream := newStream(rwc, streamOptions{MaxMessageBytes: opts.maxMessageBytes, Logger: opts.Logger})
	conn := jsonrpc2.NewConn(stream)
	sctx, cancel := context.WithCancel(ctx)
	s := &server{
		opts:     opts,
		conn:     conn,
		ctx:      sctx,
		cancel:   cancel,
		life:     newLifecycle(),
		calls:    newInflight(opts.limits.MaxInflightCalls),
		progress: newProgressTokens(),
		trace:    &traceLevel{},
		roots:    &rootGate{},
		secrets:  secret.FromEnv(os.Getenv),
		cfg: &configStore{
			c:        config{model: opts.DefaultModel, thinking: catalog.Auto, policy: contextwin.DefaultPolicy(), mcpToolBudget: mcp.DefaultToolBudget},
			reported: map[string]bool{},
			user:     userSpending(config{policy: contextwin.DefaultPolicy()}),
		},
	}
	s.log = slog.New(&clientLogHandler{next: opts.Logger.Handler(), srv: s})
	s.docs = newDocuments(opts.limits.MaxBufferBytes, s.log)
	s.sessions = newSessionSet(s)
	s.mcp = newMCPHost(s)
	if opts.testServer != nil {
		opts.testServer(s)
	}
	s.spawn(func() { s.sessions.runner.WatchIdle(s.ctx) }) // ends with the connection
	conn.Go(sctx, s.handle)

	var err error
	select {
	case <-conn.Done():
		e := conn.Err()
		if e != nil && !errors.Is(e, io.EOF) && !errors.Is(e, io.ErrClosedPipe) {
			s.log.Warn("connection ended", "error", e)
		}
		if errors.Is(e, ErrMessageTooLong) { // the editor sees the server stop, with a status
			err = fmt.Errorf("serve: %w", e)
		}
	case code := <-s.life.exited:
		if code != 0 {
			err = ErrExitWithoutShutdown
		}
	case <-ctx.Done():
	}
	s.stop()
	_ = conn.Close() // the editor is gone or said exit: nobody is left to hear of a failure
	// Closing does not interrupt a read blocked on a terminal or a blocking pipe (the process's
	// stdin): the read loop is left to the process's exit rather than waited for forever.
	select {
	case <-conn.Done():
	case <-time.After(2 * time.Second):
	}
	return err
}

// stop cancels every turn and request and waits for their goroutines. Nothing is spawned after it
// starts, so the wait cannot race a late Add.
func (s *server) stop() {
	s.spawnMu.Lock()
	s.stopping = true
	s.spawnMu.Unlock()
	s.sessions.runner.CancelAll()
	s.cancel()
	s.wg.Wait()
	s.sessions.runner.CloseAll()
	s.mcp.closeAll()
}

// spawn runs f in a goroutine owned by the server: it ends when f returns (f watches s.ctx) and
// stop waits for it. It reports false, and f never runs, once the server is stopping.
func (s *server) spawn(f func()) bool {
	s.spawnMu.Lock()
	defer s.spawnMu.Unlock()
	if s.stopping {
		return false // the connection is ending: the work would be cancelled at once
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f()
	}()
	return true
}

// notify sends a notification; a failure means the connection is going away and is only logged.
func (s *server) notify(method string, params any) {
	if err := s.conn.Notify(s.ctx, method, params); err != nil && s.ctx.Err() == nil {
		s.opts.Logger.Debug("notify failed", "method", method, "error", err)
	}
}

// lifecycle tracks initialize, shutdown and exit.
type lifecycle struct {
	mu          sync.Mutex // guards the fields below
	initialized bool       // initialize was answered
	started     bool       // the initialized notification was handled
	shutdown    bool
	exitOnce    sync.Once
	exited      chan int // receives the exit code once
}

func newLifecycle() *lifecycle { return &lifecycle{exited: make(chan int, 1)} }

func (l *lifecycle) state() (initialized, shutdown bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.initialized, l.shutdown
}

func (l *lifecycle) exit() {
	l.exitOnce.Do(func() {
		l.mu.Lock()
		code := 1
		if l.shutdown {
			code = 0
		}
		l.mu.Unlock()
		l.exited <- code
	})
}

// configStore holds the settings in force, and whether a pull of them is running.
type configStore struct {
	mu       sync.Mutex // guards the fields below
	c        config
	pulling  bool            // a workspace/configuration pull is running
	again    bool            // another pull was asked for while it ran
	reported map[string]bool // protected and spending settings the user was told were ignored
	user     spendingCaps    // the user's spending settings, fixed at initialize (spending.go)
	pushes   int             // settings pushed with didChangeConfiguration so far (pullStale)

	// applying makes an update and its application to the sessions one step, so two updates
	// never reach the sessions in the other order.
	applying sync.Mutex
}

// pushCount is what a pull notes before it asks: its answer is stale if a push came in since.
func (c *configStore) pushCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pushes
}

// startPull reports whether the caller should start a pull: false when one is running, which
// then runs once more.
func (c *configStore) startPull() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pulling {
		c.again = true
		return false
	}
	c.pulling = true
	return true
}

// pullAgain ends a pull; true if another was asked for meanwhile and the caller must run it.
func (c *configStore) pullAgain() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.again {
		c.again = false
		return true
	}
	c.pulling = false
	return false
}

func (c *configStore) get() config {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.c
}

// update applies settings of the user's level; it returns whether anything changed.
func (c *configStore) update(s Settings) (config, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.updateLocked(s)
}

// updateLocked is update with c.mu held.
func (c *configStore) updateLocked(s Settings) (config, bool, error) {
	n, err := c.c.apply(s)
	if err != nil {
		return c.c, false, fmt.Errorf("settings not applied: %w", err)
	}
	changed := n.model != c.c.model || n.thinking != c.c.thinking || n.compactionModel != c.c.compactionModel || n.subagents != c.c.subagents || n.policy != c.c.policy || fmt.Sprint(n.allow) != fmt.Sprint(c.c.allow) ||
		fmt.Sprint(n.prices) != fmt.Sprint(c.c.prices) || fmt.Sprint(n.models) != fmt.Sprint(c.c.models) || n.sandbox != c.c.sandbox || n.allowNetwork != c.c.allowNetwork ||
		!slices.Equal(n.hidePaths, c.c.hidePaths) || !slices.Equal(n.readPaths, c.c.readPaths) || n.provider != c.c.provider
	c.c = n
	return n, changed, nil
}
