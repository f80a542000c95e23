package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"golang.org/x/sys/unix"
)

// privateMounts builds the command's view of the file system, in a mount namespace of its own
// (nothing here propagates back to the user's):
//   - every mount is read-only but the workspace, the writable directories, /dev and /proc: no
//     file, mode, owner, time or extended attribute changes outside, whatever Landlock covers;
//   - TempDir is mounted on /tmp and a new tmpfs on /dev/shm, of MaxTemp bytes: the user's
//     temporary files, their sockets (X11, ssh-agent, tmux) and shared-memory segments are out of
//     sight;
//   - /dev/pts is a new instance: the user's other terminals are not there;
//   - Home is covered by an empty read-only directory where Keep (toolchains, caches) come back
//     read-only, and the writable trees under it writable;
//   - Hide (credentials) and Sockets (listening Unix sockets outside) are covered by empty
//     read-only mounts;
//   - ReadOnly (version-control and editor files in the workspace) are bound read-only.
func privateMounts(sp spec) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	trees, err := writableTrees(sp)
	defer func() {
		for _, t := range trees {
			unix.Close(t.fd)
		}
	}()
	if err != nil {
		return err
	}
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	if err := unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE, &attr); err != nil {
		return fmt.Errorf("make the file system read-only: %w", err)
	}
	if sp.Home != "" {
		kept, err := coverHome(sp, trees)
		defer func() {
			for _, t := range kept {
				unix.Close(t.fd)
			}
		}()
		if err != nil {
			return err
		}
		trees = append(trees, kept...)
		slices.SortStableFunc(trees, func(a, b tree) int { return len(a.dst) - len(b.dst) })
	}
	for _, t := range trees {
		err := unix.MoveMount(t.fd, "", unix.AT_FDCWD, t.dst, unix.MOVE_MOUNT_F_EMPTY_PATH)
		if errors.Is(err, unix.ENOENT) {
			// The workspace under /tmp: its place in the private temp dir is made first.
			if err = os.MkdirAll(t.dst, 0o700); err == nil {
				err = unix.MoveMount(t.fd, "", unix.AT_FDCWD, t.dst, unix.MOVE_MOUNT_F_EMPTY_PATH)
			}
		}
		if err != nil {
			return fmt.Errorf("mount %s back writable: %w", t.dst, err)
		}
	}
	shm := "mode=1777"
	if sp.MaxTemp > 0 { // not half the RAM, tmpfs's default: the bound of the temp dir
		shm += ",size=" + strconv.FormatInt(sp.MaxTemp, 10)
	}
	if err := unix.Mount("tmpfs", "/dev/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, shm); err != nil {
		return fmt.Errorf("private /dev/shm: %w", err)
	}
	if err := privatePTS(); err != nil {
		return err
	}
	for _, p := range append(slices.Clone(sp.Hide), sp.Sockets...) {
		if err := cover(p); err != nil {
			return err
		}
	}
	for _, p := range sp.ReadOnly {
		if err := bindReadOnly(p); err != nil {
			return err
		}
	}
	return nil
}

// coverHome hides the home directory behind an empty directory, read-only once the mount points
// of what comes back are made in it: kept, the copies of Keep (read-only, as the file system now
// is), and the writable trees that lie in the home (the workspace, the sandbox's cache).
func coverHome(sp spec, writable []tree) (kept []tree, err error) {
	for _, p := range sp.Keep {
		fd, err := unix.OpenTree(unix.AT_FDCWD, p, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
		if err != nil {
			continue // gone since the spec was made, or unreadable to this user: nothing to show
		}
		kept = append(kept, tree{fd, p})
	}
	if err := unix.Mount("tmpfs", sp.Home, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size=1m,mode=0755"); err != nil {
		return kept, fmt.Errorf("hide the home directory: %w", err)
	}
	for _, t := range append(slices.Clone(kept), writable...) {
		if !within(sp.Home, t.dst) || t.dst == sp.Home {
			continue
		}
		if err := mountPoint(t.dst, t.fd); err != nil {
			return kept, fmt.Errorf("mount %s back in the home directory: %w", t.dst, err)
		}
	}
	for link, target := range sp.Links {
		if os.MkdirAll(filepath.Dir(link), 0o755) == nil {
			_ = os.Symlink(target, link) // a link under another link's place: that one holds
		}
	}
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	if err := unix.MountSetattr(unix.AT_FDCWD, sp.Home, 0, &attr); err != nil {
		return kept, fmt.Errorf("make the home directory read-only: %w", err)
	}
	return kept, nil
}

// mountPoint makes the place where the tree fd is to be attached at dst: a directory, or an empty
// file for a file.
func mountPoint(dst string, fd int) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return os.MkdirAll(dst, 0o755)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

// tree is a detached copy of a mount tree, to be attached at dst.
type tree struct {
	fd  int
	dst string
}

// writableTrees copies, before everything turns read-only, the trees that stay writable; the
// shortest destination comes first, so that one inside another lands on top of it.
func writableTrees(sp spec) ([]tree, error) {
	var trees []tree
	grab := func(src, dst string, required bool) error {
		fd, err := unix.OpenTree(unix.AT_FDCWD, src, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
		if err != nil {
			if !required {
				return nil
			}
			return fmt.Errorf("open %s for the sandbox: %w", src, err)
		}
		if real, err := filepath.EvalSymlinks(dst); err == nil {
			dst = real
		}
		trees = append(trees, tree{fd, dst})
		return nil
	}
	if err := grab(sp.Workspace, sp.Workspace, true); err != nil {
		return trees, err
	}
	for _, d := range []string{"/dev", "/proc"} {
		if err := grab(d, d, true); err != nil {
			return trees, err
		}
	}
	for _, d := range sp.Writable {
		if err := grab(d, d, false); err != nil {
			return trees, err
		}
	}
	if sp.TempDir != "" {
		if err := grab(sp.TempDir, "/tmp", true); err != nil {
			return trees, err
		}
	}
	slices.SortStableFunc(trees, func(a, b tree) int { return len(a.dst) - len(b.dst) })
	return trees, nil
}

// cover hides p behind an empty read-only mount: an empty directory for a directory, an empty
// file (/dev/null) for anything else — a socket then refuses connections. A path that is gone,
// or that this user cannot reach anyway, needs nothing.
func cover(p string) error {
	st, err := os.Stat(p)
	if err != nil {
		return nil
	}
	if st.IsDir() {
		err = unix.Mount("tmpfs", p, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,mode=0500")
	} else {
		err = bindReadOnlyFrom("/dev/null", p)
	}
	if err != nil && !errors.Is(err, unix.EACCES) && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("hide %s: %w", p, err)
	}
	return nil
}
