package sandbox

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/windows"
)

// roleEnv makes the test binary play a part in a process tree (see TestMain).
const roleEnv = "REPRISE_SANDBOX_TEST_ROLE"

func TestMain(m *testing.M) {
	Init()
	if role := os.Getenv(roleEnv); role != "" {
		os.Exit(play(role))
	}
	os.Exit(m.Run())
}

// play is what the test binary does as a command:
//   - sleep: stands for a background process, and lives long;
//   - leave, stay: start a sleep, print their pid and its, then leave it behind and exit once a
//     line comes on stdin, or stay with it;
//   - owner: start a stay through the sandbox, with its output, and wait to be killed;
//   - exit3: exit with status 3.
func play(role string) int {
	switch role {
	case "sleep":
		time.Sleep(10 * time.Minute)
	case "leave", "stay":
		child := selfAs("sleep")
		if err := child.Start(); err != nil {
			return fail("%v", err)
		}
		fmt.Printf("%d %d\n", os.Getpid(), child.Process.Pid)
		if role == "stay" {
			time.Sleep(10 * time.Minute)
		}
		if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
			return fail("%v", err)
		}
	case "owner":
		c, err := New(Config{Mode: Off}).Command(context.Background(), Unasked, selfAs("stay").Args...)
		if err != nil {
			return fail("%v", err)
		}
		c.Env = append(os.Environ(), roleEnv+"=stay")
		c.Stdout = os.Stdout
		if err := c.Start(); err != nil {
			return fail("%v", err)
		}
		time.Sleep(10 * time.Minute)
	case "exit3":
		return 3
	}
	return 0
}

// selfAs is the test binary as a command playing role.
func selfAs(role string) *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), roleEnv+"="+role)
	return cmd
}

// tree starts role (leave or stay) under the sandbox and returns handles on it and on the
// process it started, opened while both live, and a writer to its stdin.
func tree(ctx context.Context, t *testing.T, role string) (*Cmd, []windows.Handle, io.WriteCloser) {
	t.Helper()
	c, err := New(Config{Mode: Off}).Command(ctx, Unasked, selfAs(role).Args...)
	if err != nil {
		t.Fatal(err)
	}
	c.Env = append(os.Environ(), roleEnv+"="+role)
	out, stdin := pipes(t, c)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	return c, openAll(t, out), stdin
}

// pipes gives c a stdout to read and a stdin to write.
func pipes(t *testing.T, c *Cmd) (*bufio.Reader, io.WriteCloser) {
	t.Helper()
	or, ow, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	ir, iw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, f := range []*os.File{or, ow, ir, iw} {
			_ = f.Close()
		}
	})
	c.Stdout, c.Stdin = ow, ir
	return bufio.NewReader(or), iw
}

// openAll reads a line of pids and opens each process, to wait for it.
func openAll(t *testing.T, out *bufio.Reader) []windows.Handle {
	t.Helper()
	line, err := out.ReadString('\n')
	if err != nil {
		t.Fatalf("read the pids: %v", err)
	}
	var hs []windows.Handle
	for _, f := range strings.Fields(line) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("bad pid in %q", line)
		}
		h, err := windows.OpenProcess(windows.SYNCHRONIZE|windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
		if err != nil {
			t.Fatalf("open process %d: %v", pid, err)
		}
		t.Cleanup(func() { _ = windows.CloseHandle(h) })
		hs = append(hs, h)
	}
	return hs
}

// ended waits for each process to end and returns their exit statuses. The wait is bounded so
// that a survivor fails the test instead of hanging it.
func ended(t *testing.T, hs []windows.Handle) []uint32 {
	t.Helper()
	var codes []uint32
	for i, h := range hs {
		ev, err := windows.WaitForSingleObject(h, 30_000)
		if err != nil || ev != windows.WAIT_OBJECT_0 {
			t.Fatalf("process %d outlived the command (%#x, %v)", i, ev, err)
		}
		var code uint32
		if err := windows.GetExitCodeProcess(h, &code); err != nil {
			t.Fatal(err)
		}
		codes = append(codes, code)
	}
	return codes
}

// assertKilled checks that the job's termination ended each process.
func assertKilled(t *testing.T, hs []windows.Handle) {
	t.Helper()
	want := make([]uint32, len(hs))
	for i := range want {
		want[i] = killedCode
	}
	if diff := cmp.Diff(ended(t, hs), want); diff != "" {
		t.Errorf("exit statuses (-got +want):\n%s", diff)
	}
}

// TestJobKillsWhatTheCommandLeft: a command exits; the process it left in the background dies.
func TestJobKillsWhatTheCommandLeft(t *testing.T) {
	c, hs, stdin := tree(t.Context(), t, "leave")
	if _, err := io.WriteString(stdin, "go\n"); err != nil {
		t.Fatal(err)
	}
	st, err := c.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(st, Status{Code: 0}); diff != "" {
		t.Errorf("status (-got +want):\n%s", diff)
	}
	assertKilled(t, hs[1:])
}

// TestJobKilledOnCancel: cancelling kills the command and what it started, at once.
func TestJobKilledOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	c, hs, _ := tree(ctx, t, "stay")
	cancel()
	st, err := c.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(st, Status{Code: -1, Signal: syscall.SIGKILL}); diff != "" {
		t.Errorf("status (-got +want):\n%s", diff)
	}
	assertKilled(t, hs)
}

// TestJobKilledWithItsOwner: when the process that runs commands dies (killed outright, nothing
// of it runs), the last handle on the job goes and the job's processes die with it. (Their exit
// status is the system's choice: 0 under Wine.)
func TestJobKilledWithItsOwner(t *testing.T) {
	owner := selfAs("owner")
	out, err := owner.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	hs := openAll(t, bufio.NewReader(out))
	if err := owner.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := owner.Wait(); err == nil {
		t.Error("the owner exited by itself")
	}
	ended(t, hs)
}

func TestStatusWindows(t *testing.T) {
	c, err := New(Config{Mode: Off}).Command(t.Context(), Unasked, selfAs("exit3").Args...)
	if err != nil {
		t.Fatal(err)
	}
	c.Env = append(os.Environ(), roleEnv+"=exit3")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	st, err := c.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(st, Status{Code: 3}); diff != "" {
		t.Errorf("status (-got +want):\n%s", diff)
	}
}

// TestAdoptAfterKill: a command cancelled while still suspended, before it is in its job, never
// runs: it dies when adopted.
func TestAdoptAfterKill(t *testing.T) {
	j, err := newJob(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer j.close()
	cmd := selfAs("leave") // would print its pid if it ran
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_SUSPENDED}
	var out strings.Builder
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := j.kill(); err != nil {
		t.Fatal(err)
	}
	if err := j.adopt(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	if cmd.ProcessState.ExitCode() != killedCode || out.Len() > 0 {
		t.Errorf("exit %d (%v), output %q; want %d and nothing: it never ran", cmd.ProcessState.ExitCode(), err, out.String(), killedCode)
	}
}
