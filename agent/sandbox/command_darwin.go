package sandbox

import (
	"context"
	"os"
	"os/exec"
	"syscall"
)

const sandboxExec = "/usr/bin/sandbox-exec"

func probe(Config) string {
	if _, err := os.Stat(sandboxExec); err != nil {
		return "sandbox-exec is not available: " + err.Error()
	}
	return ""
}

// command runs argv under sandbox-exec when confined, in a process group of its own that
// cancelling kills, and so does the command's end: what it left in the background dies with it
// (macOS has no child subreaper: a process that leaves the group survives).
func command(ctx context.Context, sp spec, argv []string) (*Cmd, error) {
	if sp.Confine {
		argv = append([]string{sandboxExec, "-p", seatbeltProfile(sp)}, argv...)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
	c := &Cmd{Cmd: cmd}
	c.ended = func() bool {
		// The leader is reaped, but its group lives on while a member does, and its id is not
		// reused meanwhile; when none is left there is nothing to kill (ESRCH).
		if cmd.Process != nil {
			_ = killGroup(cmd.Process.Pid)
		}
		return false
	}
	return c, nil
}

func supervise([]string) int { return fail("no supervisor on this OS") }

func confine([]string) int { return fail("no confining process on this OS") }

// namespacesUnavailable: the profile denies writes under the read-only directories, as the
// namespaces do on Linux.
func namespacesUnavailable() string { return "" }
