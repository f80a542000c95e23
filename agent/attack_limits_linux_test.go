package agent

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/reprise-dev/reprise/agent/sandbox"
	"github.com/reprise-dev/reprise/agent/tools"
)

// processesIn lists this user's processes whose working directory is dir.
func processesIn(dir string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if cwd, err := os.Readlink("/proc/" + e.Name() + "/cwd"); err == nil && cwd == dir {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestAttackForkBomb: under --yes the model runs the fork bomb, then one in bash (which
// retries a fork that failed) that waits. Both end, the second with the model told that the process limit was met; the
// turn goes on, the next command runs, and nothing is left running. Each path bounds the bomb its
// own way (a user namespace's RLIMIT_NPROC, a pids cgroup for root, RLIMIT_NPROC over the user's
// tasks without a namespace); the bomb never runs where nothing would.
func TestAttackForkBomb(t *testing.T) {
	for _, p := range sandboxPaths {
		t.Run(p.name, func(t *testing.T) {
			ws := t.TempDir()
			sb := p.make(ws)
			limits, why := sb.Limits()
			if why != "" || limits.Processes == 0 {
				t.Skipf("no process limit here (%s): the bomb would not be bounded", why)
			}
			// The waiting bomb is stopped by its timeout, which must leave it time to reach the
			// limit: on a loaded machine 3 s may not, so a turn that ends with the limit not yet
			// met is run again with a longer one (the limit reached is the condition waited on).
			var outs []string
			for _, timeout := range []int{3, 10, 30} {
				f := newFixture(t, fixtureOpts{journal: true, ws: ws, sandbox: sb, commands: yesPolicy()},
					callTurn("run_command", map[string]any{"command": "f(){ f|f& };f", "timeout_s": 10}, ""),
					callTurn("run_command", map[string]any{"command": "bash -c 'f(){ f|f& };f; sleep 60'", "timeout_s": timeout}, ""),
					callTurn("run_command", map[string]any{"command": "echo alive", "timeout_s": 10}, ""),
					textTurn("done"))
				outs = toolOutputs(f.turn(t, "go"))
				if len(outs) != 3 {
					t.Fatalf("tool outputs %q", outs)
				}
				contains(t, outs[1], "timed out after "+strconv.Itoa(timeout)+"s")
				if strings.Contains(outs[1], "reached the sandbox's limit") {
					break
				}
				t.Logf("the limit not met in %d s: again with a longer timeout", timeout)
			}
			if strings.Contains(outs[0], "refused") || strings.Contains(outs[0], "timed out") {
				t.Errorf("the bomb as written: %q, want it run and ended", outs[0])
			}
			contains(t, outs[1], "reached the sandbox's limit of "+strconv.Itoa(limits.Processes)+" processes")
			if !strings.HasPrefix(outs[2], "alive\n") || !strings.HasSuffix(outs[2], "exit status 0") {
				t.Errorf("the next command: %q", outs[2])
			}
			if left := processesIn(ws); len(left) != 0 {
				t.Errorf("processes left running in the workspace: %v", left)
			}
		})
	}
}

// TestAttackMemoryInAll: an unasked test takes memory the per-process bound (RLIMIT_DATA) does not
// count: a memfd, shared anonymous memory, the private /dev/shm, and several processes each under
// the bound. Where a memory cgroup can be made (root here), the command's tree is bounded in all,
// and the model is told a process was killed there; where none can (an ordinary user), /dev/shm
// still holds no more than its size, and the sandbox says that the bound is per process only.
// Without a sandbox, the command is asked and, refused, does not run.
func TestAttackMemoryInAll(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 allocates on request")
	}
	const bound, shm = 256 << 20, 64 << 20
	attacks := map[string]string{
		"memfd":       py + ` -c "import os,mmap; fd=os.memfd_create('x'); os.ftruncate(fd, 1<<30); m=mmap.mmap(fd, 1<<30); [m.write(b'x'*(1<<20)) for _ in range(1024)]; print('took 1 GiB')"`,
		"shared":      py + ` -c "import mmap; m=mmap.mmap(-1, 1<<30); [m.write(b'x'*(1<<20)) for _ in range(1024)]; print('took 1 GiB')"`,
		"processes":   `for i in 1 2 3 4 5 6; do ` + py + ` -c "import time; b=bytearray(150<<20); time.sleep(3)" & done; wait; echo took 900 MiB`,
		"private shm": `head -c 1000000000 /dev/zero > /dev/shm/fill; ls -l /dev/shm/fill`,
	}
	for name, line := range attacks {
		t.Run(name, func(t *testing.T) {
			for _, unavailable := range []bool{false, true} {
				ws := t.TempDir()
				cfg := sandbox.Config{Mode: sandbox.WorkspaceWrite, Workspace: ws, MaxMemory: bound, MaxTemp: shm}
				sb := sandbox.New(cfg)
				if unavailable {
					sb = sandbox.Unavailable(cfg, "simulated: Landlock missing")
				}
				ap := &recordingApprover{decision: tools.Reject}
				f := newFixture(t, fixtureOpts{ws: ws, sandbox: sb, approver: ap, files: makefileAttack(strings.ReplaceAll(line, "$", "$$"))},
					makeTest(), textTurn("done"))
				outs := toolOutputs(f.turn(t, "run the tests"))
				assertAskedOrConfined(t, sb, ap, outs)
				if ok, _ := sb.Confined(); !ok {
					continue
				}
				perProcess := sb.NoMemoryLimit()
				if perProcess != "" && memoryCgroups() {
					t.Errorf("root with a memory controller, and the bound is per process: %q", perProcess)
				}
				switch {
				case name == "private shm":
					if !strings.Contains(outs[0], "No space left on device") || !strings.Contains(outs[0], " 67108864 ") {
						t.Errorf("/dev/shm took 1 GB past its %d bytes: %q", shm, outs[0])
					}
				case perProcess == "":
					if strings.Contains(outs[0], "\ntook 1 GiB") || !strings.Contains(outs[0], "reached the sandbox's memory bound of 268,435,456 bytes in all") {
						t.Errorf("bounded in all: %q", outs[0])
					}
				default:
					if !strings.Contains(perProcess, "bounded per process only (256 MiB each), their private /dev/shm and temp dir to 64 MiB each") {
						t.Errorf("the user is not told which bound holds: %q", perProcess)
					}
				}
			}
		})
	}
}

// memoryCgroups reports whether this process is root on a system with the memory controller and
// cgroups it may write, where every command must be bounded in all.
func memoryCgroups() bool {
	if os.Getuid() != 0 || os.Getenv(sandbox.NoCgroupEnv) != "" {
		return false
	}
	b, err := os.ReadFile("/proc/self/cgroup")
	return err == nil && (strings.Contains(string(b), "memory") || strings.Contains(string(b), "0::/")) && writableCgroups()
}

// writableCgroups reports whether /sys/fs/cgroup is mounted writable.
func writableCgroups() bool {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	for line := range strings.Lines(string(b)) {
		if f := strings.Fields(line); len(f) > 5 && strings.HasPrefix(f[4], "/sys/fs/cgroup") && strings.HasPrefix(f[5], "rw") && strings.Contains(line, "memory") {
			return true
		}
	}
	return false
}
