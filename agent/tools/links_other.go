//go:build !unix && !windows

package tools

import "errors"

// fileLinks: no link count here.
func fileLinks(uintptr) (uint64, error) { return 0, errors.ErrUnsupported }
