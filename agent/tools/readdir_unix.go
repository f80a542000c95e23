//go:build unix

package tools

import (
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

const haveOpenAt = true

// openFileAt opens name in dir with one openat: no symbolic link followed, and O_NONBLOCK so
// that a FIFO put there since the listing fails to read instead of blocking the search.
func openFileAt(dir *os.File, name string) (io.ReadCloser, error) {
	for {
		fd, err := unix.Openat(int(dir.Fd()), name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "openat", Path: name, Err: err}
		}
		return fdReader(fd), nil
	}
}

// fdReader reads a descriptor without the runtime's poller: a regular file never waits, and
// registering each of thousands of files with it would cost more system calls than the reads.
type fdReader int

func (r fdReader) Read(p []byte) (int, error) {
	for {
		n, err := unix.Read(int(r), p)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return 0, err
		case n == 0 && len(p) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

func (r fdReader) Close() error { return unix.Close(int(r)) }

// walkFS is root's fs.FS for a walk, whose ReadDir takes the entries' types from the directory
// itself: a directory opened in an os.Root stats every entry as it is listed (Go cannot check a
// lazy stat against the root), one system call per file that the walk never needs. The
// directory is still opened through the root; only its listing is read from a copy of its
// descriptor, which Go treats as any directory.
type walkFS struct {
	fs.FS
	root *os.Root
}

func newWalkFS(root *os.Root) fs.FS { return walkFS{root.FS(), root} }

func (w walkFS) ReadDir(name string) ([]fs.DirEntry, error) {
	d, err := w.root.Open(name)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	fd, err := unix.FcntlInt(d.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "readdir", Path: name, Err: err}
	}
	plain := os.NewFile(uintptr(fd), name)
	defer plain.Close()
	entries, err := plain.ReadDir(-1)
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, err
}
