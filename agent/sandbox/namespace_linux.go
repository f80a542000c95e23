package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// namespaced makes the confining process start in new user and mount namespaces, as the same
// user, keeping CAP_SYS_ADMIN (there only) across its exec so that it can mount within its own
// view of the file system — and nowhere else. It drops it before it execs the command.
func namespaced(attr *syscall.SysProcAttr) {
	attr.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS
	attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
	attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
	attr.GidMappingsEnableSetgroups = false
	attr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN}
}

var namespaces struct {
	once   sync.Once
	reason string // why the namespace step cannot be used; "" if it can
}

// namespacesUnavailable says why the namespace step cannot run here (user namespaces off, or
// restricted as by AppArmor on some distributions), or "" when it can. It is tried for real, once
// per process: a confining process mounts a private /dev/pts and a read-only bind.
func namespacesUnavailable() string {
	namespaces.once.Do(func() {
		if !initialized {
			namespaces.reason = ErrNotInitialized.Error()
			return
		}
		dir, err := os.MkdirTemp("", "reprise-probe-")
		if err != nil {
			namespaces.reason = err.Error()
			return
		}
		defer os.RemoveAll(dir)
		sp := spec{Namespace: true, ReadOnly: []string{dir}}
		cmd := exec.Command(self, confineArg, encodeSpec(sp), "--", "/bin/sh", "-c", "if (: > "+dir+"/x) 2>/dev/null; then exit 1; fi")
		cmd.SysProcAttr = &syscall.SysProcAttr{}
		namespaced(cmd.SysProcAttr)
		out, err := cmd.CombinedOutput()
		if err != nil {
			namespaces.reason = fmt.Sprintf("user namespaces are not usable: %v %s", err, strings.TrimSpace(string(out)))
		}
	})
	return namespaces.reason
}

// confine is the confining process's main: in its namespaces (if any) it gives the command a
// private /dev/pts (the user's other terminals are not there to read) and bind-mounts the
// read-only paths over themselves read-only; then it restricts itself and execs the command.
// Landlock forbids the command to mount or unmount anything, so it cannot uncover them.
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
	if sp.Namespace {
		if err := privateMounts(sp.ReadOnly); err != nil {
			return fail("%v", err)
		}
		if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
			return fail("drop capabilities: %v", err)
		}
	}
	if sp.Confine {
		if err := restrict(sp); err != nil {
			return fail("%v", err)
		}
	}
	err = syscall.Exec(path, argv, os.Environ())
	return fail("exec %s: %v", argv[0], err)
}

func privateMounts(readOnly []string) error {
	// Mounts made here must not propagate back to the user's namespace.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	if err := privatePTS(); err != nil {
		return err
	}
	for _, p := range readOnly {
		if err := bindReadOnly(p); err != nil {
			return err
		}
	}
	return nil
}

// privatePTS mounts a new devpts instance on /dev/pts, and its ptmx over /dev/ptmx, so the
// command can still open pseudo-terminals but sees none of the user's.
func privatePTS() error {
	err := unix.Mount("devpts", "/dev/pts", "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620")
	if err == nil {
		if err := unix.Mount("/dev/pts/ptmx", "/dev/ptmx", "", unix.MS_BIND, ""); err != nil && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("bind the private ptmx: %w", err)
		}
		return nil
	}
	// No devpts here: an empty read-only tmpfs hides the terminals all the same.
	if err := unix.Mount("tmpfs", "/dev/pts", "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC|unix.MS_RDONLY, "size=0"); err != nil {
		return fmt.Errorf("hide /dev/pts: %w", err)
	}
	return nil
}

// bindReadOnly mounts p (a directory or a file) over itself read-only. A remount in a user
// namespace must keep the flags the original mount was locked with (nosuid, nodev, noexec, atime),
// so they are carried over.
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
