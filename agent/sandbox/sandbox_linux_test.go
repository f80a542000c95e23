package sandbox

import (
	"unsafe"

	"bytes"
	"errors"
	"fmt"
	"golang.org/x/sys/unix"
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
	// As main does: the server is not dumpable, and the sandbox must work from such a process
	// for every user (an ordinary user cannot write a non-dumpable child's uid_map).
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		panic(err)
	}
	if probe := os.Getenv("REPRISE_SANDBOX_TEST_PROBE"); probe != "" {
		os.Exit(runProbe(probe))
	}
	os.Exit(m.Run())
}

// runProbe is what the test binary does when a sandboxed command runs it: it tries the system
// calls a shell cannot make and prints what each returned.
func runProbe(name string) int {
	switch name {
	case "sockets":
		for _, s := range []struct {
			name             string
			domain, typ, pro int
		}{
			{"tcp", unix.AF_INET, unix.SOCK_STREAM, 0},
			{"udp", unix.AF_INET, unix.SOCK_DGRAM, 0},
			{"mptcp", unix.AF_INET, unix.SOCK_STREAM | unix.SOCK_CLOEXEC, 262},
			{"mptcp6", unix.AF_INET6, unix.SOCK_STREAM, 262},
			{"sctp", unix.AF_INET, unix.SOCK_SEQPACKET, 0},
			{"raw", unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP},
			{"packet", unix.AF_PACKET, unix.SOCK_RAW, 0},
			{"vsock", unix.AF_VSOCK, unix.SOCK_STREAM, 0},
			{"smc", unix.AF_SMC, unix.SOCK_STREAM, 0},
			{"bluetooth", unix.AF_BLUETOOTH, unix.SOCK_STREAM, 0},
			{"netlink", unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE},
			{"unix", unix.AF_UNIX, unix.SOCK_STREAM, 0},
		} {
			fd, err := unix.Socket(s.domain, s.typ, s.pro)
			if err == nil {
				unix.Close(fd)
			}
			fmt.Printf("%s=%v\n", s.name, err)
		}
		var params [120]byte // struct io_uring_params
		_, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params[0])), 0)
		fmt.Printf("io_uring=%v\n", errno)
		_, _, errno = unix.Syscall(unix.SYS_KEYCTL, unix.KEYCTL_GET_KEYRING_ID, uintptr(0xfffffffb), 0) // @u
		fmt.Printf("keyctl=%v\n", errno)
	case "net":
		return netProbe()
	}
	return 0
}

// run runs a shell line under sb in dir and returns its output and status.
func run(t *testing.T, sb *Sandbox, dir, line string) (string, Status) {
	t.Helper()
	return runTrusted(t, sb, Unasked, dir, line)
}

