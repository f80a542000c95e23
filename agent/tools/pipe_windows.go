package tools

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"

	"golang.org/x/sys/windows"
)

// pipeSize is the buffer asked for a command's output pipe, as on Linux.
const pipeSize = 1 << 20

var pipes atomic.Uint64 // numbers the pipes' names

// outputPipe is a command's output pipe. os.Pipe's handles are synchronous, and a read on them
// ignores deadlines: a process that escaped the command's job with a copy of the write end would
// hang the call. So the read end is a named pipe opened for overlapped I/O, which Go polls, and
// the write end, the command's, an ordinary synchronous handle.
func outputPipe() (r, w *os.File, err error) {
	name, err := windows.UTF16PtrFromString(fmt.Sprintf(`\\.\pipe\reprise-%d-%d`, os.Getpid(), pipes.Add(1)))
	if err != nil {
		return nil, nil, err
	}
	// One instance, ours (FIRST_PIPE_INSTANCE fails if someone made the name first), local only.
	rh, err := windows.CreateNamedPipe(name,
		windows.PIPE_ACCESS_INBOUND|windows.FILE_FLAG_OVERLAPPED|windows.FILE_FLAG_FIRST_PIPE_INSTANCE,
		windows.PIPE_TYPE_BYTE|windows.PIPE_READMODE_BYTE|windows.PIPE_WAIT|windows.PIPE_REJECT_REMOTE_CLIENTS,
		1, 0, pipeSize, 0, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("create the output pipe: %w", err)
	}
	wh, err := windows.CreateFile(name, windows.GENERIC_WRITE, 0, nil, windows.OPEN_EXISTING, 0, 0)
	if err != nil {
		return nil, nil, errors.Join(fmt.Errorf("open the output pipe: %w", err), windows.CloseHandle(rh))
	}
	return os.NewFile(uintptr(rh), "|0"), os.NewFile(uintptr(wh), "|1"), nil
}
