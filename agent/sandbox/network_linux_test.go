package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// netProbe is what an agent-written test would do to send something out: UDP over IPv4 and IPv6,
// a TCP connect, TCP Fast Open (data in sendto, no connect), vsock, and a Unix socket outside.
// The addresses come in the environment; it prints what each attempt returned.
func netProbe() int {
	try := func(name string, f func() error) { fmt.Printf("%s=%v\n", name, f()) }
	dial := func(network, env string) func() error {
		return func() error {
			c, err := net.DialTimeout(network, os.Getenv(env), 2*time.Second)
			if err != nil {
				return err
			}
			defer c.Close()
			_, err = c.Write([]byte("leak"))
			return err
		}
	}
	try("udp4", dial("udp4", "PROBE_UDP4"))
	try("udp6", dial("udp6", "PROBE_UDP6"))
	try("tcp", dial("tcp4", "PROBE_TCP"))
	try("unix", dial("unix", "PROBE_UNIX"))
	try("fastopen", func() error {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		port, _ := strconv.Atoi(os.Getenv("PROBE_TFO_PORT"))
		return unix.Sendto(fd, []byte("leak"), unix.MSG_FASTOPEN, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}})
	})
	try("vsock", func() error {
		fd, err := unix.Socket(unix.AF_VSOCK, unix.SOCK_STREAM, 0)
		if err == nil {
			unix.Close(fd)
		}
		return err
	})
	if os.Getenv("PROBE_LISTEN") != "" {
		// listen(2) without bind(2) binds a port of the kernel's choosing, which Landlock's bind
		// rule never sees: inbound TCP. Its port is printed for the test to connect to.
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
		if err == nil {
			err = unix.Listen(fd, 1)
		}
		if err != nil {
			fmt.Printf("listen=%v\n", err)
			return 0
		}
		sa, _ := unix.Getsockname(fd)
		fmt.Printf("listen=%d\n", sa.(*unix.SockaddrInet4).Port)
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // until the test has tried
	}
	return 0
}

// listeners are the test's own servers, outside the sandbox. What reached them waits in their
// queues (a datagram, an established connection), so it is read after the probe, not raced.
type listeners struct {
	env     []string
	packets map[string]net.PacketConn
	streams map[string]net.Listener
}

func startListeners(t *testing.T) *listeners {
	t.Helper()
	l := &listeners{packets: map[string]net.PacketConn{}, streams: map[string]net.Listener{}}
	for _, udp := range []struct{ network, addr, env string }{{"udp4", "127.0.0.1:0", "PROBE_UDP4"}, {"udp6", "[::1]:0", "PROBE_UDP6"}} {
		pc, err := net.ListenPacket(udp.network, udp.addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pc.Close() })
		l.packets[udp.network] = pc
		l.env = append(l.env, udp.env+"="+pc.LocalAddr().String())
	}
	tcp, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tcp.Close() })
	l.streams["tcp"] = tcp
	l.env = append(l.env, "PROBE_TCP="+tcp.Addr().String())
	// A Fast Open listener: the kernel takes data with the SYN once the option is on.
	tfo, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tfo.Close() })
	if raw, err := tfo.(*net.TCPListener).SyscallConn(); err == nil {
		_ = raw.Control(func(fd uintptr) { _ = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_FASTOPEN, 16) })
	}
	l.streams["fastopen"] = tfo
	l.env = append(l.env, fmt.Sprintf("PROBE_TFO_PORT=%d", tfo.Addr().(*net.TCPAddr).Port))
	// A Unix socket outside the workspace and the temp dir, as the Docker daemon's or an
	// ssh-agent's would be.
	sock := filepath.Join(outsideDir(t), "agent.sock")
	ux, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ux.Close() })
	l.streams["unix"] = ux
	l.env = append(l.env, "PROBE_UNIX="+sock)
	return l
}

