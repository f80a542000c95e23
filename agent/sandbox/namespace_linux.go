package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// namespaced makes the command start in new user and mount namespaces, as the same user: it may
// then bind-mount within its own view of the file system, and nowhere else.
func namespaced(attr *syscall.SysProcAttr) {
	attr.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS
	attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
	attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
	attr.GidMappingsEnableSetgroups = false
}

var userns struct {
	once   sync.Once
	reason string // why unprivileged user namespaces cannot be used; "" if they can
}

// usernsUnavailable says why user namespaces cannot be made here (some distributions turn them
// off for unprivileged users), or "" when they can; it tries once per process.
func usernsUnavailable() string {
	userns.once.Do(func() {
		cmd := exec.Command("/bin/true")
		cmd.SysProcAttr = &syscall.SysProcAttr{}
		namespaced(cmd.SysProcAttr)
		if err := cmd.Run(); err != nil {
			userns.reason = fmt.Sprintf("user namespaces are not available: %v", err)
		}
	})
	return userns.reason
}

// protectsVCS reports whether version-control directories can be kept read-only.
func (s *Sandbox) protectsVCS() bool { return usernsUnavailable() == "" }

// confine is the confining process's main, in its new namespaces: it bind-mounts the read-only
// directories over themselves read-only, restricts itself and execs the command. Landlock forbids
// the command to mount or unmount anything, so it cannot uncover them.
func confine(args []string) int {
	sp, argv, err := splitArgs(args)
	if err != nil {
		return fail("%v", err)
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return fail("%v", err)
	}
	runtime.LockOSThread() // never unlocked: the restriction is this thread's, and exec follows
	// Mounts made here must not propagate back to the user's namespace.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fail("make mounts private: %v", err)
	}
	for _, p := range sp.ReadOnly {
		if err := bindReadOnly(p); err != nil {
			return fail("%v", err)
		}
	}
	if err := restrict(sp); err != nil {
		return fail("%v", err)
	}
	err = syscall.Exec(path, argv, os.Environ())
	return fail("exec %s: %v", argv[0], err)
}

// bindReadOnly mounts p over itself read-only. A remount in a user namespace must keep the flags
// the original mount was locked with (nosuid, nodev, noexec, atime), so they are carried over.
func bindReadOnly(p string) error {
	if err := unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s: %w", p, err)
	}
	var st unix.Statfs_t
	if err := unix.Statfs(p, &st); err != nil {
		return fmt.Errorf("statfs %s: %w", p, err)
	}
	flags := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY)
	for _, f := range []struct{ st, ms uintptr }{
		{unix.ST_NOSUID, unix.MS_NOSUID}, {unix.ST_NODEV, unix.MS_NODEV}, {unix.ST_NOEXEC, unix.MS_NOEXEC},
		{unix.ST_NOATIME, unix.MS_NOATIME}, {unix.ST_NODIRATIME, unix.MS_NODIRATIME}, {unix.ST_RELATIME, unix.MS_RELATIME},
	} {
		if uintptr(st.Flags)&f.st != 0 {
			flags |= f.ms
		}
	}
	if err := unix.Mount("", p, "", flags, ""); err != nil {
		return fmt.Errorf("make %s read-only: %w", p, err)
	}
	return nil
}
