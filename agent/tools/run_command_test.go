package tools

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/reprise-dev/reprise/agent/sandbox"
	"github.com/reprise-dev/reprise/agent/sandbox/sandboxtest"
)

// TestMain lets the test binary serve as a fast output flood for run_command (the benchmark
// needs a producer quicker than the reader it measures), and play the commands of roles.
func TestMain(m *testing.M) {
	if n := os.Getenv("REPRISE_TOOLS_FLOOD"); n != "" {
		flood(n)
		os.Exit(0)
	}
	if play := roles[os.Getenv(roleEnv)]; play != nil {
		sandbox.Init()
		os.Exit(play())
	}
	os.Exit(sandboxtest.Main(m))
}

// roleEnv names the role the test binary plays as a command.
const roleEnv = "REPRISE_TOOLS_ROLE"

// roles are the commands the test binary can play, by name; tests of an OS add theirs.
var roles = map[string]func() int{}

// flood writes n bytes of text lines to stdout.
func flood(n string) {
	total, err := strconv.ParseInt(n, 10, 64)
	if err != nil {
		os.Exit(2)
	}
	line := "--- PASS: TestSomething (0.00s) a line of ordinary test output\n"
	buf := []byte(strings.Repeat(line, (1<<20)/len(line)))
	for total > 0 {
		k := min(int64(len(buf)), total)
		if _, err := os.Stdout.Write(buf[:k]); err != nil {
			os.Exit(1)
		}
		total -= k
	}
}

// floodCommand is a run_command line making the test binary print n bytes.
func floodCommand(t testing.TB, n int64) string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("REPRISE_TOOLS_FLOOD=%d '%s'", n, exe)
}

func runCmd(t *testing.T, env *Env, command string, extra ...any) Result {
	t.Helper()
	args := map[string]any{"command": command}
	for i := 0; i+1 < len(extra); i += 2 {
		args[extra[i].(string)] = extra[i+1]
	}
	return Run(t.Context(), env, Call{ID: "call-1", Name: "run_command", Args: args})
}
