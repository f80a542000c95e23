package mcp

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// logBuffer collects a Manager's log for assertions.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// quiet is a logger for tests that do not look at the log.
func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

func testLogger() (*slog.Logger, *logBuffer) {
	b := &logBuffer{}
	return slog.New(slog.NewTextHandler(b, nil)), b
}

// inMemory connects each configured server to the named in-process server.
func inMemory(t *testing.T, servers map[string]*mcp.Server) func(ServerConfig) (mcp.Transport, error) {
	return func(cfg ServerConfig) (mcp.Transport, error) {
		s, ok := servers[cfg.Name]
		if !ok {
			return nil, fmt.Errorf("no test server %q", cfg.Name)
		}
		ct, st := mcp.NewInMemoryTransports()
		ss, err := s.Connect(context.Background(), st, nil)
		if err != nil {
			return nil, err
		}
		t.Cleanup(func() { _ = ss.Close() })
		return ct, nil
	}
}

// notifications records Notify's calls and signals each one.
type notifications struct {
	mu   sync.Mutex
	got  []string
	sent chan string
}

func newNotifications() *notifications { return &notifications{sent: make(chan string, 16)} }

func (n *notifications) notify(server, message string) {
	n.mu.Lock()
	n.got = append(n.got, server+": "+message)
	n.mu.Unlock()
	n.sent <- message
}

func (n *notifications) all() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.got...)
}

func TestManagerInMemory(t *testing.T) {
	logger, logs := testLogger()
	m := New(Options{
		Servers: []ServerConfig{{Name: "zeta", Type: TypeStdio, Command: "unused"}, {Name: "alpha", Type: TypeStdio, Command: "unused"}},
		Logger:  logger,
	})
	m.opts.transport = inMemory(t, map[string]*mcp.Server{"zeta": newTestServer(nil), "alpha": newTestServer(nil)})
	defer m.Close()

	if got := m.Servers()[0].State; got != StateStopped {
		t.Errorf("state before Start = %q, want %q: servers start lazily", got, StateStopped)
	}
	mustStart(t, m)
	var names []string
	for _, d := range m.Declarations() {
		names = append(names, d.Name)
	}
	// Configuration order, then tools sorted; tree is left out.
	var want []string
	for _, s := range []string{"zeta", "alpha"} {
		for _, tool := range []string{"add", "dotted_name", "echo", "fail", "image", "pid", "sleep"} {
			want = append(want, s+"__"+tool)
		}
	}
	if diff := cmp.Diff(names, want); diff != "" {
		t.Errorf("declared names (-got +want):\n%s", diff)
	}
	if !strings.Contains(logs.String(), "tool=tree") || !strings.Contains(logs.String(), "recursive") {
		t.Errorf("log does not say why tree was left out:\n%s", logs)
	}

	got, ok := m.Lookup("alpha__dotted_name", nil)
	if !ok || got.Server != "alpha" || got.Tool != "dotted.name" {
		t.Errorf("Lookup(alpha__dotted_name) = %+v, %v", got, ok)
	}
	if got, _ := m.Lookup("zeta__add", nil); got.Title != "Add two numbers" {
		t.Errorf("title = %q, want the tool's title", got.Title)
	}
	if _, ok := m.Lookup("zeta__tree", nil); ok {
		t.Error("a tool left out can be looked up")
	}

	ctx := t.Context()
	for _, tc := range []struct {
		name      string
		args      map[string]any
		want      string
		wantIsErr bool
	}{
		{"alpha__echo", map[string]any{"text": "hello"}, "hello", false},
		{"zeta__add", map[string]any{"a": 2, "b": 40}, `{"sum":42}`, false},
		{"zeta__image", nil, "[image image/png, 12,345 bytes: not shown]", false},
		{"zeta__fail", nil, "it went wrong", true},
		{"zeta__dotted_name", nil, "dotted", false},
		{"zeta__nope", nil, `unknown MCP tool "zeta__nope"`, true},
	} {
		text, isErr := m.Call(ctx, tc.name, tc.args)
		if text != tc.want || isErr != tc.wantIsErr {
			t.Errorf("Call(%s) = %q, %v; want %q, %v", tc.name, text, isErr, tc.want, tc.wantIsErr)
		}
	}

	st := m.Servers()
	if st[0].Name != "zeta" || st[0].State != StateRunning || len(st[0].Tools) != 7 {
		t.Fatalf("Servers()[0] = %+v", st[0])
	}
	for _, ti := range st[0].Tools {
		if ti.Tokens <= 0 || ti.Tool == "" || !strings.HasPrefix(ti.Name, "zeta__") {
			t.Errorf("tool info %+v", ti)
		}
	}
}

