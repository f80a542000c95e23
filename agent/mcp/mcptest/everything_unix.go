//go:build unix

package mcptest

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// EverythingHTTP runs the reference server in its streamable-HTTP mode, on a free port, for the
// test's life, and returns its URL.
func EverythingHTTP(t testing.TB) string {
	t.Helper()
	path := Everything(t)
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
	// Ready once it says so on stderr; the rest of its stderr is drained until it exits.
	sc := bufio.NewScanner(stderr)
	var seen []string
	for sc.Scan() {
		seen = append(seen, sc.Text())
		if strings.Contains(sc.Text(), "listening on port") {
			go func() {
				for sc.Scan() {
				}
			}()
			return "http://127.0.0.1:" + strconv.Itoa(port) + "/mcp"
		}
	}
	t.Fatalf("the reference server did not start listening; its stderr: %q", seen)
	return ""
}
