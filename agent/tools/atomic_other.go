//go:build !linux

package tools

import "io"

// unnamed is Linux's O_TMPFILE path; elsewhere the temporary file is always named (and recorded).
func (w *atomicWrite) unnamed(io.Reader) (done bool, err error) { return false, nil }
