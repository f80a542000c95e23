package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMain(m *testing.M) {
	Init()
	os.Exit(m.Run())
}

// run runs a shell line under sb in dir and returns its output and status.
func run(t *testing.T, sb *Sandbox, dir, line string) (string, Status) {
	t.Helper()
	c, err := sb.Command(t.Context(), "/bin/sh", "-c", line)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	c.Dir, c.Stdout, c.Stderr = dir, &out, &out
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	st, err := c.Wait()
	if err != nil {
		t.Fatal(err)
	}
	return out.String(), st
}

func confined(t *testing.T, network bool) (*Sandbox, string) {
	t.Helper()
	ws := t.TempDir()
	sb := New(Config{Workspace: ws, Writable: []string{}, AllowNetwork: network})
	if ok, reason := sb.Confined(); !ok {
		t.Fatalf("this machine has no Landlock sandbox: %s", reason)
	}
	return sb, ws
}

func TestWritesOnlyInTheWorkspace(t *testing.T) {
	sb, ws := confined(t, false)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "victim"), []byte("safe"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		line string
		ok   bool
	}{
		{"echo hi > inside && mkdir d && mv inside d/ && rm -r d", true},
		{"echo x > /dev/null", true},
		{"cat " + filepath.Join(outside, "victim"), true}, // reading is allowed
		{"echo pwned > " + filepath.Join(outside, "new"), false},
		{"echo pwned > " + filepath.Join(outside, "victim"), false},
		{": > " + filepath.Join(outside, "victim"), false},
		{"truncate -s 0 " + filepath.Join(outside, "victim"), false},
		{"rm " + filepath.Join(outside, "victim"), false},
		{"ln -s /etc/passwd " + filepath.Join(outside, "link"), false},
		{"mv " + filepath.Join(outside, "victim") + " " + filepath.Join(ws, "stolen"), false},
		{"echo pwned > /dev/tty", false},
	}
	for _, tt := range tests {
		out, st := run(t, sb, ws, tt.line)
		if got := st.Code == 0; got != tt.ok {
			t.Errorf("%s: succeeded = %v, want %v (output %q)", tt.line, got, tt.ok, out)
		}
	}
	got, err := os.ReadFile(filepath.Join(outside, "victim"))
	if err != nil || string(got) != "safe" {
		t.Errorf("outside file after the attempts: %q, %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(outside, "new")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file was created outside: %v", err)
	}
}

func TestNetworkOffUnlessAllowed(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // ends when the listener is closed
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is needed to open sockets from a command")
	}
	probe := func(proto string) string {
		return fmt.Sprintf(`%s -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_STREAM, %s); s.connect(("127.0.0.1", %d)); print("connected")'`, py, proto, port)
	}
	bind := py + ` -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(); print("listening")'`
	for _, network := range []bool{false, true} {
		sb, ws := confined(t, network)
		for _, line := range []string{probe("0"), probe("262"), bind} {
			out, st := run(t, sb, ws, line)
			if got := st.Code == 0; got != network {
				t.Errorf("network=%v: %s succeeded = %v (output %q)", network, line, got, out)
			}
		}
	}
}

func TestNothingOutlivesTheCall(t *testing.T) {
	for _, mode := range []Mode{WorkspaceWrite, Off} {
		ws := t.TempDir()
		sb := New(Config{Mode: mode, Workspace: ws, Writable: []string{}})
		out, st := run(t, sb, ws, "setsid sleep 300 & echo $!; sh -c 'sleep 300 & echo $!' ; nohup sleep 300 >/dev/null 2>&1 & echo $!")
		if st.Code != 0 {
			t.Fatalf("%s: %v %q", mode, st, out)
		}
		for _, f := range strings.Fields(out) {
			pid, err := strconv.Atoi(f)
			if err != nil {
				t.Fatalf("%s: output %q", mode, out)
			}
			if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("%s: process %d outlived the command: %v", mode, pid, err)
			}
		}
	}
}

func TestStatus(t *testing.T) {
	ws := t.TempDir()
	for _, mode := range []Mode{WorkspaceWrite, Off} {
		sb := New(Config{Mode: mode, Workspace: ws})
		var got []Status
		for _, line := range []string{"exit 0", "exit 3", "kill -KILL $$", "kill -SEGV $$"} {
			_, st := run(t, sb, ws, line)
			got = append(got, st)
		}
		want := []Status{{Code: 0}, {Code: 3}, {Code: -1, Signal: syscall.SIGKILL}, {Code: -1, Signal: syscall.SIGSEGV}}
		if diff := cmp.Diff(got, want); diff != "" {
			t.Errorf("%s: (-got +want):\n%s", mode, diff)
		}
	}
}