func TestManagerCallTimeoutAndCancel(t *testing.T) {
	sleeping := make(chan struct{}, 1)
	m := New(Options{Logger: quiet(), Servers: []ServerConfig{{Name: "s", Type: TypeStdio, Command: "unused"}},
		CallTimeout: 300 * time.Millisecond})
	m.opts.transport = inMemory(t, map[string]*mcp.Server{"s": newTestServer(sleeping)})
	defer m.Close()
	mustStart(t, m)

	start := time.Now()
	text, isErr := m.Call(t.Context(), "s__sleep", map[string]any{"seconds": 3600})
	if !isErr || text != "the MCP tool s__sleep did not answer within 300ms" {
		t.Errorf("Call past the timeout = %q, %v", text, isErr)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the timeout took %s", d)
	}
	<-sleeping

	m.opts.CallTimeout = time.Hour
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-sleeping
		cancel()
	}()
	text, isErr = m.Call(ctx, "s__sleep", map[string]any{"seconds": 3600})
	if !isErr || text != "cancelled: the MCP tool s__sleep was stopped" {
		t.Errorf("cancelled Call = %q, %v", text, isErr)
	}
	// The server is still usable after both.
	if text, isErr := m.Call(t.Context(), "s__echo", map[string]any{"text": "still here"}); text != "still here" || isErr {
		t.Errorf("Call after a timeout = %q, %v", text, isErr)
	}
}

func TestManagerConcurrentStart(t *testing.T) {
	m := New(Options{Logger: quiet(), Servers: []ServerConfig{{Name: "s", Type: TypeStdio, Command: "unused"}}})
	m.opts.transport = inMemory(t, map[string]*mcp.Server{"s": newTestServer(nil)})
	defer m.Close()
	var wg sync.WaitGroup
	lists := make([]int, 8)
	for i := range lists {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := m.Start(t.Context()); err != nil {
				t.Error(err)
			}
			lists[i] = len(m.Declarations())
		}()
	}
	wg.Wait()
	for i, n := range lists {
		if n != 7 {
			t.Errorf("caller %d got %d declarations, want 7", i, n)
		}
	}
}

func TestManagerExpandFailure(t *testing.T) {
	notes := newNotifications()
	m := New(Options{Logger: quiet(), Servers: []ServerConfig{
		{Name: "needs-input", Type: TypeStdio, Command: "x", Args: []string{"${input:token}"}, Source: "mcp.json"},
		{Name: "ok", Type: TypeStdio, Command: "unused"},
	}, Notify: notes.notify})
	m.opts.transport = inMemory(t, map[string]*mcp.Server{"ok": newTestServer(nil)})
	defer m.Close()
	mustStart(t, m)
	if n := len(m.Declarations()); n != 7 {
		t.Errorf("%d declarations, want the 7 of the server that started", n)
	}
	st := m.Servers()[0]
	want := `mcp.json: server "needs-input": args[0]: ${input:token} is not supported`
	if st.State != StateFailed || !strings.HasPrefix(st.Error, want) {
		t.Errorf("status = %+v, want failed with %q", st, want)
	}
	if got := notes.all(); len(got) != 1 || !strings.Contains(got[0], "${input:token}") {
		t.Errorf("notifications = %q", got)
	}
}

func TestManagerCloseBeforeStart(t *testing.T) {
	m := New(Options{Logger: quiet(), Servers: []ServerConfig{{Name: "s", Type: TypeStdio, Command: "unused"}}})
	m.opts.transport = func(ServerConfig) (mcp.Transport, error) {
		t.Error("a server started after Close")
		return nil, fmt.Errorf("closed")
	}
	m.Close()
	if d := m.Declarations(); len(d) != 0 {
		t.Errorf("declarations after Close: %d", len(d))
	}
	text, isErr := m.Call(t.Context(), "s__echo", nil)
	if !isErr || text != `unknown MCP tool "s__echo"` {
		t.Errorf("Call after Close = %q, %v", text, isErr)
	}
}

// mustStart starts m's servers, as a host does before a session declares their tools.
func mustStart(t *testing.T, m *Manager) {
	t.Helper()
	if err := m.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// TestGettersStartNothing: the getters a session calls read what Start found, and never start
// a server themselves (with a context nobody can cancel): before Start they declare nothing.
func TestGettersStartNothing(t *testing.T) {
	m := New(Options{Logger: quiet(), Servers: []ServerConfig{{Name: "s", Type: TypeStdio, Command: "unused"}}})
	started := false
	server := newTestServer(nil)
	m.opts.transport = func(cfg ServerConfig) (mcp.Transport, error) {
		started = true
		return inMemory(t, map[string]*mcp.Server{"s": server})(cfg)
	}
	defer m.Close()
	if len(m.Declarations()) != 0 || m.CatalogTokens() != 0 {
		t.Error("declarations before Start")
	}
	if _, ok := m.Lookup("s__echo", nil); ok || started {
		t.Errorf("a getter started the server (started %v)", started)
	}
	mustStart(t, m)
	if n := len(m.Declarations()); n != 7 || !started {
		t.Errorf("after Start: %d declarations, started %v", n, started)
	}
}