func runTrusted(t *testing.T, sb *Sandbox, trust Trust, dir, line string) (string, Status) {
	t.Helper()
	c, err := sb.Command(t.Context(), trust, "/bin/sh", "-c", line)
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
	if !sb.landlock() {
		_, reason := sb.Confined()
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

// TestVersionControlReadOnlyUnlessApproved: a command that ran without the user seeing it cannot
// plant a hook or a core.fsmonitor in .git (they would run outside the sandbox at the user's next
// git command); one the user approved can commit.
func TestVersionControlReadOnlyUnlessApproved(t *testing.T) {
	sb, ws := confined(t, false)
	if why := namespacesUnavailable(); why != "" {
		t.Fatalf("user namespaces are needed: %s", why)
	}
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", ws, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	config, err := os.ReadFile(filepath.Join(ws, ".git", "config"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"git config core.fsmonitor 'touch /tmp/pwned'",
		"echo '[core] fsmonitor = evil' >> .git/config",
		"mkdir -p .git/hooks && printf '#!/bin/sh\\ntouch pwned\\n' > .git/hooks/pre-commit",
		"rm -rf .git/objects",
		"mv .git .git-moved",
	} {
		if out, st := run(t, sb, ws, line); st.Code == 0 {
			t.Errorf("unasked %q succeeded: %q", line, out)
		}
	}
	for _, line := range []string{"git status --short", "echo b > b.txt", "git log --oneline -1 || true"} {
		if out, st := run(t, sb, ws, line); st.Code != 0 {
			t.Errorf("unasked %q failed: %v %q", line, st, out)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(ws, ".git", "config")); string(got) != string(config) {
		t.Errorf(".git/config changed:\n%s", got)
	}
	if _, err := os.Stat(filepath.Join(ws, ".git", "hooks", "pre-commit")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a hook was planted: %v", err)
	}
	commit := "git -c user.name=t -c user.email=t@example.com add -A && git -c user.name=t -c user.email=t@example.com commit -qm approved"
	if out, st := runTrusted(t, sb, Approved, ws, commit); st.Code != 0 {
		t.Errorf("an approved commit failed: %v %q", st, out)
	}
}

// TestSocketsTheFilterRefuses: socket families are an allowlist (Unix, netlink, IP), so vsock,
// SMC, packet, Bluetooth and any family to come are refused; with the network off, only plain TCP
// and UDP sockets can be made, in the command's own network namespace (or none at all without
// one); io_uring, which makes sockets without socket(2), and the kernel keyrings are refused.
func TestSocketsTheFilterRefuses(t *testing.T) {
	const (
		family = "address family not supported by protocol"
		proto  = "protocol not supported"
		nosys  = "function not implemented"
		denied = "permission denied"
	)
	inet := []string{"tcp", "udp", "mptcp", "mptcp6", "sctp", "raw"}
	for _, tt := range []struct {
		name       string
		network    bool
		namespaces bool
		want       map[string]string
	}{
		{"network off", false, true, map[string]string{"mptcp": proto, "mptcp6": proto, "sctp": proto, "raw": proto}},
		{"network on", true, true, nil},
		{"network off, no namespaces", false, false, map[string]string{"tcp": denied, "udp": denied, "mptcp": denied,
			"mptcp6": denied, "sctp": denied, "raw": denied}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if !tt.namespaces {
				withoutNamespaces(t)
			}
			sb, ws := confined(t, tt.network)
			out, st := run(t, sb, ws, "REPRISE_SANDBOX_TEST_PROBE=sockets "+os.Args[0])
			if st.Code != 0 {
				t.Fatalf("probe: %v %q", st, out)
			}
			got := map[string]string{}
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				k, v, _ := strings.Cut(line, "=")
				got[k] = v
			}
			want := map[string]string{"packet": family, "vsock": family, "smc": family, "bluetooth": family,
				"netlink": "<nil>", "unix": "<nil>", "io_uring": nosys, "keyctl": nosys}
			for _, k := range inet {
				want[k] = "<nil>"
			}
			for k, v := range tt.want {
				want[k] = v
			}
			if tt.network { // not the filter's doing: the kernel's modules and the user's capabilities
				want["raw"], want["sctp"] = got["raw"], got["sctp"]
			}
			if diff := cmp.Diff(got, want); diff != "" {
				t.Errorf("(-got +want):\n%s", diff)
			}
		})
	}
}

// withoutNamespaces makes the sandbox behave, for one test, as where user namespaces are not
// available: Landlock and the filter alone.
func withoutNamespaces(t *testing.T) {
	namespacesUnavailable()
	saved := namespaces.reason
	namespaces.reason = "simulated: no user namespaces"
	t.Cleanup(func() { namespaces.reason = saved })
}

// TestCommandCannotKillItsSupervisor: the supervisor shares no Landlock domain with the command,
// so it cannot be signalled (not even thread by thread) and goes on to kill what was left behind.
func TestCommandCannotKillItsSupervisor(t *testing.T) {
	sb, ws := confined(t, false)
	line := `setsid sleep 300 & echo $!; s=$(ps -o ppid= -p $$ | tr -d ' '); for t in /proc/$s/task/*; do kill -KILL ${t##*/} 2>/dev/null && echo killed; done; kill -TERM $s 2>/dev/null && echo killed; exit 0`
	out, st := run(t, sb, ws, line)
	if st.Code != 0 || strings.Contains(out, "killed") {
		t.Fatalf("the command signalled its supervisor: %v %q", st, out)
	}
	pid, err := strconv.Atoi(strings.Fields(out)[0])
	if err != nil {
		t.Fatalf("output %q", out)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process %d outlived the command: %v", pid, err)
	}
}

// TestCommandCannotFakeItsStatus: the supervisor's report descriptor is not inherited.
func TestCommandCannotFakeItsStatus(t *testing.T) {
	for _, mode := range []Mode{WorkspaceWrite, Off} {
		ws := t.TempDir()
		sb := New(Config{Mode: mode, Workspace: ws, Writable: []string{}})
		out, st := run(t, sb, ws, `printf '{"code":0}' >&3; exit 7`)
		if st.Code != 7 {
			t.Errorf("%s: status %+v (output %q), want the command's own 7", mode, st, out)
		}
	}
}

