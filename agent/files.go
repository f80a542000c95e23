package agent

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/reprise-dev/reprise/agent/tools"
)

// Workspace files the harness reads on its own (custom instructions, hashes for staleness and
// restore) are as untrusted as the model: one may be a symlink leading out (to
// /proc/self/environ), a FIFO that blocks a reader forever, or endless (/dev/zero). They are
// opened through an os.Root on the workspace, without blocking, and read only when regular.

// errNotRegular is returned for a FIFO, a device, a socket or a directory.
var errNotRegular = errors.New("not a regular file")

// openRegular opens rel under root for reading when it is a regular file. O_NONBLOCK makes the
// open of a FIFO return at once instead of waiting for a writer; fstat then rejects it.
func openRegular(root *os.Root, rel string) (*os.File, error) {
	f, err := root.OpenFile(filepath.FromSlash(rel), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s: %w (%v)", rel, errNotRegular, fi.Mode().Type())
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// hashFile is the SHA-256 of rel, read as a stream: memory stays bounded whatever its size.
func hashFile(root *os.Root, rel string) (string, error) {
	f, err := openRegular(root, rel)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return string(h.Sum(nil)), nil
}

// swapped says why rel can no longer be restored safely: the agent's paths were free of symlinks
// when it wrote them (tools resolve them), so a symlink anywhere on the path now, or anything but
// a regular file at its end, was put there since, possibly to redirect the restore out of the
// workspace. It returns "" when the path is as the agent left it, or missing from some point on.
func swapped(root *os.Root, rel string) string {
	parts := strings.Split(rel, "/")
	for i := range parts {
		prefix := filepath.Join(parts[:i+1]...)
		fi, err := root.Lstat(prefix)
		if errors.Is(err, fs.ErrNotExist) {
			return ""
		}
		if err != nil {
			return describeRootError(err)
		}
		last := i == len(parts)-1
		switch {
		case fi.Mode()&fs.ModeSymlink != 0 && last:
			return "it is now a symlink"
		case fi.Mode()&fs.ModeSymlink != 0:
			return filepath.ToSlash(prefix) + " is now a symlink"
		case !last && !fi.IsDir():
			return filepath.ToSlash(prefix) + " is no longer a directory"
		case last && !fi.Mode().IsRegular():
			return "it is no longer a regular file"
		}
	}
	return ""
}

// escapes reports whether os.Root refused err's path as leading out of it.
func escapes(err error) bool {
	return strings.Contains(err.Error(), "path escapes from parent") // os.Root's unexported error
}

// describeRootError words an os.Root error for the user; a refused escape is a symlink swapped in.
func describeRootError(err error) string {
	if escapes(err) {
		return "it now leads outside the workspace"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// writeBack writes data to rel through root with the tools' atomic write, keeping the file's mode
// (a new file's otherwise).
func writeBack(root *os.Root, rel string, data []byte, temps *tools.Temps) error {
	if dir := filepath.Dir(rel); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	mode := fs.FileMode(0o644)
	if fi, err := root.Lstat(rel); err == nil && fi.Mode().IsRegular() {
		mode = fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	}
	return tools.WriteAtomic(root, rel, data, mode, temps)
}
