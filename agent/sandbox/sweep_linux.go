package sandbox

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// A supervisor kills its command's tree before it exits. One killed outright (WaitDelay's
// backstop, when a fork bomb keeps it busy past the delay) cannot: its orphans go to init, and a
// bomb held at the pids bound would spin there for ever. Its cgroups still hold them, under the
// name the server gave them (spec.Group), so the server, which reaps the supervisor, kills what
// is left in them and removes them.

// groupName is a fresh cgroup name: "reprise-", prefix, and 12 random hex digits. A pid would not
// do: the supervisor's is free again once it is reaped, and a sweep by pid could then kill a
// newer command that got it, or a new group join a dying one.
func groupName(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "reprise-" + prefix + hex.EncodeToString(b[:])
}

// sweepGroups kills every process left in the cgroups named name, then removes them, and reports
// whether a fork was refused at the pids bound: the report the supervisor could not write would
// have said so. Nothing is done for a supervisor that cleaned up (its groups are gone).
func sweepGroups(name string) (limitHit bool) {
	for _, controller := range []string{"pids", "memory"} {
		parent, _, err := controllerParent(controller)
		if err != nil {
			continue
		}
		dir := filepath.Join(parent, name)
		if _, err := os.Stat(dir); err != nil {
			continue
		}
		if controller == "pids" {
			limitHit = (&pidsGroup{dir: dir}).hit()
		}
		killGroup(dir)
		removeCgroup(dir)
	}
	return limitHit
}

// killGroup kills the tasks of cgroup dir until none is left, or for at most ten seconds (a task
// in uninterruptible sleep dies when it wakes). New forks are refused first where the group has
// a pids bound, so that a fork bomb cannot outrun the kills.
func killGroup(dir string) {
	if os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0) == nil { // cgroup v2, Linux 5.14
		waitEmpty(dir, 10*time.Second)
		return
	}
	_ = os.WriteFile(filepath.Join(dir, "pids.max"), []byte("0"), 0)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		pids := tasks(dir)
		if len(pids) == 0 {
			return
		}
		for _, p := range pids {
			_ = unix.Kill(p, unix.SIGKILL)
		}
		time.Sleep(time.Millisecond)
	}
}

// waitEmpty waits until cgroup dir has no task, or for d.
func waitEmpty(dir string, d time.Duration) {
	for deadline := time.Now().Add(d); time.Now().Before(deadline) && len(tasks(dir)) > 0; {
		time.Sleep(time.Millisecond)
	}
}

// tasks are the processes in cgroup dir.
func tasks(dir string) []int {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if p, err := strconv.Atoi(f); err == nil && p > 0 {
			out = append(out, p)
		}
	}
	return out
}
