//go:build !linux && !windows

package tools

import "os"

// outputPipe is a command's output pipe (its size cannot be changed here).
func outputPipe() (r, w *os.File, err error) { return os.Pipe() }
