package main

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reprise-dev/reprise/agent/cmdpolicy"
	"github.com/reprise-dev/reprise/agent/sandbox"
	"github.com/reprise-dev/reprise/agent/tools"
)

func countFiles(dir string) int {
	n := 0
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return nil
	})
	return n
}

// TestSandboxedGoReadsTheUsersBuildCache (issue 37, item 2): in a new workspace, a sandboxed
// `go test` reads what the user's own build cache holds through reprise gocacheprog, so the
// workspace's cache gets only what the user never built; the user's cache is not written, by
// the go command or by a command that tries to poison it.
func TestSandboxedGoReadsTheUsersBuildCache(t *testing.T) {
	bin := binary(t)
	// Under the home, as the go command's default is: the sandbox mounts it back read-only (a
	// cache in /tmp would be out of sight behind the commands' private /tmp).
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	user, err := os.MkdirTemp(home, ".reprise-gocache-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(user) })
	t.Setenv("GOCACHE", user)
	t.Setenv("GOFLAGS", "")
	ws := t.TempDir()
	files := map[string]string{
		"go.mod":       "module example.com/first\n\ngo 1.24\n",
		"calc.go":      "package calc\n\nimport \"strconv\"\n\nfunc Double(s string) int { n, _ := strconv.Atoi(s); return 2 * n }\n",
		"calc_test.go": "package calc\n\nimport (\n\t\"encoding/json\"\n\t\"testing\"\n)\n\nfunc TestDouble(t *testing.T) {\n\tb, _ := json.Marshal(Double(\"21\"))\n\tif string(b) != \"42\" {\n\t\tt.Fatal(string(b))\n\t}\n}\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	warm := exec.Command("go", "test", "-count=1", "./...")
	warm.Dir = ws
	if out, err := warm.CombinedOutput(); err != nil {
		t.Fatalf("go test outside the sandbox: %v\n%s", err, out)
	}
	before := countFiles(user)
	cache := t.TempDir()
	sb := sandbox.New(sandbox.Config{Workspace: ws, Cache: cache})
	if ok, why := sb.Confined(); !ok {
		t.Skipf("commands are not confined here (%s): the sandbox's cache is not used", why)
	}
	sandbox.SetGoCacheProgram(bin, "gocacheprog")
	t.Cleanup(func() { sandbox.SetGoCacheProgram() })
	env := &tools.Env{Workspace: ws, Sandbox: sb, Commands: &cmdpolicy.Policy{AllowAll: true}, MaxOutputChars: 20000}
	res := tools.Run(t.Context(), env, tools.Call{ID: "t", Name: "run_command", Args: map[string]any{"command": "go test -count=1 ./...", "timeout_s": 300}})
	if res.IsError || !strings.Contains(res.Output, "ok  \texample.com/first") {
		t.Fatalf("sandboxed go test: %s", res.Output)
	}
	if after := countFiles(user); after != before {
		t.Errorf("the user's cache went from %d files to %d: it must only be read", before, after)
	}
	own := countFiles(filepath.Join(cache, "go-build"))
	t.Logf("the user's cache: %d files; the workspace's after its first go test: %d", before, own)
	if own*4 > before {
		t.Errorf("the workspace's cache holds %d files against the user's %d: the user's was not read", own, before)
	}
	// The user's cache is read, never written: a command that tries to poison it fails.
	poison := tools.Run(t.Context(), env, tools.Call{ID: "p", Name: "run_command", Args: map[string]any{
		"command": "echo poisoned > " + filepath.Join(user, "00", "poison-a") + " || echo refused; ls " + user + " | head -1"}})
	if _, err := os.Stat(filepath.Join(user, "00", "poison-a")); err == nil || !strings.Contains(poison.Output, "refused") {
		t.Errorf("a sandboxed command wrote into the user's build cache: %s", poison.Output)
	}
	// Copied where commands see it: the sandbox's own directory under the home, else (here, with
	// XDG_CACHE_HOME in /tmp) the workspace's cache.
	_, inShared := os.Stat(filepath.Join(sandbox.DefaultCache(os.Getenv), "bin", "reprise"))
	_, inOwn := os.Stat(filepath.Join(cache, "bin", "reprise"))
	if inShared != nil && inOwn != nil {
		t.Errorf("the program was copied nowhere: %v; %v", inShared, inOwn)
	}
}
