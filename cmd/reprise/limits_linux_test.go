package main

import (
	"os"
	"strings"
	"testing"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/agent/sandbox"
)

// TestAttackRunNoProcessLimit: as root without a pids cgroup it can make, `reprise run` ran
// commands with no process limit and said nothing. It says so once on stderr; an ordinary user
// keeps RLIMIT_NPROC there and is told nothing.
func TestAttackRunNoProcessLimit(t *testing.T) {
	t.Setenv(sandbox.NoCgroupEnv, "simulated: read-only cgroups")
	srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{
		{Parts: []geminitest.Part{{FunctionCall: &geminitest.FunctionCall{Name: "run_command", Args: map[string]any{"command": "echo hi"}}}}},
		{Parts: []geminitest.Part{{Text: "Done."}}},
	}})
	defer srv.Close()
	vars := env(map[string]string{"GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": srv.URL(), "REPRISE_HOME": t.TempDir()})
	code, out, errOut := runMain(t, []string{"run", "--yes", "--workspace", t.TempDir(), "say hi"}, vars)
	if code != 0 {
		t.Fatalf("run exited %d: %s\n%s", code, errOut, out)
	}
	want := 0
	if os.Getuid() == 0 {
		want = 1
	}
	if n := strings.Count(errOut, "reprise: warning: commands run without a process limit here (root is exempt from RLIMIT_NPROC"); n != want {
		t.Errorf("warned %d times (uid %d), want %d:\n%s", n, os.Getuid(), want, errOut)
	}
}
