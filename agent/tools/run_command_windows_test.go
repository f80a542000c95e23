package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/windows"

	"github.com/reprise-dev/reprise/agent/cmdpolicy"
	"github.com/reprise-dev/reprise/agent/sandbox"
)

func init() {
	roles["leave"] = leave
	roles["sleep"] = func() int { time.Sleep(10 * time.Minute); return 0 }
	roles["stay"] = stay
}

// leave starts a sleep that shares its output, prints "started" and exits.
func leave() int {
	exe, err := os.Executable()
	if err != nil {
		return 1
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), roleEnv+"=sleep")
	cmd.Stdout = os.Stdout
	if err := cmd.Start(); err != nil {
		return 1
	}
	fmt.Println("started")
	return 0
}

// eventEnv names the event a "stay" sets once it runs.
const eventEnv = "REPRISE_TOOLS_EVENT"

// stay prints "started", tells the test through its event, and sleeps.
func stay() int {
	name, err := windows.UTF16PtrFromString(os.Getenv(eventEnv))
	if err != nil {
		return 1
	}
	ev, err := windows.OpenEvent(windows.EVENT_MODIFY_STATE, false, name)
	if err != nil {
		return 1
	}
	fmt.Println("started")
	if err := windows.SetEvent(ev); err != nil {
		return 1
	}
	time.Sleep(10 * time.Minute)
	return 0
}

// started returns an event that a "stay" sets, and a wait for it bounded so that a command that
// never runs fails the test rather than hangs it.
func started(t *testing.T) (wait func()) {
	t.Helper()
	name := fmt.Sprintf("reprise-test-%d-%s", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "-"))
	p, err := windows.UTF16PtrFromString(name)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := windows.CreateEvent(nil, 1, 0, p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = windows.CloseHandle(ev) })
	t.Setenv(eventEnv, name)
	return func() {
		if got, err := windows.WaitForSingleObject(ev, 30_000); got != windows.WAIT_OBJECT_0 {
			t.Errorf("the command did not start (%#x, %v)", got, err)
		}
	}
}

// tempDir is t.TempDir removed with os.Remove: t.TempDir's removal asks for POSIX delete
// semantics (FileDispositionInformationEx), which Wine does not implement, and fails there.
func tempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "reprise-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		var paths []string
		_ = filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
			paths = append(paths, p)
			return err
		})
		for i := len(paths) - 1; i >= 0; i-- { // children before their directory
			if err := os.Remove(paths[i]); err != nil && !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("clean up: %v", err)
			}
		}
	})
	return dir
}

