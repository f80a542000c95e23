//go:build unix

package mcp

import (
	"os/exec"
	"syscall"
)

// setProcessGroup puts a stdio server in a process group of its own, so that killing the group
// also kills what it started.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killProcessGroup kills a stdio server and everything in its process group.
func killProcessGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
