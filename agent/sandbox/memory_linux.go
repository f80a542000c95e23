package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// A command's memory is bounded in all where a memory cgroup can be made (root, or a cgroup v2
// tree that delegates the memory controller): its whole tree, with what it maps shared, what it
// puts in memfd or in its private /dev/shm, under Limits().Memory. RLIMIT_DATA bounds each process
// besides, everywhere: where no cgroup can be made, that is the bound that holds, with the
// private /dev/shm and temp dir sized to Limits().Temp, and NoMemoryLimit says so.

// memoryGroup is a memory cgroup made for one command.
type memoryGroup struct {
	dir string
	v2  bool
}

// newMemoryGroup makes a memory cgroup bounded to max bytes, swap included, beside the ones this
// process is in. It fails where this user may not make one.
func newMemoryGroup(name string, max int64) (*memoryGroup, error) {
	if why := os.Getenv(NoCgroupEnv); why != "" {
		return nil, errors.New(NoCgroupEnv + ": " + why)
	}
	parent, v2, err := controllerParent("memory")
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(parent, name)
	if err := os.Mkdir(dir, 0o755); err != nil { // never another command's: names are unique
		return nil, err
	}
	g := &memoryGroup{dir: dir, v2: v2}
	limit := []byte(strconv.FormatInt(max, 10))
	files := []string{"memory.limit_in_bytes", "memory.memsw.limit_in_bytes"} // v1: memory first, then with swap
	if v2 {
		files = []string{"memory.max", "memory.swap.max"}
	}
	if err := os.WriteFile(filepath.Join(dir, files[0]), limit, 0); err != nil {
		g.remove()
		return nil, err
	}
	swap := limit
	if v2 {
		swap = []byte("0")
	}
	// Not every kernel accounts swap (v1 without swapaccount): the memory bound holds alone there.
	_ = os.WriteFile(filepath.Join(dir, files[1]), swap, 0)
	return g, nil
}

// add moves process pid into the group.
func (g *memoryGroup) add(pid int) error {
	return os.WriteFile(filepath.Join(g.dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0)
}

// oomKilled reports whether the kernel killed a process of the group at its bound.
func (g *memoryGroup) oomKilled() bool {
	name, key := "memory.oom_control", "oom_kill "
	if g.v2 {
		name, key = "memory.events", "oom_kill "
	}
	b, err := os.ReadFile(filepath.Join(g.dir, name))
	if err != nil {
		return false
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, key); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n > 0
		}
	}
	return false
}

// remove deletes the group once its last task is gone; the pages it still holds (a tmpfs's) are
// charged to the parent.
func (g *memoryGroup) remove() { removeCgroup(g.dir) }

// memoryLimit caches the probe, per value of NoCgroupEnv, as processLimit does.
var memoryLimit struct {
	mu     sync.Mutex // guards the fields below
	probed bool
	env    string
	reason string // why the memory bound is per process only here; "" if it is in all
}

// memoryLimitUnavailable says why a command's memory is not bounded in all here.
func memoryLimitUnavailable() string {
	memoryLimit.mu.Lock()
	defer memoryLimit.mu.Unlock()
	if env := os.Getenv(NoCgroupEnv); !memoryLimit.probed || memoryLimit.env != env {
		memoryLimit.probed, memoryLimit.env, memoryLimit.reason = true, env, ""
		g, err := newMemoryGroup(groupName("probe-"), MinMemory)
		if err != nil {
			memoryLimit.reason = "no memory cgroup can be made here (" + err.Error() + ")"
			return memoryLimit.reason
		}
		g.remove()
	}
	return memoryLimit.reason
}
