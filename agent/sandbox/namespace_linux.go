package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// mountsPrivateTemp: Linux gives confined commands a private /tmp, /dev/shm and network
// namespace.
const mountsPrivateTemp = true

// namespaced makes the confining process start in new user and mount namespaces (and a network
// namespace when net), as the same user, keeping CAP_SYS_ADMIN and CAP_NET_ADMIN (there only)
// across its exec so that it can mount within its own view of the file system and bring its
// loopback up — and nowhere else. It drops them before it execs the command.
//
// The process that starts it must be dumpable: the kernel makes a non-dumpable process's
// /proc/PID/uid_map root's, and an ordinary user then cannot write the child's map. The server
// is not dumpable (its memory holds the API key); the supervisor, a fresh exec, is.
func namespaced(attr *syscall.SysProcAttr, net bool) {
	attr.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS
	if net {
		attr.Cloneflags |= syscall.CLONE_NEWNET
	}
	attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
	attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
	attr.GidMappingsEnableSetgroups = false
	attr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN}
}

var namespaces struct {
	once   sync.Once
	reason string // why the namespace step cannot be used; "" if it can
}

// namespacesUnavailable says why the namespace step cannot run here (user namespaces off, or
// restricted as by AppArmor on some distributions), or "" when it can. It is tried for real, once
// per process, the way every command starts: a supervisor starts a confining process in its
// namespaces, which makes the file system read-only but for a workspace, binds a read-only
// directory in it, hides a file and brings loopback up.
func namespacesUnavailable() string {
	namespaces.once.Do(func() {
		if !initialized {
			namespaces.reason = ErrNotInitialized.Error()
			return
		}
		namespaces.reason = probeNamespaces()
	})
	return namespaces.reason
}

func probeNamespaces() string {
	dir, err := os.MkdirTemp("", "reprise-probe-")
	if err != nil {
		return err.Error()
	}
	defer os.RemoveAll(dir)
	ws, ro, tmp, secret := filepath.Join(dir, "ws"), filepath.Join(dir, "ws", "ro"), filepath.Join(dir, "tmp"), filepath.Join(dir, "secret")
	for _, d := range []string{ro, tmp} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err.Error()
		}
	}
	if err := os.WriteFile(secret, []byte("s"), 0o600); err != nil {
		return err.Error()
	}
	sp := spec{Namespace: true, NetNS: true, Workspace: ws, ReadOnly: []string{ro}, TempDir: tmp, Hide: []string{secret}}
	script := `set -e; : > ok; ! (: > ro/x) 2>/dev/null; ! (: > ` + dir + `/x) 2>/dev/null; : > /tmp/t; test ! -s ` + secret
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := command(ctx, sp, []string{"/bin/sh", "-c", script})
	if err != nil {
		return err.Error()
	}
	var out bytes.Buffer
	c.Dir, c.Stdout, c.Stderr = ws, &out, &out
	if err := c.Start(); err != nil {
		return "user namespaces are not usable: " + err.Error()
	}
	st, err := c.Wait()
	if err == nil && st.Code != 0 {
		err = fmt.Errorf("exit status %d", st.Code)
	}
	if err != nil {
		return fmt.Sprintf("user namespaces are not usable: %v %s", err, strings.TrimSpace(out.String()))
	}
	if _, err := os.Stat(filepath.Join(tmp, "t")); err != nil {
		return "the private temp dir is not mounted: " + err.Error()
	}
	return ""
}

// confine is the confining process's main: it sets the command's limits and, in its namespaces
// (if any), the command's view of the file system and its network, then restricts itself and
// execs the command.
// Landlock forbids the command to mount or unmount anything, so it cannot uncover what is hidden.
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
	// Were the machine short of memory, the OOM killer picks the command before the editor or
	// Reprise. Raising one's own score needs no privilege (and /proc is still writable here).
	_ = os.WriteFile("/proc/self/oom_score_adj", []byte("1000"), 0)
	if sp.Namespace {
		wd, err := unix.Getwd()
		if err != nil {
			return fail("%v", err)
		}
		if err := privateMounts(sp); err != nil {
			return fail("%v", err)
		}
		// The working directory still points into the mounts as they were: the workspace there
		// is read-only now. Entered again by its path, it is the writable copy.
		if err := unix.Chdir(wd); err != nil {
			return fail("enter %s: %v", wd, err)
		}
		if sp.NetNS {
			if err := loopbackUp(); err != nil {
				return fail("%v", err)
			}
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
	if sp.TempDir != "" {
		if err := os.Setenv("TMPDIR", "/tmp"); err != nil {
			return fail("%v", err)
		}
	}
	if sp.Hold { // the supervisor puts this process in its pids cgroup, then closes the pipe
		hold := os.NewFile(3, "hold")
		_, _ = io.Copy(io.Discard, hold)
		hold.Close()
	}
	err = execLimited(path, argv, os.Environ(), sp)
	return fail("exec %s: %v", argv[0], err)
}

// loopbackUp brings up the network namespace's loopback, its only interface: tests can still
// listen and connect on 127.0.0.1 and ::1, where nothing of the host is.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("bring loopback up: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	ifr.SetUint16(unix.IFF_UP | unix.IFF_RUNNING)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bring loopback up: %w", err)
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
	return bindReadOnlyFrom(p, p)
}

func bindReadOnlyFrom(src, p string) error {
	if err := unix.Mount(src, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
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