func TestFindPowerShell(t *testing.T) {
	found := func(names ...string) func(string) (string, error) {
		return func(name string) (string, error) {
			for _, n := range names {
				if n == name {
					return `C:\bin\` + name, nil
				}
			}
			return "", exec.ErrNotFound
		}
	}
	getenv := func(string) string { return `D:\Win` }
	tests := []struct {
		name     string
		lookPath func(string) (string, error)
		want     windowsShell
	}{
		{"pwsh first", found("pwsh.exe", "powershell.exe"), windowsShell{`C:\bin\pwsh.exe`, true}},
		{"else powershell", found("powershell.exe"), windowsShell{`C:\bin\powershell.exe`, false}},
		{"else the system's", found(), windowsShell{`D:\Win\System32\WindowsPowerShell\v1.0\powershell.exe`, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := findPowerShell(tt.lookPath, getenv)
			if diff := cmp.Diff(got, tt.want, cmp.AllowUnexported(windowsShell{})); diff != "" {
				t.Errorf("(-got +want):\n%s", diff)
			}
		})
	}
}

// runArgv runs argv as run_command does, whatever the shell, and returns what it printed.
func runArgv(ctx context.Context, t *testing.T, timeout time.Duration, argv ...string) (string, ran) {
	t.Helper()
	sb := sandbox.New(sandbox.Config{Mode: sandbox.Off})
	c := newCapture(DefaultMaxOutputChars, nil)
	r := execute(ctx, sb, sandbox.Unasked, tempDir(t), argv, timeout, c)
	text, _, _ := c.render()
	return text, r
}

func self(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// TestExecuteWindows runs commands through cmd.exe, which every Windows (and Wine) has: what
// execute does is the same whatever the shell.
func TestExecuteWindows(t *testing.T) {
	t.Setenv(roleEnv, "")
	tests := []struct {
		name string
		argv []string
		want string
		ran  ran
	}{
		{"output", []string{"cmd.exe", "/d", "/c", "echo hi& echo err 1>&2"}, "hi\r\nerr \r\n", ran{}},
		{"exit status", []string{"cmd.exe", "/d", "/c", "exit /b 3"}, "", ran{exitCode: 3}},
		// The sleep it leaves holds the output pipe: the job's end kills it, so reading ends at once.
		{"background", []string{self(t)}, "started\n", ran{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name == "background" {
				t.Setenv(roleEnv, "leave")
			}
			out, r := runArgv(t.Context(), t, time.Minute, tt.argv...)
			if diff := cmp.Diff([]any{out, r}, []any{tt.want, tt.ran}, cmp.AllowUnexported(ran{})); diff != "" {
				t.Errorf("(-got +want):\n%s", diff)
			}
		})
	}
}

// TestExecuteTimeoutWindows: the command's job is killed at the deadline.
func TestExecuteTimeoutWindows(t *testing.T) {
	t.Setenv(roleEnv, "sleep")
	out, r := runArgv(t.Context(), t, 100*time.Millisecond, self(t))
	if diff := cmp.Diff([]any{out, r}, []any{"", ran{exitCode: -1, timedOut: true}}, cmp.AllowUnexported(ran{})); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
}

// TestExecuteCancelWindows: cancelling a running command kills its job.
func TestExecuteCancelWindows(t *testing.T) {
	t.Setenv(roleEnv, "stay")
	wait := started(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() { // ends once the command has started, or the wait gave up
		wait()
		cancel()
	}()
	out, r := runArgv(ctx, t, time.Minute, self(t))
	if diff := cmp.Diff([]any{out, r}, []any{"started\n", ran{exitCode: -1, cancelled: true}}, cmp.AllowUnexported(ran{})); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
}

// TestExecuteFloodWindows pushes 50 MB through the output pipe: complete, and bounded.
func TestExecuteFloodWindows(t *testing.T) {
	t.Setenv("REPRISE_TOOLS_FLOOD", "50000000")
	sb := sandbox.New(sandbox.Config{Mode: sandbox.Off})
	c := newCapture(DefaultMaxOutputChars, newSpill(tempDir(t), "flood-", DefaultLargeOutputBytes, 1<<20))
	r := execute(t.Context(), sb, sandbox.Unasked, tempDir(t), []string{self(t)}, time.Minute, c)
	text, chars, omitted := c.render()
	saved, err := c.spill.finish()
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(saved)
	if err != nil {
		t.Fatal(err)
	}
	got := []any{r, chars, omitted, fi.Size(), strings.HasPrefix(text, "--- PASS")}
	want := []any{ran{}, 50_000_000, 50_000_000 - DefaultMaxOutputChars, int64(1 << 20), true}
	if diff := cmp.Diff(got, want, cmp.AllowUnexported(ran{})); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
}

// TestRunCommandPowerShell runs the tool for real when a PowerShell answers (Wine's is a stub).
func TestRunCommandPowerShell(t *testing.T) {
	out, err := exec.Command(installedPowerShell().path, "-NoProfile", "-NonInteractive", "-Command", "$PSVersionTable.PSVersion.Major").Output()
	if _, nerr := strconv.Atoi(strings.TrimSpace(string(out))); err != nil || nerr != nil {
		t.Skipf("no working PowerShell at %s (%v, %q)", installedPowerShell().path, err, out)
	}
	env := &Env{Workspace: tempDir(t), Commands: &cmdpolicy.Policy{AllowAll: true}, Sandbox: sandbox.New(sandbox.Config{Mode: sandbox.Off})}
	r := runCmd(t, env, `Write-Output "a b"; exit 3`)
	if diff := cmp.Diff([]any{r.Output, r.ExitCode}, []any{"a b\r\nexit status 3", 3}); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
}

// TestCommandEnvWindows: Windows reads variable names case-insensitively, so a secret set in
// another case is still the secret.
func TestCommandEnvWindows(t *testing.T) {
	t.Setenv("Gemini_Api_Key", "sekret")
	t.Setenv("REPRISE_TEST_VISIBLE", "visible")
	var names []string
	for _, kv := range commandEnv() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.EqualFold(name, "GEMINI_API_KEY") || name == "REPRISE_TEST_VISIBLE" {
			names = append(names, name)
		}
	}
	if diff := cmp.Diff(names, []string{"REPRISE_TEST_VISIBLE"}); diff != "" {
		t.Errorf("variables passed (-got +want):\n%s", diff)
	}
}
