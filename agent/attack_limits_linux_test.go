package agent

import (
	"os"
	"strconv"
	"strings"
	"testing"
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
			f := newFixture(t, fixtureOpts{journal: true, ws: ws, sandbox: sb, commands: yesPolicy()},
				callTurn("run_command", map[string]any{"command": "f(){ f|f& };f", "timeout_s": 10}, ""),
				callTurn("run_command", map[string]any{"command": "bash -c 'f(){ f|f& };f; sleep 60'", "timeout_s": 3}, ""),
				callTurn("run_command", map[string]any{"command": "echo alive", "timeout_s": 10}, ""),
				textTurn("done"))
			outs := toolOutputs(f.turn(t, "go"))
			if len(outs) != 3 {
				t.Fatalf("tool outputs %q", outs)
			}
			if strings.Contains(outs[0], "refused") || strings.Contains(outs[0], "timed out") {
				t.Errorf("the bomb as written: %q, want it run and ended", outs[0])
			}
			contains(t, outs[1], "timed out after 3s")
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