// arrived lists the listeners that something reached.
func (l *listeners) arrived() []string {
	var got []string
	buf := make([]byte, 64)
	for name, pc := range l.packets {
		_ = pc.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		if _, _, err := pc.ReadFrom(buf); err == nil {
			got = append(got, name)
		}
	}
	for name, ln := range l.streams {
		d := ln.(interface{ SetDeadline(time.Time) error })
		_ = d.SetDeadline(time.Now().Add(50 * time.Millisecond))
		if c, err := ln.Accept(); err == nil {
			got = append(got, name)
			c.Close()
		}
	}
	slices.Sort(got)
	return got
}

// outsideDir is a directory outside the workspace and outside /tmp (which the sandbox replaces
// with its own): under the home directory, as a user's sockets and credentials are.
func outsideDir(t *testing.T) string {
	t.Helper()
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp(home, ".reprise-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// TestNetworkOffMeansOff: with the network off, nothing an agent-written program sends reaches a
// listener outside the sandbox — UDP over IPv4 and IPv6, TCP, TCP Fast Open, a Unix socket — and
// vsock cannot even be opened; with the network on, the same probe gets through (the control).
func TestNetworkOffMeansOff(t *testing.T) {
	for _, tt := range []struct {
		name       string
		network    bool
		namespaces bool
	}{{"network off", false, true}, {"network off, no namespaces", false, false}, {"network on", true, true}} {
		t.Run(tt.name, func(t *testing.T) {
			if !tt.namespaces {
				withoutNamespaces(t)
			}
			l := startListeners(t)
			sb, ws := confined(t, tt.network)
			c, err := sb.Command(t.Context(), Unasked, os.Args[0])
			if err != nil {
				t.Fatal(err)
			}
			var out strings.Builder
			c.Dir, c.Stdout, c.Stderr = ws, &out, &out
			c.Env = append(os.Environ(), append(l.env, "REPRISE_SANDBOX_TEST_PROBE=net")...)
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			if st, err := c.Wait(); err != nil || st.Code != 0 {
				t.Fatalf("probe: %v %v %q", st, err, out.String())
			}
			got := l.arrived()
			if !strings.Contains(out.String(), "vsock=address family not supported") {
				t.Errorf("vsock was opened: %q", out.String())
			}
			if tt.network { // the control: the same probe gets out when the network is allowed
				if want := []string{"fastopen", "tcp", "udp4", "udp6"}; !slices.Equal(got, want) {
					t.Errorf("network on: %q arrived, want %q (probe: %q)", got, want, out.String())
				}
				return
			}
			if !tt.namespaces {
				// Without a mount namespace a Unix socket outside cannot be covered: the sandbox
				// then says it is not whole, and every command is asked (attack tests check that).
				if ok, why := sb.Confined(); ok || !strings.Contains(why, "Unix sockets") {
					t.Errorf("without namespaces: Confined() = %v, %q", ok, why)
				}
				got = slices.DeleteFunc(got, func(s string) bool { return s == "unix" })
			}
			if len(got) != 0 {
				t.Errorf("reached outside: %q (probe: %q)", got, out.String())
			}
		})
	}
}

// TestNoInboundListen: a listen without bind inside the sandbox takes a port no one outside can
// reach.
func TestNoInboundListen(t *testing.T) {
	sb, ws := confined(t, false)
	c, err := sb.Command(t.Context(), Unasked, os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin, release, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	c.Dir, c.Stdout, c.Stderr, c.Stdin = ws, pw, pw, stdin
	c.Env = append(os.Environ(), "REPRISE_SANDBOX_TEST_PROBE=net", "PROBE_LISTEN=1")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	stdin.Close()
	r := bufio.NewReader(pr)
	var port int
	for port == 0 {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("no port from the probe: %v", err)
		}
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "listen="); ok {
			if port, err = strconv.Atoi(v); err != nil {
				t.Fatalf("the probe could not listen: %s", line)
			}
		}
	}
	conn, err := net.DialTimeout("tcp4", fmt.Sprintf("127.0.0.1:%d", port), 2*time.Second)
	if err == nil {
		conn.Close()
		t.Errorf("connected from outside to the sandbox's listener on port %d", port)
	} else if !errors.Is(err, unix.ECONNREFUSED) {
		t.Logf("connect: %v", err)
	}
	release.Close()
	if _, err := c.Wait(); err != nil {
		t.Fatal(err)
	}
}
