package sandbox

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// How a command's processes are bounded on Linux (see docs/decisions.md, "process limits"):
//
//   - RLIMIT_NPROC, set by the confining process before it execs the command. Since Linux 5.14
//     it is counted per user namespace: in the command's own namespace it counts the command's
//     tasks only, whatever else the user runs. Without a namespace of its own it counts all the
//     user's tasks, so the bound is what the user runs already plus the limit.
//   - The kernel never applies RLIMIT_NPROC to root (nor to CAP_SYS_RESOURCE or CAP_SYS_ADMIN),
//     so where the supervisor can make a pids cgroup (root, or a delegated cgroup v2 tree) the
//     confining process is put in one, with pids.max the same limit, before it execs.

// defaultMaxMemory is half the physical memory: one process past that is pushing the machine
// into swap or the OOM killer.
func defaultMaxMemory() int64 {
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) != nil || si.Totalram == 0 {
		return 0
	}
	return max(int64(si.Totalram)*int64(si.Unit)/2, MinMemory)
}

// processLimit caches the probe: it makes and removes a cgroup. The result is kept per value of
// NoCgroupEnv, so that a test that simulates read-only cgroups does not leave its answer to the
// others.
var processLimit struct {
	mu     sync.Mutex // guards the fields below
	probed bool
	env    string // NoCgroupEnv's value when probed
	reason string // why the process limit is not enforced here; "" if it is
}

// processLimitUnavailable says why a command's process bound is not enforced here: only root
// without a pids cgroup it can make (in a container whose cgroups are read-only) escapes it.
func processLimitUnavailable() string {
	processLimit.mu.Lock()
	defer processLimit.mu.Unlock()
	if env := os.Getenv(NoCgroupEnv); !processLimit.probed || processLimit.env != env {
		processLimit.probed, processLimit.env, processLimit.reason = true, env, ""
		if os.Getuid() != 0 {
			return ""
		}
		g, err := newPidsGroup(groupName("probe-"), 1)
		if err != nil {
			processLimit.reason = "root is exempt from RLIMIT_NPROC and no pids cgroup can be made here (" + err.Error() + ")"
			return processLimit.reason
		}
		g.remove()
	}
	return processLimit.reason
}

// execLimited execs the command under the spec's limits. The hard limits are lowered too, so the
// command cannot raise them back. Nothing is allocated once the memory bound is set: this Go
// process may already map more than the command may (a race-detector build does), and a heap
// that cannot grow is fatal to it.
func execLimited(path string, argv, env []string, sp spec) error {
	pathp, err := syscall.BytePtrFromString(path)
	if err != nil {
		return err
	}
	argvp, err := syscall.SlicePtrFromStrings(argv)
	if err != nil {
		return err
	}
	envp, err := syscall.SlicePtrFromStrings(env)
	if err != nil {
		return err
	}
	// Root is exempt from RLIMIT_NPROC (the pids cgroup bounds it), so its tasks are not counted.
	if sp.MaxProcs > 0 && os.Getuid() != 0 {
		n := uint64(sp.MaxProcs)
		if !sp.Namespace {
			// Counted across all the user's tasks: leave them their room.
			n += uint64(userTasks(os.Getuid()))
		}
		if err := lowerLimit(unix.RLIMIT_NPROC, n); err != nil {
			return fmt.Errorf("limit processes: %w", err)
		}
	}
	if sp.MaxData > 0 {
		if err := lowerLimit(unix.RLIMIT_DATA, uint64(sp.MaxData)); err != nil {
			return fmt.Errorf("limit memory: %w", err)
		}
	}
	_, _, errno := unix.RawSyscall(unix.SYS_EXECVE, uintptr(unsafe.Pointer(pathp)),
		uintptr(unsafe.Pointer(&argvp[0])), uintptr(unsafe.Pointer(&envp[0])))
	return errno
}

// lowerLimit sets resource r to at most n, soft and hard.
func lowerLimit(r int, n uint64) error {
	var cur unix.Rlimit
	if err := unix.Getrlimit(r, &cur); err != nil {
		return err
	}
	lim := unix.Rlimit{Cur: min(cur.Max, n), Max: min(cur.Max, n)}
	return unix.Setrlimit(r, &lim)
}

