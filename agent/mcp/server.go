package mcp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// server is one configured server and its session.
type server struct {
	cfg    ServerConfig
	stderr *stderrLog // nil but for stdio servers

	// Written by startServer before Manager.started is closed, read-only after.
	tools []*mcp.Tool // sorted by name
	infos []ToolInfo

	mu       sync.Mutex // guards the fields below
	state    string
	err      string
	session  *mcp.ClientSession
	proc     *process // nil but for stdio servers
	notified bool     // Notify was called
	stopping bool     // Close is stopping it: its end is no failure
}

// startServer connects to a server and lists its tools, within StartTimeout.
func (m *Manager) startServer(ctx context.Context, s *server) {
	s.mu.Lock()
	s.state = StateStarting
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, m.opts.StartTimeout)
	defer cancel()
	cfg, err := expand(s.cfg, m.opts.Workspace, m.opts.Env)
	if err != nil {
		m.fail(s, err.Error())
		return
	}
	if cfg.Type == TypeStdio {
		s.stderr = &stderrLog{logger: m.opts.Logger, server: cfg.Name}
	}
	t, proc, err := m.newTransport(cfg, s.stderr)
	if err != nil {
		m.fail(s, err.Error())
		return
	}
	s.mu.Lock()
	s.proc = proc
	s.mu.Unlock()
	// A server that does not answer in time is killed, which also ends the SDK's wait for it.
	stopKill := context.AfterFunc(ctx, proc.kill)
	client := mcp.NewClient(&mcp.Implementation{Name: "reprise", Version: m.opts.Version}, nil)
	cs, err := client.Connect(ctx, t, nil)
	var list []*mcp.Tool
	if err == nil {
		list, err = listTools(ctx, cs)
	}
	if !stopKill() && err == nil {
		err = ctx.Err()
	}
	if err != nil {
		if cs != nil {
			_ = cs.Close()
		}
		proc.kill()
		m.fail(s, m.startError(ctx, s, err))
		return
	}
	slices.SortFunc(list, func(a, b *mcp.Tool) int { return cmp.Compare(a.Name, b.Name) })
	s.tools = list
	s.mu.Lock()
	s.state, s.session = StateRunning, cs
	s.mu.Unlock()
	m.watchers.Add(1)
	go m.watch(s, cs)
}

// startError says why a server did not start, with the end of its stderr when it wrote some.
func (m *Manager) startError(ctx context.Context, s *server, err error) string {
	var why string
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		why = fmt.Sprintf("no answer within %s", m.opts.StartTimeout)
	case ctx.Err() != nil:
		why = "stopped before it started"
	default:
		why = "start: " + err.Error()
	}
	if tail := s.stderr.lastLines(); tail != "" {
		why += "; its stderr ends with: " + tail
	}
	return why
}

func listTools(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Tool, error) {
	var list []*mcp.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("list tools: %w", err)
		}
		list = append(list, t)
	}
	return list, nil
}

// watch marks the server failed when its session ends without Close; it ends with the session.
func (m *Manager) watch(s *server, cs *mcp.ClientSession) {
	defer m.watchers.Done()
	err := cs.Wait()
	why := "the server exited"
	if err != nil && !errors.Is(err, mcp.ErrConnectionClosed) {
		why += ": " + err.Error()
	}
	if tail := s.stderr.lastLines(); tail != "" {
		why += "; its stderr ends with: " + tail
	}
	m.fail(s, why)
	// What it started (npx's real server, say) would otherwise run on until Close.
	s.mu.Lock()
	proc := s.proc
	s.mu.Unlock()
	proc.kill()
}

// fail marks a server failed and tells the user, unless it failed already or Close is stopping
// it (then it is only stopped).
func (m *Manager) fail(s *server, why string) {
	m.mu.Lock()
	closed := m.closed
	m.mu.Unlock()
	s.mu.Lock()
	if closed || s.stopping || s.state == StateFailed {
		if closed && s.state != StateFailed {
			s.state = StateStopped
		}
		s.mu.Unlock()
		return
	}
	s.state, s.err = StateFailed, why
	notify := !s.notified
	s.notified = true
	s.mu.Unlock()
	m.opts.Logger.Warn("MCP server failed", "server", s.cfg.Name, "source", s.cfg.Source, "error", why)
	if notify && m.opts.Notify != nil {
		m.opts.Notify(s.cfg.Name, fmt.Sprintf("MCP server %q failed: %s", s.cfg.Name, why))
	}
}

// running is the session of a running server, or nil and why it is not running.
func (s *server) running() (*mcp.ClientSession, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch s.state {
	case StateRunning:
		return s.session, ""
	case StateFailed:
		return nil, s.err
	}
	return nil, "it was stopped"
}

// stop ends the session and kills a stdio server's process group.
func (s *server) stop() {
	s.mu.Lock()
	s.stopping = true
	cs, proc := s.session, s.proc
	if s.state != StateFailed {
		s.state = StateStopped
	}
	s.mu.Unlock()
	if cs != nil {
		_ = cs.Close()
	}
	proc.kill()
}

func (s *server) tool(name string) *mcp.Tool {
	i, ok := slices.BinarySearchFunc(s.tools, name, func(t *mcp.Tool, name string) int { return cmp.Compare(t.Name, name) })
	if !ok {
		return &mcp.Tool{Name: name}
	}
	return s.tools[i]
}
