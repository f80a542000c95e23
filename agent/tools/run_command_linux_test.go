package tools

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-dev/reprise/agent/cmdpolicy"
)

var subreaper sync.Once

// becomeSubreaper makes the processes a command leaves orphaned our children rather than
// init's, so a test can wait for them deterministically (init in a container may never reap).
func becomeSubreaper(t *testing.T) {
	subreaper.Do(func() {
		const prSetChildSubreaper = 36
		if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
			t.Fatalf("prctl(PR_SET_CHILD_SUBREAPER): %v", errno)
		}
	})
}

// assertGroupGone waits for every process left in group pgid to be reaped: it returns at once
// when they were killed, and hangs (until the test times out) if one was not.
func assertGroupGone(t *testing.T, pgid int) {
	t.Helper()
	for {
		var ws syscall.WaitStatus
		_, err := syscall.Wait4(-pgid, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if errors.Is(err, syscall.ECHILD) {
			break
		}
		if err != nil {
			t.Fatalf("wait for group %d: %v", pgid, err)
		}
		if !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Errorf("a process of group %d ended with %v, want killed", pgid, ws)
		}
	}
	if err := syscall.Kill(-pgid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process group %d still exists: %v", pgid, err)
	}
}

// firstLineInt parses the pid a command printed first.
func firstLineInt(t *testing.T, s string) int {
	t.Helper()
	line, _, _ := strings.Cut(s, "\n")
	n, err := strconv.Atoi(line)
	if err != nil {
		t.Fatalf("no pid on the first line of %q", s)
	}
	return n
}

func TestRunCommandTimeoutKillsGroup(t *testing.T) {
	becomeSubreaper(t)
	env := &Env{Workspace: workspace(t, nil), Commands: &cmdpolicy.Policy{AllowAll: true}}
	r := runCmd(t, env, "echo $$; sleep 100 & sleep 100", "timeout_s", 1)
	pgid := firstLineInt(t, r.Output)
	got := []any{r.Output, r.IsError, r.TimedOut, r.ExitCode}
	if diff := cmp.Diff(got, []any{fmt.Sprintf("%d\ntimed out after 1s", pgid), true, true, -1}); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
	assertGroupGone(t, pgid)
}

// TestRunCommandCancel cancels a running command: the fifo tells the test it has started.
func TestRunCommandCancel(t *testing.T) {
	becomeSubreaper(t)
	env := &Env{Workspace: workspace(t, nil), Commands: &cmdpolicy.Policy{AllowAll: true}}
	// In the workspace: the command's /tmp is its own.
	fifo := filepath.Join(env.Workspace, "started")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan Result, 1)
	go func() {
		done <- Run(ctx, env, Call{Name: "run_command", Args: map[string]any{
			"command": fmt.Sprintf("echo started; sleep 100 & echo $$ > '%s'; sleep 100", fifo),
		}})
	}()
	f, err := os.Open(fifo) // returns once the command opens it for writing
	if err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(f).ReadString('\n')
	f.Close()
	cancel()
	r := <-done
	got := []any{r.Output, r.IsError, r.TimedOut, r.ExitCode}
	if diff := cmp.Diff(got, []any{"started\ncancelled", true, false, -1}); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
	pgid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}
	assertGroupGone(t, pgid)
}

// TestRunCommandSetsidDoesNotOutlive: a process that left the command's group and session
// (setsid) is still killed when the command ends, so it holds neither the pipe nor the machine.
func TestRunCommandSetsidDoesNotOutlive(t *testing.T) {
	env := &Env{Workspace: workspace(t, nil), Commands: &cmdpolicy.Policy{AllowAll: true}}
	fifo := filepath.Join(env.Workspace, "pid")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// The shell waits for the pid, written once the new session exists, so the group kill
	// cannot catch the process before it left.
	r := runCmd(t, env, fmt.Sprintf(`setsid sh -c 'echo $$ > %[1]s; exec sleep 100' & read pid < %[1]s; echo $pid`, fifo))
	pid := firstLineInt(t, r.Output)
	if diff := cmp.Diff(r.Output, fmt.Sprintf("%d\nexit status 0", pid)); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the setsid process %d outlived the command: %v", pid, err)
	}
}
