package tools

import (
	"os"
	"syscall"
)

// pipeSize is asked for a command's output pipe: with the default 64 KiB, a flooding command and
// our reader take turns too often.
const pipeSize = 1 << 20

// outputPipe is a command's output pipe, enlarged when the system lets us (pipe-max-size;
// failing is fine).
func outputPipe() (r, w *os.File, err error) {
	r, w, err = os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	rc, err := w.SyscallConn()
	if err != nil {
		return r, w, nil
	}
	_ = rc.Control(func(fd uintptr) {
		_, _, _ = syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_SETPIPE_SZ, pipeSize)
	})
	return r, w, nil
}
