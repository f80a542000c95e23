//go:build unix

package sandbox

import (
	"os"
	"syscall"
)

func processStatus(ps *os.ProcessState) Status {
	if ps == nil {
		return Status{Code: -1}
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return Status{Code: -1, Signal: ws.Signal()}
	}
	return Status{Code: ps.ExitCode()}
}
