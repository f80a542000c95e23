package tools

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// tmpfileOff makes Linux take the named path, for tests of what other systems do.
var tmpfileOff bool

// unnamed writes into an O_TMPFILE file in the parent directory: until it is linked in, the file
// has no name, so a kill mid-write leaves nothing. It is linked at base directly when base does
// not exist; otherwise under a temporary name renamed over base at once (Linux cannot link over an
// existing name), that name recorded in temps for the two system calls it exists. done is false
// when the directory's file system has no O_TMPFILE: nothing was written, the caller goes on.
func (w *atomicWrite) unnamed(r io.Reader) (done bool, err error) {
	if tmpfileOff {
		return false, nil
	}
	dfd := int(w.dir.Fd()) // valid while w.dir is open, which is the whole call
	fd, err := unix.Openat(dfd, ".", unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return false, nil // EOPNOTSUPP, or EISDIR on kernels without O_TMPFILE
	}
	f := os.NewFile(uintptr(fd), filepath.Join(w.dirRel, w.base))
	defer f.Close()
	if _, err := io.Copy(f, r); err != nil {
		return true, err
	}
	// After the data: a write clears the setuid and setgid bits.
	if err := f.Chmod(w.mode); err != nil {
		return true, err
	}
	if err := f.Sync(); err != nil {
		return true, err
	}
	// Linking an O_TMPFILE by its /proc/self/fd entry needs no privilege (AT_EMPTY_PATH would).
	proc := "/proc/self/fd/" + strconv.Itoa(fd)
	err = unix.Linkat(unix.AT_FDCWD, proc, dfd, w.base, unix.AT_SYMLINK_FOLLOW)
	if err == nil {
		return true, nil
	}
	if !errors.Is(err, unix.EEXIST) {
		// No /proc, or a link refused: the content written so far goes through a named file.
		if _, serr := f.Seek(0, io.SeekStart); serr != nil {
			return true, serr
		}
		return true, w.named(f)
	}
	rel := filepath.Join(w.dirRel, w.base)
	for {
		name := w.tmpName()
		release, err := w.temps.add(w.root.Name(), filepath.Join(w.dirRel, name))
		if err != nil {
			return true, fmt.Errorf("record temporary file: %w", err)
		}
		err = unix.Linkat(unix.AT_FDCWD, proc, dfd, name, unix.AT_SYMLINK_FOLLOW)
		if errors.Is(err, unix.EEXIST) {
			release()
			continue
		}
		if err != nil {
			release()
			return true, &os.PathError{Op: "link", Path: rel, Err: err}
		}
		// renameat replaces a symlink at base rather than following it.
		err = unix.Renameat(dfd, name, dfd, w.base)
		if err != nil {
			_ = unix.Unlinkat(dfd, name, 0) // the temporary name; CleanTemps sweeps what stays
		}
		release()
		if err != nil {
			return true, &os.PathError{Op: "rename", Path: rel, Err: err}
		}
		return true, nil
	}
}
