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
// cancelling kills (macOS has no child subreaper: a process that leaves the group survives).
func (s *Sandbox) command(ctx context.Context, sp spec, argv []string) (*Cmd, error) {
	if sp.Confine {
		argv = append([]string{sandboxExec, "-p", seatbeltProfile(sp)}, argv...)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
	return &Cmd{Cmd: cmd}, nil
}

func supervise([]string) int { return fail("no supervisor on this OS") }

func confine([]string) int { return fail("no confining process on this OS") }

// namespacesUnavailable: the profile denies writes under the read-only directories, as the
// namespaces do on Linux.
func namespacesUnavailable() string { return "" }
