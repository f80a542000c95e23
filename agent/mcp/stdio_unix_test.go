//go:build unix

package mcp

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// processGone reports whether pid no longer runs: it does not exist, or is a zombie (a killed
// grandchild waits for whoever adopts it to reap it).
func processGone(pid int) bool {
	if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return errors.Is(err, fs.ErrNotExist)
	}
	_, rest, _ := strings.Cut(string(stat), ") ")
	return strings.HasPrefix(rest, "Z")
}

// awaitGone waits until pid no longer runs: a SIGKILL is delivered, not waited for.
func awaitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !processGone(pid) {
		if time.Now().After(deadline) {
			t.Errorf("process %d still runs", pid)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func callPid(t *testing.T, m *Manager, name string) int {
	t.Helper()
	text, isErr := m.Call(t.Context(), name, nil)
	pid, err := strconv.Atoi(text)
	if isErr || err != nil {
		t.Fatalf("Call(%s) = %q, %v", name, text, isErr)
	}
	return pid
}

// TestStdioStartKillClose runs the test binary as stdio servers: one that works, one that never
// answers and one that crashes at start. The silent one must not hold up the others beyond
// StartTimeout; killing a server mid-session fails its calls with a clear error and notifies
// once, without changing the declarations; Close leaves no process behind.
func TestStdioStartKillClose(t *testing.T) {
	t.Parallel()
	notes := newNotifications()
	logger, logs := testLogger()
	const startTimeout = 3 * time.Second
	m := New(Options{
		Servers: []ServerConfig{helperServer("good", "stdio"), helperServer("silent", "silent"),
			helperServer("crash", "crash"), helperServer("other", "stdio")},
		StartTimeout: startTimeout, Notify: notes.notify, Logger: logger, Workspace: t.TempDir(),
	})
	defer m.Close()
	mustStart(t, m)

	start := time.Now()
	decls := m.Declarations()
	if d := time.Since(start); d > startTimeout+5*time.Second {
		t.Errorf("start took %s, StartTimeout is %s", d, startTimeout)
	}
	if len(decls) != 16 {
		t.Fatalf("%d declarations, want 16: 8 from each server that started", len(decls))
	}
	states := map[string]ServerStatus{}
	for _, s := range m.Servers() {
		states[s.Name] = s
	}
	if s := states["silent"]; s.State != StateFailed || !strings.HasPrefix(s.Error, "no answer within 3s") ||
		!strings.Contains(s.Error, "silent server: reading stdin") {
		t.Errorf("silent server: %+v", s)
	}
	if s := states["crash"]; s.State != StateFailed || !strings.Contains(s.Error, "cannot open the database") {
		t.Errorf("crash server: %+v, want its stderr in the error", s)
	}
	if s := states["good"]; s.State != StateRunning {
		t.Errorf("good server: %+v", s)
	}
	if !strings.Contains(logs.String(), "cannot open the database") {
		t.Errorf("the crash server's stderr is not logged:\n%s", logs)
	}
	for range 2 {
		<-notes.sent // silent and crash
	}

	if text, isErr := m.Call(t.Context(), "good__echo", map[string]any{"text": "over stdio"}); text != "over stdio" || isErr {
		t.Errorf("echo = %q, %v", text, isErr)
	}

	pid := callPid(t, m, "good__pid")
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	msg := <-notes.sent
	if !strings.Contains(msg, `MCP server "good" failed: the server exited`) {
		t.Errorf("notification = %q", msg)
	}
	for range 2 {
		text, isErr := m.Call(t.Context(), "good__echo", map[string]any{"text": "x"})
		if !isErr || !strings.HasPrefix(text, `MCP server "good" is not running: the server exited`) {
			t.Errorf("Call on a dead server = %q, %v", text, isErr)
		}
	}
	if got := notes.all(); len(got) != 3 {
		t.Errorf("notifications = %q, want one per failed server", got)
	}
	if diff := cmp.Diff(m.Declarations(), decls); diff != "" {
		t.Errorf("declarations changed after a server died:\n%s", diff)
	}
	if s := m.Servers()[0]; s.State != StateFailed || len(s.Tools) != 8 {
		t.Errorf("status of the dead server = %+v", s)
	}

	other := callPid(t, m, "other__pid")
	grandchild := callPid(t, m, "other__spawn")
	closeStart := time.Now()
	m.Close()
	if d := time.Since(closeStart); d > 5*time.Second {
		t.Errorf("Close took %s", d)
	}
	if !processGone(other) {
		t.Errorf("process %d of a stdio server is alive after Close", other)
	}
	awaitGone(t, grandchild)
	if s := m.Servers()[3]; s.State != StateStopped {
		t.Errorf("state after Close = %q, want stopped", s.State)
	}
	text, isErr := m.Call(t.Context(), "other__echo", nil)
	if !isErr || text != `MCP server "other" is not running: it was stopped` {
		t.Errorf("Call after Close = %q, %v", text, isErr)
	}
	if got := notes.all(); len(got) != 3 {
		t.Errorf("Close notified: %q", got)
	}
}

// TestStdioCommandNotFound: a command that does not exist fails its server at once, saying so.
func TestStdioCommandNotFound(t *testing.T) {
	logger, _ := testLogger()
	m := New(Options{Servers: []ServerConfig{{Name: "missing", Type: TypeStdio, Command: "reprise-no-such-command-here"}}, Logger: logger})
	defer m.Close()
	mustStart(t, m)
	m.Declarations()
	s := m.Servers()[0]
	if s.State != StateFailed || !strings.Contains(s.Error, "executable file not found") {
		t.Errorf("status = %+v", s)
	}
}

// helperServer configures the test binary as a stdio server in the given mode.
func helperServer(name, mode string) ServerConfig {
	return ServerConfig{Name: name, Type: TypeStdio, Command: os.Args[0], Source: "test",
		Env: map[string]string{helperEnv: mode}}
}
