package tools

import (
	"os"
	"syscall"
)

// pipeSize is asked for a command's output pipe: with the default 64 KiB, a flooding command and
// our reader take turns too often.
const pipeSize = 1 << 20

// growPipe enlarges the pipe behind f when the system lets us (pipe-max-size); failing is fine.
func growPipe(f *os.File) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	rc.Control(func(fd uintptr) {
		syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_SETPIPE_SZ, pipeSize)
	})
}
