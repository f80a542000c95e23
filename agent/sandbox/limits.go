package sandbox

import (
	"fmt"
	"runtime"
)

// DefaultMaxProcesses is the default bound on the processes and threads one command may have at
// once: enough for a parallel build on every core (a Go compile is one process of GOMAXPROCS+5
// threads or so, `go build` runs one per core), far below what stalls a machine. A fork bomb
// stops there and is killed with the rest when the command ends.
func DefaultMaxProcesses() int { return max(1024, 128*runtime.NumCPU()) }

// MinMemory is the smallest per-process memory bound accepted: below it the confining process
// (a Go program) and ordinary shells may not start.
const MinMemory = 64 << 20

// Limits are what the sandbox bounds for each command, 0 meaning none.
type Limits struct {
	// Processes is the most tasks (processes and threads) the command's tree may have at once.
	Processes int
	// Memory is the most private writable memory, in bytes, each of its processes may map
	// (RLIMIT_DATA): an allocation past it fails in that process. Where a memory cgroup can be
	// made, it also bounds the tree's memory in all, shared, memfd and /dev/shm pages included
	// (NoMemoryLimit says when it cannot).
	Memory int64
	// Temp is the most the private temp dir may hold, in bytes (and the size of the private
	// /dev/shm).
	Temp int64
}

// limits resolves the configuration's defaults: 0 is the default, a negative value no limit.
func (c Config) limits() Limits {
	l := Limits{Processes: c.MaxProcesses, Memory: c.MaxMemory, Temp: c.MaxTemp}
	switch {
	case l.Temp == 0:
		l.Temp = DefaultMaxTemp
	case l.Temp < 0:
		l.Temp = 0
	}
	switch {
	case l.Processes == 0:
		l.Processes = DefaultMaxProcesses()
	case l.Processes < 0:
		l.Processes = 0
	}
	switch {
	case l.Memory == 0:
		l.Memory = defaultMaxMemory()
	case l.Memory < 0:
		l.Memory = 0
	case l.Memory < MinMemory:
		l.Memory = MinMemory
	}
	return l
}

// Limits returns the bounds each command runs under, and why the process bound is not enforced
// here ("" when it is). Linux enforces both (RLIMIT_NPROC in the command's own user namespace,
// or a pids cgroup for root, whom RLIMIT_NPROC does not bind; RLIMIT_DATA); Windows puts them
// on the command's job; macOS has neither.
func (s *Sandbox) Limits() (Limits, string) {
	l := s.cfg.limits()
	if l.Processes == 0 {
		return l, ""
	}
	return l, processLimitUnavailable()
}

// NoProcessLimit says, for the front-ends to tell the user once, that commands run without the
// process limit they get elsewhere, and why; "" when it holds, or when the configuration turned
// it off. Only Limits knew it: root in a container whose cgroups are read-only ran fork bombs
// unbounded without a word.
func (s *Sandbox) NoProcessLimit() string {
	if s == nil {
		return ""
	}
	if _, why := s.Limits(); why != "" {
		return "commands run without a process limit here (" + why + "): one that forks without end " +
			"(a fork bomb) can exhaust the machine before its timeout ends it"
	}
	return ""
}

// NoMemoryLimit says, for the front-ends to tell the user once, which memory bound holds when it
// is not the bound in all: each process's (RLIMIT_DATA), the private /dev/shm's and temp dir's
// sizes, and why there is no more; "" when commands are bounded in all, or the configuration
// turned the bound off.
func (s *Sandbox) NoMemoryLimit() string {
	if s == nil {
		return ""
	}
	l, _ := s.Limits()
	if l.Memory == 0 {
		return ""
	}
	why := memoryLimitUnavailable()
	if why == "" {
		return ""
	}
	text := fmt.Sprintf("commands' memory is bounded per process only (%d MiB each)", l.Memory>>20)
	if l.Temp > 0 && s.landlock() {
		text += fmt.Sprintf(", their private /dev/shm and temp dir to %d MiB each", l.Temp>>20)
	}
	return text + ": many processes together can use more (" + why + ")"
}

// NoCgroupEnv names the variable that, when set, makes the sandbox behave as in a container whose
// cgroups are read-only: no pids cgroup can be made, so root's commands get no process limit (an
// ordinary user's keep RLIMIT_NPROC). The tests use it to check that the user is told; it changes
// nothing that root could not change anyway.
const NoCgroupEnv = "REPRISE_SANDBOX_NO_CGROUP"
