package main

import (
	"strings"
	"testing"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/agent/sandbox"
)

// TestRunWithoutSandbox: where commands cannot be sandboxed, `reprise run` says why once and asks
// about every command, allowlisted ones too; with no terminal to ask on, they are refused.
func TestRunWithoutSandbox(t *testing.T) {
	t.Setenv(sandbox.UnavailableEnv, "simulated old kernel")
	srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{
		{Parts: []geminitest.Part{{FunctionCall: &geminitest.FunctionCall{Name: "run_command", Args: map[string]any{"command": "go version"}}}}},
		{Parts: []geminitest.Part{{Text: "It was refused."}}},
	}})
	defer srv.Close()
	vars := env(map[string]string{"GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": srv.URL(), "REPRISE_HOME": t.TempDir()})
	code, out, errOut := runMain(t, []string{"run", "--verbose", "--workspace", t.TempDir(), "which go?"}, vars)
	if code != 0 {
		t.Fatalf("run exited %d: %s\n%s", code, errOut, out)
	}
	if n := strings.Count(errOut, "commands cannot be sandboxed here (REPRISE_SANDBOX_UNAVAILABLE: simulated old kernel)"); n != 1 {
		t.Errorf("the warning was given %d times, want once:\n%s", n, errOut)
	}
	reqs := srv.Requests()
	if body := string(reqs[len(reqs)-1].Body); !strings.Contains(body, "refused by policy: go version") {
		t.Errorf("the allowlisted command was not refused: %s", body)
	}
}

func TestRunSandboxFlags(t *testing.T) {
	code, _, errOut := runMain(t, []string{"run", "--sandbox", "read-only", "task"}, env(nil))
	if code != 2 || !strings.Contains(errOut, `sandbox must be "workspace-write" or "off", got "read-only"`) {
		t.Errorf("--sandbox read-only: exit %d, stderr %q", code, errOut)
	}
}

func TestRunMaxCost(t *testing.T) {
	srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{
		{Parts: []geminitest.Part{{FunctionCall: &geminitest.FunctionCall{Name: "list_files", Args: map[string]any{}}}}},
		{Parts: []geminitest.Part{{Text: "never reached"}}},
	}})
	defer srv.Close()
	vars := env(map[string]string{"GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": srv.URL(), "REPRISE_HOME": t.TempDir()})
	code, out, errOut := runMain(t, []string{"run", "--max-cost", "0.0000001", "--workspace", t.TempDir(), "list"}, vars)
	if code == 0 || !strings.Contains(errOut, "the run stopped: capped") || !strings.Contains(out, "status capped") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if code, _, errOut := runMain(t, []string{"run", "--max-cost", "-1", "x"}, env(nil)); code != 2 || !strings.Contains(errOut, "maxCostUSD") {
		t.Errorf("--max-cost -1: exit %d, %q", code, errOut)
	}
}
