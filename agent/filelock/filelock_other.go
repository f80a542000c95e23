//go:build !unix && !windows

package filelock

import "os"

func tryLock(*os.File) error { return nil }
