//go:build !unix

package tools

import (
	"io"
	"io/fs"
	"os"
)

// haveOpenAt: files are opened through the root, path and all.
const haveOpenAt = false

func openFileAt(*os.File, string) (io.ReadCloser, error) { panic("unreachable: no openat") }

// newWalkFS is root's fs.FS.
func newWalkFS(root *os.Root) fs.FS { return root.FS() }
