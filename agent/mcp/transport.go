package mcp

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// terminateWait is how long a stdio server has to exit once its stdin is closed, before it is
// sent SIGTERM, then killed.
const terminateWait = 2 * time.Second

// newTransport makes the transport of an expanded configuration. For a stdio server it also
// returns its process, which the Manager kills with its process group: servers started through
// npx or uvx leave their real server as a grandchild that would outlive the child alone.
func (m *Manager) newTransport(cfg ServerConfig, stderr *stderrLog) (mcp.Transport, *process, error) {
	if m.opts.transport != nil {
		t, err := m.opts.transport(cfg)
		return t, nil, err
	}
	switch cfg.Type {
	case TypeStdio:
		cmd := exec.Command(cfg.Command, cfg.Args...)
		cmd.Env = slices.Clone(m.opts.Env)
		for _, k := range sortedKeys(cfg.Env) {
			cmd.Env = append(cmd.Env, k+"="+cfg.Env[k])
		}
		cmd.Dir = serverDir(cfg, m.opts.Workspace)
		cmd.Stderr = stderr
		// A grandchild holding stderr open must not keep Wait from returning.
		cmd.WaitDelay = time.Second
		setProcessGroup(cmd)
		proc := &process{cmd: cmd}
		return &commandTransport{CommandTransport: mcp.CommandTransport{Command: cmd, TerminateDuration: terminateWait},
			proc: proc}, proc, nil
	case TypeHTTP:
		return &mcp.StreamableClientTransport{Endpoint: cfg.URL, HTTPClient: httpClient(cfg.Headers),
			// The tool list is fixed for the session: nothing the server could push is needed.
			DisableStandaloneSSE: true}, nil, nil
	case TypeSSE:
		return &sseTransport{mcp.SSEClientTransport{Endpoint: cfg.URL, HTTPClient: httpClient(cfg.Headers)}}, nil, nil
	}
	return nil, nil, fmt.Errorf("unknown transport type %q", cfg.Type)
}

// process is a stdio server's command, which other goroutines may kill once it has started.
type process struct {
	cmd *exec.Cmd

	mu      sync.Mutex // guards started, and so the reading of cmd.Process
	started bool
}

// kill kills the process group, if the process was started.
func (p *process) kill() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started {
		killProcessGroup(p.cmd)
	}
}

// commandTransport is the SDK's, telling the process when the command has started.
type commandTransport struct {
	mcp.CommandTransport
	proc *process
}

func (t *commandTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.CommandTransport.Connect(ctx)
	if err == nil {
		t.proc.mu.Lock()
		t.proc.started = true
		t.proc.mu.Unlock()
	}
	return conn, err
}

// sseTransport is the SDK's, with its event stream outliving the start. The SDK ties the stream's
// GET to the context of Connect, which is the start's: it would end with the start.
type sseTransport struct {
	mcp.SSEClientTransport
}

func (t *sseTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	life, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancel) // until connected, the start's deadline holds
	conn, err := t.SSEClientTransport.Connect(life)
	if !stop() && err == nil {
		_ = conn.Close()
		err = ctx.Err()
	}
	if err != nil {
		cancel()
		return nil, err
	}
	return &cancelOnClose{Connection: conn, cancel: cancel}, nil
}

// cancelOnClose ends a connection's context when the connection is closed.
type cancelOnClose struct {
	mcp.Connection
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	defer c.cancel()
	return c.Connection.Close()
}

func httpClient(headers map[string]string) *http.Client {
	if len(headers) == 0 {
		return nil
	}
	return &http.Client{Transport: headerTransport{headers: headers, base: http.DefaultTransport}}
}

// headerTransport adds the configured headers (an API key, mostly) to every request.
type headerTransport struct {
	headers map[string]string
	base    http.RoundTripper
}

func (t headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range t.headers {
		req.Header.Set(k, v)
	}
	return t.base.RoundTrip(req)
}

// serverDir is where a stdio server runs. A workspace-declared server runs in the workspace (its
// cwd is relative to it), as the repository meant. The user's own servers run in the home
// directory unless they name a directory (`${workspaceFolder}` included): in the workspace,
// `npx some-mcp` would prefer the repository's node_modules/.bin and `python -m pkg` its
// modules — code of a cloned repository run without anyone being asked.
func serverDir(cfg ServerConfig, workspace string) string {
	base := workspace
	if !cfg.Workspace || workspace == "" {
		if home, err := os.UserHomeDir(); err == nil {
			base = home
		} else {
			base = os.TempDir()
		}
	}
	if cfg.Cwd == "" {
		return base
	}
	if filepath.IsAbs(cfg.Cwd) {
		return cfg.Cwd
	}
	return filepath.Join(base, cfg.Cwd)
}
