package main

import (
	"os/exec"
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
	if code, _, errOut := runMain(t, []string{"run", "--max-cost", "-1", "x"}, env(nil)); code != 2 || !strings.Contains(errOut, "--max-cost -1") {
		t.Errorf("--max-cost -1: exit %d, %q", code, errOut)
	}
}

// TestRunMaxMemory: --max-memory bounds each process of a command; an allocation past it fails
// there and the model reads why. A bad value is a usage error.
func TestRunMaxMemory(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 allocates on request")
	}
	srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{
		{Parts: []geminitest.Part{{FunctionCall: &geminitest.FunctionCall{Name: "run_command", Args: map[string]any{
			"command": "python3 -c 'b = bytearray(512 << 20)'"}}}}},
		{Parts: []geminitest.Part{{Text: "It ran out of memory."}}},
	}})
	defer srv.Close()
	vars := env(map[string]string{"GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": srv.URL(), "REPRISE_HOME": t.TempDir()})
	code, out, errOut := runMain(t, []string{"run", "--yes", "--max-memory", "128M", "--workspace", t.TempDir(), "allocate"}, vars)
	if code != 0 {
		t.Fatalf("run exited %d: %s\n%s", code, errOut, out)
	}
	reqs := srv.Requests()
	if body := string(reqs[len(reqs)-1].Body); !strings.Contains(body, "MemoryError") {
		t.Errorf("the allocation past --max-memory did not fail: %s", body)
	}
	for _, bad := range []string{"12x", "1M", "-5"} {
		if code, _, errOut := runMain(t, []string{"run", "--max-memory", bad, "task"}, vars); code == 0 || !strings.Contains(errOut, "max-memory") {
			t.Errorf("--max-memory %s: exit %d, %q", bad, code, errOut)
		}
	}
}
