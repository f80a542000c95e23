//go:build unix

package mcp

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// everythingPath finds the reference server @modelcontextprotocol/server-everything, which
// scripts/setup installs: $REPRISE_MCP_EVERYTHING, or its place in the npm cache. A machine
// without it fails the test rather than skipping it, so that a missing install step shows.
func everythingPath(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("node is not installed: run scripts/setup")
	}
	path := os.Getenv("REPRISE_MCP_EVERYTHING")
	if path == "" {
		cache := os.Getenv("REPRISE_NPM_CACHE")
		if cache == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				t.Fatal(err)
			}
			cache = filepath.Join(home, ".cache", "reprise-npm")
		}
		path = filepath.Join(cache, "mcp-everything", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the reference MCP server is not installed (%v): run scripts/setup, or set REPRISE_MCP_EVERYTHING to its dist/index.js", err)
	}
	return path
}

// checkEverything lists the reference server's tools and calls two through the Manager.
func checkEverything(t *testing.T, cfg ServerConfig) {
	logger, logs := testLogger()
	m := New(Options{Servers: []ServerConfig{cfg}, Logger: logger})
	defer m.Close()
	names := map[string]bool{}
	for _, d := range m.Declarations() {
		names[d.Name] = true
	}
	if s := m.Servers()[0]; s.State != StateRunning {
		t.Fatalf("the reference server did not start: %+v\nlog:\n%s", s, logs)
	}
	for _, want := range []string{"everything__echo", "everything__get-tiny-image", "everything__get-sum"} {
		if !names[want] {
			t.Errorf("%s is not declared; declared: %v", want, names)
		}
	}
	if strings.Contains(logs.String(), "left out") {
		t.Errorf("tools of the reference server were left out:\n%s", logs)
	}

	ctx := t.Context()
	if text, isErr := m.Call(ctx, "everything__echo", map[string]any{"message": "hi"}); text != "Echo: hi" || isErr {
		t.Errorf("echo = %q, %v", text, isErr)
	}
	text, isErr := m.Call(ctx, "everything__get-tiny-image", nil)
	image := regexp.MustCompile(`\[image image/png, [0-9,]+ bytes: not shown\]`)
	if isErr || !image.MatchString(text) || !strings.Contains(text, "MCP logo") {
		t.Errorf("get-tiny-image = %q, %v", text, isErr)
	}
	if text, isErr := m.Call(ctx, "everything__get-sum", map[string]any{"a": 2, "b": 3}); isErr || !strings.Contains(text, "5") {
		t.Errorf("get-sum = %q, %v", text, isErr)
	}
	// A call the server rejects comes back as an error for the model, not a failure of the server.
	if text, isErr := m.Call(ctx, "everything__echo", map[string]any{"wrong": 1}); !isErr {
		t.Errorf("echo without its argument = %q, not an error", text)
	}
	if s := m.Servers()[0]; s.State != StateRunning {
		t.Errorf("the server is %s after a rejected call: %s", s.State, s.Error)
	}
}

func TestEverythingStdio(t *testing.T) {
	t.Parallel()
	checkEverything(t, ServerConfig{Name: "everything", Type: TypeStdio, Command: "node",
		Args: []string{everythingPath(t), "stdio"}, Source: "test"})
}

func TestEverythingStreamableHTTP(t *testing.T) {
	t.Parallel()
	path := everythingPath(t)
	// The server listens on $PORT: take a free port from the kernel.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()

	cmd := exec.Command("node", path, "streamableHttp")
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	// Ready once it says so on stderr; the rest of its stderr is drained by a goroutine that
	// ends when the process does.
	sc := bufio.NewScanner(stderr)
	var seen []string
	for sc.Scan() {
		seen = append(seen, sc.Text())
		if strings.Contains(sc.Text(), "listening on port") {
			break
		}
	}
	if len(seen) == 0 || !strings.Contains(seen[len(seen)-1], "listening on port") {
		t.Fatalf("the reference server did not start listening; its stderr: %q", seen)
	}
	go func() {
		for sc.Scan() {
		}
	}()
	checkEverything(t, ServerConfig{Name: "everything", Type: TypeHTTP, URL: "http://127.0.0.1:" + strconv.Itoa(port) + "/mcp", Source: "test"})
}