// userTasks counts the tasks (threads) whose real user is uid, as RLIMIT_NPROC counts them
// outside a user namespace of its own.
func userTasks(uid int) int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	want := strconv.Itoa(uid)
	n := 0
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue
		}
		var real, threads string
		for line := range bytes.Lines(b) {
			if v, ok := bytes.CutPrefix(line, []byte("Uid:")); ok {
				if f := strings.Fields(string(v)); len(f) > 0 {
					real = f[0]
				}
			} else if v, ok := bytes.CutPrefix(line, []byte("Threads:")); ok {
				threads = strings.TrimSpace(string(v))
			}
		}
		if real == want {
			t, _ := strconv.Atoi(threads)
			n += max(t, 1)
		}
	}
	return n
}

// pidsGroup is a pids cgroup made for one command.
type pidsGroup struct{ dir string }

// newPidsGroup makes a pids cgroup bounded to max tasks beside the ones this process is in: in
// cgroup v2 a child of its own cgroup where that one delegates the pids controller, else in the
// v1 pids hierarchy. It fails where this user may not make one.
func newPidsGroup(name string, max int) (*pidsGroup, error) {
	if why := os.Getenv(NoCgroupEnv); why != "" {
		return nil, errors.New(NoCgroupEnv + ": " + why)
	}
	parent, err := pidsParent()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(parent, name)
	if err := os.Mkdir(dir, 0o755); err != nil { // never another command's: names are unique
		return nil, err
	}
	g := &pidsGroup{dir: dir}
	if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.Itoa(max)), 0); err != nil {
		g.remove()
		return nil, err
	}
	return g, nil
}

// add moves process pid into the group (its threads with it).
func (g *pidsGroup) add(pid int) error {
	return os.WriteFile(filepath.Join(g.dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0)
}

// hit reports whether a fork or clone was refused at the limit.
func (g *pidsGroup) hit() bool {
	b, err := os.ReadFile(filepath.Join(g.dir, "pids.events"))
	if err != nil {
		return false
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "max "); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n > 0
		}
	}
	return false
}

// remove deletes the group once its last task is gone.
func (g *pidsGroup) remove() { removeCgroup(g.dir) }

// removeCgroup deletes a cgroup directory once its last task is gone: a reaped task may hold it a
// moment.
func removeCgroup(dir string) {
	for range 50 {
		if err := os.Remove(dir); err == nil || errors.Is(err, os.ErrNotExist) || !errors.Is(err, unix.EBUSY) {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// pidsParent is the directory under which this process may make a pids cgroup.
func pidsParent() (string, error) {
	dir, _, err := controllerParent("pids")
	return dir, err
}

// controllerParent is the directory under which this process may make a cgroup of controller
// (pids, memory): in cgroup v2 its own cgroup where that one delegates the controller (v2 true),
// else its cgroup in the v1 hierarchy that has it.
func controllerParent(controller string) (dir string, v2 bool, err error) {
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", false, err
	}
	groups, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", false, err
	}
	var v1, unified string // mount points: the v1 hierarchy with the controller, the unified one
	sc := bufio.NewScanner(bytes.NewReader(mounts))
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(g) < 3 {
			continue
		}
		switch {
		case g[0] == "cgroup2":
			unified = f[4]
		case g[0] == "cgroup" && hasOption(g[2], controller):
			v1 = f[4]
		}
	}
	var tried []string
	for line := range strings.Lines(string(groups)) {
		f := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(f) != 3 {
			continue
		}
		switch {
		case f[0] == "0" && f[1] == "" && unified != "":
			dir := filepath.Join(unified, f[2])
			if b, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control")); err == nil && hasWord(string(b), controller) {
				return dir, true, nil
			}
			tried = append(tried, "cgroup v2 "+f[2]+" does not delegate "+controller)
		case hasOption(f[1], controller) && v1 != "":
			return filepath.Join(v1, f[2]), false, nil
		}
	}
	if len(tried) == 0 {
		tried = append(tried, "no "+controller+" controller")
	}
	return "", false, errors.New(strings.Join(tried, "; "))
}

func hasOption(opts, name string) bool {
	for o := range strings.SplitSeq(opts, ",") {
		if o == name {
			return true
		}
	}
	return false
}

func hasWord(s, w string) bool {
	for f := range strings.FieldsSeq(s) {
		if f == w {
			return true
		}
	}
	return false
}
