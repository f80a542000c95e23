package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/reprise-dev/reprise/agent/cmdpolicy"
	"github.com/reprise-dev/reprise/agent/sandbox"
	"github.com/reprise-dev/reprise/agent/tools"
)

// benchModule is a small Go module whose test imports a few packages of the standard library.
var benchModule = map[string]string{
	"go.mod":  "module example.com/first\n\ngo 1.24\n",
	"calc.go": "package calc\n\nimport \"strconv\"\n\nfunc Double(s string) int { n, _ := strconv.Atoi(s); return 2 * n }\n",
	"calc_test.go": "package calc\n\nimport (\n\t\"encoding/json\"\n\t\"testing\"\n)\n\n" +
		"func TestDouble(t *testing.T) {\n\tb, _ := json.Marshal(Double(\"21\"))\n\tif string(b) != \"42\" {\n\t\tt.Fatal(string(b))\n\t}\n}\n",
}

// goBenchPairs is how many times the first go test is timed outside and in the sandbox.
const goBenchPairs = 7

// middle is the median of ds (which it sorts).
func middle(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// firstGoTest times `go test -count=1 ./...` of a small module as the first command in a new
// directory: outside the sandbox with the user's build cache warm, then in the sandbox, reading
// the user's cache (gocacheprog) and, for comparison, without it (what the workspace's own cache
// alone gives). ok is false when Go is missing or commands are not confined here.
func firstGoTest(ctx context.Context) (outside, sandboxed, alone time.Duration, ok bool, err error) {
	if _, err := exec.LookPath("go"); err != nil {
		return 0, 0, 0, false, nil
	}
	dir, err := os.MkdirTemp("", "reprise-bench-go-")
	if err != nil {
		return 0, 0, 0, false, err
	}
	defer os.RemoveAll(dir)
	module := func(name string) (string, error) { return writeBenchModule(dir, name) }
	// The user's cache warm (a build of the same code elsewhere); then the same first command
	// outside the sandbox, in a directory of its own as the sandboxed ones: its own packages are
	// compiled there too.
	outsideRun := func(name string) (time.Duration, error) {
		ws, err := module(name)
		if err != nil {
			return 0, err
		}
		return timeGoTest(ctx, ws)
	}
	if _, err := outsideRun("warm"); err != nil {
		return 0, 0, 0, false, err
	}
	run := func(name string) (time.Duration, bool, error) {
		ws, err := module(name)
		if err != nil {
			return 0, false, err
		}
		cache, err := os.MkdirTemp(sandbox.DefaultCache(os.Getenv), "bench-")
		if err != nil {
			return 0, false, err
		}
		defer os.RemoveAll(cache)
		sb := sandbox.New(sandbox.Config{Workspace: ws, Cache: cache})
		if confined, _ := sb.Confined(); !confined {
			return 0, false, nil
		}
		env := &tools.Env{Workspace: ws, Sandbox: sb, Commands: &cmdpolicy.Policy{AllowAll: true}}
		start := time.Now()
		res := tools.Run(ctx, env, tools.Call{ID: "bench", Name: "run_command", Args: map[string]any{"command": "go test -count=1 ./...", "timeout_s": 600}})
		if res.IsError {
			return 0, false, fmt.Errorf("go test in the sandbox: %s", firstLine(res.Output))
		}
		return time.Since(start), true, nil
	}
	if err := os.MkdirAll(sandbox.DefaultCache(os.Getenv), 0o700); err != nil {
		return 0, 0, 0, false, err
	}
	// Pairs in turn, each in new directories, and the medians: one run on a shared machine says
	// little.
	var outs, ins []time.Duration
	for i := range goBenchPairs {
		o, err := outsideRun(fmt.Sprintf("outside-%d", i))
		if err != nil {
			return 0, 0, 0, false, err
		}
		in, ok, err := run(fmt.Sprintf("layered-%d", i))
		if !ok || err != nil {
			return 0, 0, 0, ok, err
		}
		outs, ins = append(outs, o), append(ins, in)
	}
	outside, sandboxed = middle(outs), middle(ins)
	prog := sandbox.GoCacheProgram()
	sandbox.SetGoCacheProgram()
	defer sandbox.SetGoCacheProgram(prog...)
	alone, ok, err = run("alone")
	return outside, sandboxed, alone, ok, err
}

// writeBenchModule writes the bench's module into dir/name.
func writeBenchModule(dir, name string) (string, error) {
	ws := filepath.Join(dir, name)
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return "", err
	}
	for f, body := range benchModule {
		if err := os.WriteFile(filepath.Join(ws, f), []byte(body), 0o644); err != nil {
			return "", err
		}
	}
	return ws, nil
}

// timeGoTest times `go test -count=1 ./...` in ws, outside the sandbox.
func timeGoTest(ctx context.Context, ws string) (time.Duration, error) {
	cmd := exec.CommandContext(ctx, "go", "test", "-count=1", "./...")
	cmd.Dir = ws
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("go test outside the sandbox: %v: %s", err, out)
	}
	return time.Since(start), nil
}
