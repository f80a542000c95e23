//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package tools

import (
	"os"
	"syscall"
)

// lockNote locks a note for its writer's lifetime; the lock goes with the process.
func lockNote(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}

// tryLockNote reports whether the note's writer is gone (the lock could be taken).
func tryLockNote(f *os.File) bool {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}
