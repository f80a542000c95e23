// Package filelock takes an exclusive lock on an open file without waiting, the same way on every
// OS: a session log is written by one server at a time, and a temporary file's note tells a
// later start-up whether its writer is still alive. The lock goes with the file or the process.
package filelock

import (
	"errors"
	"os"
)

// ErrLocked is returned by TryLock when another open file (of this process or another) holds it.
var ErrLocked = errors.New("locked by another process")

// TryLock locks f exclusively, or fails at once with ErrLocked. Where the OS offers no file locks
// it does nothing and succeeds.
func TryLock(f *os.File) error { return tryLock(f) }
