package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent/secret"
	"github.com/reprise-dev/reprise/agent/tools"
)

// Defaults of Options.
const (
	DefaultStartTimeout = 20 * time.Second
	DefaultCallTimeout  = 120 * time.Second
)

// Options configure a Manager.
type Options struct {
	// Workspace is the folder ${workspaceFolder} stands for, and the working directory of stdio
	// servers without a cwd of their own.
	Workspace string
	// Servers are the servers to run, in the order their tools are declared. The caller has
	// already left out the workspace servers the user does not trust.
	Servers []ServerConfig
	// StartTimeout bounds each server's start and its listing of tools; DefaultStartTimeout if 0.
	StartTimeout time.Duration
	// CallTimeout bounds each tool call; DefaultCallTimeout if 0.
	CallTimeout time.Duration
	// Logger gets the servers' stderr and what went wrong; slog.Default() if nil.
	Logger *slog.Logger
	// Notify, if set, tells the user that a server failed to start or died: once per server.
	// It is called from the Manager's goroutines, so it must not wait on the Manager (Close).
	Notify func(server, message string)
	// Env is the base environment of stdio servers and of ${env:NAME}; if nil, Reprise's own
	// less its credentials (secret.WithoutCredentials): a server that needs a key names it in
	// its "env".
	Env []string
	// Version is Reprise's version, given to servers with the client's name.
	Version string
	// ToolBudget is what all MCP declarations may cost per request, in estimated tokens:
	// DefaultToolBudget if 0, no limit if negative. Past it, the tools that do not fit are
	// reached through the catalogue (mcp_find_tools, mcp_call_tool).
	ToolBudget int

	// transport, set by tests, replaces the transports the configuration describes.
	transport func(ServerConfig) (mcp.Transport, error)
}

// Manager runs the configured MCP servers and offers their tools as a tools.External. Servers
// start on the first Start or Declarations, all at once; the declarations are fixed from then on,
// so that the prompt's prefix stays cached even when a server dies. Safe for concurrent use.
type Manager struct {
	opts    Options
	servers []*server // in configuration order; the slice is fixed at New

	startOnce sync.Once
	started   chan struct{} // closed once start has finished, or by Close before any start

	mu          sync.Mutex // guards closed and cancelStart
	closed      bool
	cancelStart context.CancelFunc // ends a start under way, for Close

	// Written by start before started is closed, read-only after.
	decls    []*genai.FunctionDeclaration
	deferred []*genai.FunctionDeclaration // past the budget: found and called through the catalogue
	names    nameTable

	watchers sync.WaitGroup // one watch goroutine per running server
}

var _ tools.External = (*Manager)(nil)

// New makes a Manager; nothing starts before Start or Declarations.
func New(opts Options) *Manager {
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = DefaultCallTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Env == nil {
		opts.Env = secret.WithoutCredentials(os.Environ())
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.ToolBudget == 0 {
		opts.ToolBudget = DefaultToolBudget
	}
	m := &Manager{opts: opts, started: make(chan struct{})}
	for _, cfg := range opts.Servers {
		m.servers = append(m.servers, &server{cfg: cfg, state: StateStopped})
	}
	return m
}

// Start starts every server in parallel, each within StartTimeout, and lists their tools. The
// first call starts them and the others wait for it; once done, it returns at once. A server that
// fails is reported through Notify and its status, not as an error: the error is ctx's, when it
// ends before the start does (the start goes on, for the other callers).
func (m *Manager) Start(ctx context.Context) error {
	m.startOnce.Do(func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.closed {
			close(m.started)
			return
		}
		sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		m.cancelStart = cancel
		// Ends when every server has started or failed; Close waits for it.
		go func() {
			defer cancel()
			m.start(sctx)
			close(m.started)
		}()
	})
	select {
	case <-m.started:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("start MCP servers: %w", ctx.Err())
	}
}

func (m *Manager) start(ctx context.Context) {
	var wg sync.WaitGroup
	for _, s := range m.servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.startServer(ctx, s)
		}()
	}
	wg.Wait()
	m.declare()
}