// TestOtherTerminalsUnreadable: a pseudo-terminal of the user (another tab, where they may type a
// password) cannot be read from the sandbox; the command can still make its own.
func TestOtherTerminalsUnreadable(t *testing.T) {
	sb, ws := confined(t, false)
	if why := namespacesUnavailable(); why != "" {
		t.Fatalf("user namespaces are needed: %s", why)
	}
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer master.Close()
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	slave := fmt.Sprintf("/dev/pts/%d", n)
	keep, err := os.OpenFile(slave, os.O_RDWR|unix.O_NOCTTY, 0) // the user's shell holds it open
	if err != nil {
		t.Fatal(err)
	}
	defer keep.Close()
	if _, err := master.WriteString("hunter2\n"); err != nil {
		t.Fatal(err)
	}
	out, _ := run(t, sb, ws, "timeout 2 head -n1 "+slave+"; ls /dev/pts")
	if strings.Contains(out, "hunter2") {
		t.Errorf("the command read the user's terminal: %q", out)
	}
	py := `python3 -c 'import os, pty; m, s = pty.openpty(); print("pty", os.ttyname(s))'`
	if out, st := run(t, sb, ws, py); st.Code != 0 || !strings.HasPrefix(out, "pty /dev/pts/") {
		t.Errorf("the command cannot make a pseudo-terminal: %v %q", st, out)
	}
}

func TestDefaultWritable(t *testing.T) {
	env := map[string]string{"HOME": "/home/u", "TMPDIR": "/var/tmp/u"}
	getenv := func(k string) string { return env[k] }
	if got := DefaultWritable(getenv, false); len(got) != 0 {
		t.Errorf("network off: %q, want none (the temp dirs are the sandbox's own)", got)
	}
	want := []string{"/home/u/go/pkg/mod", "/home/u/.npm", "/home/u/.cache/yarn",
		"/home/u/.cargo/registry", "/home/u/.cargo/git", "/home/u/.cache/pip"}
	if diff := cmp.Diff(DefaultWritable(getenv, true), want); diff != "" {
		t.Errorf("network on (-got +want):\n%s", diff)
	}
	if got := DefaultCache(getenv); got != "/home/u/.cache/reprise/sandbox" {
		t.Errorf("DefaultCache = %q", got)
	}
	a, b := WorkspaceCache(getenv, "/home/u/src/a"), WorkspaceCache(getenv, "/home/u/work/a")
	if a == b || filepath.Dir(a) != "/home/u/.cache/reprise/sandbox" || !strings.HasPrefix(filepath.Base(a), "a-") {
		t.Errorf("WorkspaceCache: %q and %q, want one directory per workspace", a, b)
	}
}

// TestBuildCacheIsTheSandboxs: confined commands build into the sandbox's cache, not the user's.
func TestBuildCacheIsTheSandboxs(t *testing.T) {
	ws, cache := t.TempDir(), t.TempDir()
	sb := New(Config{Workspace: ws, Writable: []string{}, Cache: cache})
	c, err := sb.Command(t.Context(), Unasked, "/bin/sh", "-c", "echo $GOCACHE; echo x > $GOCACHE-probe")
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	c.Dir = ws // the test's own directory may be under /tmp, which the command does not see
	c.Env = sb.Env(append(os.Environ(), "GOCACHE=/home/u/.cache/go-build"))
	c.Stdout, c.Stderr = &out, &out
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	if st, err := c.Wait(); err != nil || st.Code != 0 {
		t.Fatalf("%v %v %q", st, err, out.String())
	}
	if got := strings.TrimSpace(strings.Split(out.String(), "\n")[0]); got != filepath.Join(cache, "go-build") {
		t.Errorf("GOCACHE = %q", got)
	}
}

// TestAsUnprivilegedUser runs the confinement tests again as nobody when the suite runs as root:
// capabilities are not the same for another user (the namespace step must keep CAP_SYS_ADMIN
// across its exec, which root does without asking).
func TestAsUnprivilegedUser(t *testing.T) {
	if os.Getuid() != 0 {
		t.Log("already unprivileged: the other tests are the check")
		return
	}
	dir, err := os.MkdirTemp("", "reprise-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin := filepath.Join(dir, "sandbox.test")
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"tmp", "home"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(dir, d), 0o777); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), bin, "-test.skip=^TestAsUnprivilegedUser$", "-test.count=1", "-test.v")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + filepath.Join(dir, "home"), "TMPDIR=" + filepath.Join(dir, "tmp")}
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
	if n := strings.Count(string(out), "--- PASS"); n < 15 {
		t.Errorf("as nobody, %d tests passed, want them all:\n%s", n, out)
	}
}
