package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/agent/mcp/mcptest"
	"github.com/reprise-dev/reprise/agent/sandbox/sandboxtest"
	"github.com/reprise-dev/reprise/lsp"
	"github.com/reprise-dev/reprise/lsp/lsptest"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// binary builds reprise once per test run.
func binary(tb testing.TB) string {
	tb.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "reprise-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "reprise")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		tb.Fatal(buildErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	mcptest.Serve() // the MCP server of the MCP tests, when started as one
	code := sandboxtest.Main(m)
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// TestServeSubprocess drives the real binary over its stdio: a full turn against the fake model,
// then shutdown and exit 0.
func TestServeSubprocess(t *testing.T) {
	srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{
		{Parts: []geminitest.Part{{FunctionCall: &geminitest.FunctionCall{Name: "list_files", Args: map[string]any{}}}}},
		{Parts: []geminitest.Part{{Text: "Nothing here yet."}}},
	}})
	defer srv.Close()
	ws := t.TempDir()
	env := []string{"GEMINI_API_KEY=test-key", "GOOGLE_GEMINI_BASE_URL=" + srv.URL(), "REPRISE_HOME=" + t.TempDir()}
	ed := lsptest.Exec(t, binary(t), []string{"serve", "--stdio"}, env, lsptest.Options{Root: ws, Experimental: true})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if _, err := ed.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	var res lsp.SessionResult
	if err := ed.Execute(ctx, lsp.CommandAsk, lsp.AskArgs{Text: "what is here?"}, &res); err != nil {
		t.Fatal(err)
	}
	raw, err := ed.AwaitTurnEnd(ctx, res.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"end_turn"`) {
		t.Errorf("turn_end = %s", raw)
	}
	if err := ed.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if code, err := ed.Wait(ctx); code != 0 || err != nil {
		t.Errorf("exit %d %v, want 0", code, err)
	}
}

// TestServeStdinClosed: the editor going away (stdin closed) ends the server cleanly.
func TestServeStdinClosed(t *testing.T) {
	cmd := exec.Command(binary(t), "serve", "--stdio")
	cmd.Env = append(os.Environ(), "REPRISE_HOME="+t.TempDir())
	cmd.Dir = t.TempDir()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	in.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("server exit after stdin closed: %v, want 0", err)
	}
}

// BenchmarkServeInitialize measures, for the real binary, the time from spawning it to reading
// its initialize reply, and its resident memory once idle.
func BenchmarkServeInitialize(b *testing.B) {
	bin := binary(b)
	dir := b.TempDir()
	var rss float64
	for b.Loop() {
		cmd := exec.Command(bin, "serve", "--stdio")
		cmd.Env = append(os.Environ(), "REPRISE_HOME="+dir)
		cmd.Dir = dir
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}`
		fmt.Fprintf(in, "Content-Length: %d\r\n\r\n%s", len(body), body)
		if _, err := readFrame(bufio.NewReader(out)); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		rss += rssMiB(b, cmd.Process.Pid)
		in.Close()
		cmd.Wait()
		b.StartTimer()
	}
	b.ReportMetric(rss/float64(b.N), "MiB-idle-RSS")
}

func readFrame(r *bufio.Reader) (json.RawMessage, error) {
	n := 0
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimSpace(line)
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
			n, _ = strconv.Atoi(v)
		}
	}
	buf := make([]byte, n)
	_, err := io.ReadFull(r, buf)
	return buf, err
}

func rssMiB(tb testing.TB, pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		tb.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.Fields(v)[0])
			return float64(kb) / 1024
		}
	}
	return 0
}

// longTestsEnv names the variable that turns on the tests too long for `go test ./...` to hold
// within its default 10-minute timeout on a loaded 2-core machine (with the others of this
// package): scripts/test, and so CI, sets it.
const longTestsEnv = "REPRISE_LONG_TESTS"

// long skips t unless longTestsEnv is 1, saying what it would have done.
func long(t *testing.T, what string) {
	t.Helper()
	if testing.Short() || os.Getenv(longTestsEnv) != "1" {
		t.Skipf("%s: set %s=1 to run it (scripts/test does)", what, longTestsEnv)
	}
}

// TestBenchTable runs `reprise bench` from the built binary (so it can spawn itself as a server).
// About 200 s on two cores: long.
func TestBenchTable(t *testing.T) {
	long(t, "bench pushes 1 GiB through run_command and plays every scenario at every budget twice")
	cmd := exec.Command(binary(t), "bench")
	cmd.Env = append(os.Environ(), "REPRISE_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("reprise bench: %v\n%s", err, out)
	}
	for _, want := range []string{"serve: spawn → initialize reply", "serve: idle RSS", "run_command: 1 GiB of output", "ledger: append + account, 10000 messages", "Compaction cost on scripted sessions", "investigation", "24,000 summaries", "24,000 clearing", "24,000 both", "long-refactor", "half the implicit hits missed", "The cheapest schedule of clearings", "the true mark $"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("bench output lacks %q:\n%s", want, out)
		}
	}
	// The cost table: every run without management and with both tiers is played again with half
	// of the implicit hits missed, its cost in the last column.
	_, table, _ := strings.Cut(string(out), "half the implicit hits missed")
	table, _, _ = strings.Cut(table, "in the dead zone") // the next table has no such column
	for row := range strings.Lines(table) {
		if (strings.Contains(row, " none ") || strings.Contains(row, " both ")) && !strings.Contains(row, "% cached · ") {
			t.Errorf("cost table row %q has no missed cell", row)
		}
	}
	t.Logf("\n%s", out)
}

// TestUserSettingsFile: where serve looks for the user settings file. Never the workspace.
func TestUserSettingsFile(t *testing.T) {
	for _, tt := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"REPRISE_CONFIG wins", map[string]string{"REPRISE_CONFIG": "/u/reprise.json", "REPRISE_CONFIG_HOME": "/c", "XDG_CONFIG_HOME": "/x"}, "/u/reprise.json"},
		{"the config directory", map[string]string{"REPRISE_CONFIG_HOME": "/c", "XDG_CONFIG_HOME": "/x"}, "/c/settings.json"},
		{"XDG", map[string]string{"XDG_CONFIG_HOME": "/x", "HOME": "/h"}, "/x/reprise/settings.json"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := userSettingsFile(func(k string) string { return tt.env[k] }); got != tt.want {
				t.Errorf("userSettingsFile = %q, want %q", got, tt.want)
			}
		})
	}
}