// startDone reports whether Start has finished: the getters read what it found, and never start
// anything themselves (a session is built by a host that has started its servers with the
// request's context).
func (m *Manager) startDone() bool {
	select {
	case <-m.started:
		return true
	default:
		return false
	}
}

// Declarations are the tools of the servers that started, servers in configuration order and
// each one's tools sorted by name; none before Start has finished.
func (m *Manager) Declarations() []*genai.FunctionDeclaration {
	if !m.startDone() {
		return nil
	}
	return m.decls
}

// Lookup describes a tool by its declared name. For mcp_call_tool it describes the tool called,
// so that the user is asked about that tool; mcp_find_tools runs without asking, since it reads
// only the list of tools.
func (m *Manager) Lookup(name string, args map[string]any) (tools.ExternalTool, bool) {
	if !m.startDone() {
		return tools.ExternalTool{}, false
	}
	switch {
	case name == FindToolsName && len(m.deferred) > 0:
		return tools.ExternalTool{Name: name, Title: "Find MCP tools", Free: true}, true
	case name == CallToolName && len(m.deferred) > 0:
		target, _ := callTarget(args)
		if t, ok := m.Lookup(target, nil); ok && !t.Free {
			return t, true
		}
		return tools.ExternalTool{Name: name, Title: "Call an unknown MCP tool", Free: true}, true
	}
	ref, ok := m.names.refs[name]
	if !ok {
		return tools.ExternalTool{}, false
	}
	s := m.servers[ref.server]
	t := s.tool(ref.tool)
	title := t.Title
	if title == "" && t.Annotations != nil {
		title = t.Annotations.Title
	}
	if title == "" {
		title = t.Name
	}
	return tools.ExternalTool{Name: name, Server: s.cfg.Name, Tool: ref.tool, Title: title}, true
}

// Call runs a declared tool within CallTimeout. Every failure is a text for the model, with
// isErr set: an unknown tool, a server that is not running, a timeout, the server's own error.
func (m *Manager) Call(ctx context.Context, name string, args map[string]any) (text string, isErr bool) {
	if err := m.Start(ctx); err != nil {
		return "cancelled: " + err.Error(), true
	}
	switch {
	case name == FindToolsName && len(m.deferred) > 0:
		return m.findTools(args)
	case name == CallToolName && len(m.deferred) > 0:
		name, args = callTarget(args)
	}
	ref, ok := m.names.refs[name]
	if !ok {
		return fmt.Sprintf("unknown MCP tool %q", name), true
	}
	s := m.servers[ref.server]
	cs, why := s.running()
	if cs == nil {
		return notRunning(s.cfg.Name, why), true
	}
	if args == nil {
		args = map[string]any{}
	}
	callCtx, cancel := context.WithTimeout(ctx, m.opts.CallTimeout)
	defer cancel()
	res, err := cs.CallTool(callCtx, &mcp.CallToolParams{Name: ref.tool, Arguments: args})
	switch {
	case err == nil:
		return resultText(res), res.IsError
	case ctx.Err() != nil:
		return "cancelled: the MCP tool " + name + " was stopped", true
	case callCtx.Err() != nil:
		return fmt.Sprintf("the MCP tool %s did not answer within %s", name, m.opts.CallTimeout), true
	case errors.Is(err, mcp.ErrConnectionClosed):
		m.fail(s, "the connection closed: "+err.Error())
		_, why := s.running()
		return notRunning(s.cfg.Name, why), true
	}
	return fmt.Sprintf("the MCP tool %s failed: %v", name, err), true
}

func notRunning(server, why string) string {
	return fmt.Sprintf("MCP server %q is not running: %s", server, why)
}

// Close stops every server: stdio servers get their stdin closed, then are killed with their
// process group. A start under way is cut short. Calls after Close fail.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	if m.cancelStart != nil {
		m.cancelStart()
	}
	m.mu.Unlock()
	m.startOnce.Do(func() { close(m.started) })
	<-m.started
	var wg sync.WaitGroup
	for _, s := range m.servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.stop()
		}()
	}
	wg.Wait()
	m.watchers.Wait()
	return nil
}
