package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func runMain(t *testing.T, args []string, getenv func(string) string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(t.Context(), args, strings.NewReader(""), &out, &errb, getenv)
	return code, out.String(), errb.String()
}

func TestDemo(t *testing.T) {
	code, out, errOut := runMain(t, []string{"demo"}, env(nil))
	if code != 0 {
		t.Fatalf("demo exited %d: %s\n%s", code, errOut, out)
	}
	for _, want := range []string{
		"The model is SCRIPTED",
		"(go test ./...: FAIL)",
		"(go test ./...: ok example.com/boutique/facturation", // the tests really ran, in the sandbox
		"characters omitted from the middle",
		"whole output saved to",
		"old tool results cleared, no model call",
		"What the model reads in place of an old result:",
		"[cleared to free context: ",
		"First message the model saw after the last compaction",
		"(git diff, refused)",
		"contextBudget 4000 is small for gemini-3.8-flash",
		"status completed · 13 model calls",
		"A long session: a 42-call investigation",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
	if strings.Contains(out, "Go is not on PATH") {
		t.Error("the demo says Go is missing though the tests ran")
	}
	// The demo's budget (4,000) keeps every prompt under gemini-3.8-flash's 4,096-token cache
	// minimum: the compacted run has nothing cached, and says why; the uncompacted run has.
	closing := regexp.MustCompile(`status completed · 13 model calls · ([\d,]+) input tokens \(([\d,]+) cached\) · [\d,]+ output( \([\d,]+ thinking\))? · \$\d+\.\d{4}( · of which \d+ summar[^\n]*)?\n`).FindStringSubmatch(out)
	if closing == nil {
		t.Fatalf("no closing line with cached tokens in:\n%s", out)
	}
	if input, cached := atoi(t, closing[1]), atoi(t, closing[2]); cached != 0 || input == 0 {
		t.Errorf("closing line: %d cached of %d input tokens; want none under the cache minimum", cached, input)
	}
	if !strings.Contains(out, "reaches gemini-3.8-flash's 4,096-token implicit-cache minimum, so none is billed cached") {
		t.Errorf("the demo does not say why nothing is cached:\n%s", out)
	}
	m := regexp.MustCompile(`Billed input for the same task: ([\d,]+) tokens with compaction .*, ([\d,]+) without`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no comparison line in:\n%s", out)
	}
	with, without := atoi(t, m[1]), atoi(t, m[2])
	if with >= without {
		t.Errorf("compaction billed %d, without %d: want a saving", with, without)
	}
	t.Logf("demo billed input: %d with compaction, %d without", with, without)
	// The long session is where managing the context pays, in dollars.
	long := regexp.MustCompile(`(?m)^\s+managed\s+41\s+\d+\s+[\d,]+\s+[\d,]+\s+\d+ %\s+\$[\d.]+\n\s+unmanaged\s+41\s+0\s+[\d,]+\s+[\d,]+\s+\d+ %\s+\$[\d.]+\nAt gemini-3.8-flash's prices of [\d-]+, prefix cache included: (\d+) % saved\.`).FindStringSubmatch(out)
	if long == nil || atoi(t, long[1]) < 20 {
		t.Errorf("no long session saving at least 20 %% in:\n%s", out)
	}
	if !regexp.MustCompile(`Cost at gemini-3.8-flash's prices of \d{4}-\d\d-\d\d, prefix cache included: \$[\d.]+ with compaction \([\d,]+ of its input cached\), \$[\d.]+ without \([1-9][\d,]* cached\): (\d+ % saved|compaction costs [\d.]+× as much)\.`).MatchString(out) {
		t.Errorf("no cost comparison line in:\n%s", out)
	}
}

// TestDemoWithoutGo is the demo as run from a release archive on a machine without Go: it still
// completes, and says that its `go test` results are not real.
func TestDemoWithoutGo(t *testing.T) {
	var dirs []string
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(dir, "go")); err != nil {
			dirs = append(dirs, dir)
		}
	}
	t.Setenv("PATH", strings.Join(dirs, string(filepath.ListSeparator)))
	if _, err := exec.LookPath("go"); err == nil {
		t.Skip("go is still on PATH")
	}
	code, out, errOut := runMain(t, []string{"demo"}, env(nil))
	if code != 0 {
		t.Fatalf("demo exited %d: %s\n%s", code, errOut, out)
	}
	for _, want := range []string{"Go is not on PATH", "status completed · 13 model calls"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(strings.ReplaceAll(s, ",", ""))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestRunHeadless(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "hello.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{
		{Parts: []geminitest.Part{{FunctionCall: &geminitest.FunctionCall{Name: "read_file", Args: map[string]any{"path": "hello.txt"}}}}},
		{Parts: []geminitest.Part{{FunctionCall: &geminitest.FunctionCall{Name: "run_command", Args: map[string]any{"command": "echo '3 passed in 0.1s'"}}}}},
		{Parts: []geminitest.Part{{Text: "The file says hello."}}},
	}})
	defer srv.Close()
	vars := map[string]string{"GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": srv.URL(), "REPRISE_HOME": t.TempDir()}
	// A dollar per input token, nothing for output: the cost equals the billed input.
	prices := filepath.Join(t.TempDir(), "prices.json")
	os.WriteFile(prices, []byte(`{"gemini-3.8-flash": {"input": 1000000, "cachedInput": 0, "output": 0}}`), 0o644)
	code, out, errOut := runMain(t, []string{"run", "--workspace", ws, "--allow", "echo", "--prices", prices, "What does hello.txt say?"}, env(vars))
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	for _, want := range []string{"call  prompt  cached  output  tool", "read_file", "(echo '3 passed in 0.1s': 3 passed in 0.1s)", "The file says hello.", "status completed · 3 model calls"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// The closing line's input figure is the sum of the reported prompts.
	var sum int
	for _, r := range regexp.MustCompile(`(?m)^\s+\d+\s+(\d+)\s+\d+`).FindAllStringSubmatch(out, -1) {
		sum += atoi(t, r[1])
	}
	// The prompts are far below the 4,096-token minimum: nothing cached.
	if !strings.Contains(out, " · "+commas(sum)+" input tokens (0 cached) · ") {
		t.Errorf("closing line does not give the sum of prompts %d and 0 cached:\n%s", sum, out)
	}
	if !strings.Contains(out, fmt.Sprintf("$%d.0000", sum)) {
		t.Errorf("cost is not priced from the --prices file (want $%d.0000):\n%s", sum, out)
	}
}

func TestRunErrors(t *testing.T) {
	srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{{Fault: &geminitest.Fault{Status: 403, Message: "API key not valid"}}}})
	defer srv.Close()
	tests := []struct {
		name     string
		args     []string
		env      map[string]string
		wantCode int
		wantErr  string
	}{
		{"no task", []string{"run"}, nil, 2, "give the task"},
		{"bad flag value", []string{"run", "--compact-at", "2", "x"}, nil, 2, "--compact-at 2"},
		{"missing key", []string{"run", "--workspace", t.TempDir(), "x"}, map[string]string{"REPRISE_HOME": t.TempDir()}, 1, "GEMINI_API_KEY"},
		{"no workspace", []string{"run", "--workspace", "/nonexistent/dir", "x"}, map[string]string{"GEMINI_API_KEY": "k"}, 1, "not a directory"},
		{"key refused", []string{"run", "--workspace", t.TempDir(), "x"}, map[string]string{"GEMINI_API_KEY": "test-key-123", "GOOGLE_GEMINI_BASE_URL": srv.URL(), "REPRISE_HOME": t.TempDir()}, 1, "API key not valid"},
		{"unknown command", []string{"frobnicate"}, nil, 2, "unknown command"},
		{"bad prices file", []string{"run", "--prices", "/nonexistent.json", "--workspace", t.TempDir(), "x"}, map[string]string{"GEMINI_API_KEY": "test-key-123"}, 1, "read prices"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runMain(t, tt.args, env(tt.env))
			if code != tt.wantCode || !strings.Contains(errOut+out, tt.wantErr) {
				t.Errorf("exit %d, output %q %q; want %d and %q", code, out, errOut, tt.wantCode, tt.wantErr)
			}
			if strings.Contains(errOut+out, "test-key-123") {
				t.Error("the API key was printed")
			}
		})
	}
}

// BenchmarkDemoBilledInput runs the demo's task with and without compaction and reports the
// billed input tokens of each, the part of them served from the implicit cache, and the cost.
func BenchmarkDemoBilledInput(b *testing.B) {
	for b.Loop() {
		dir := b.TempDir()
		with, _, err := demoRun(context.Background(), filepath.Join(dir, "a"), 4000, &bytes.Buffer{}, false, false)
		if err != nil {
			b.Fatal(err)
		}
		without, _, err := demoRun(context.Background(), filepath.Join(dir, "b"), noCompaction, &bytes.Buffer{}, false, false)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(with.InputTokens), "tokens-with-compaction")
		b.ReportMetric(float64(without.InputTokens), "tokens-without")
		b.ReportMetric(float64(with.CachedTokens), "cached-with-compaction")
		b.ReportMetric(float64(without.CachedTokens), "cached-without")
		b.ReportMetric(with.Cost, "usd-with-compaction")
		b.ReportMetric(without.Cost, "usd-without")
	}
}

func TestSessionsCLIAndResume(t *testing.T) {
	ws := t.TempDir()
	srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{
		{Parts: []geminitest.Part{{FunctionCall: &geminitest.FunctionCall{Name: "list_files", Args: map[string]any{}}}}},
		{Parts: []geminitest.Part{{Text: "Nothing yet."}}},
		{Parts: []geminitest.Part{{Text: "Still nothing."}}},
	}})
	defer srv.Close()
	vars := env(map[string]string{"GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": srv.URL(), "REPRISE_HOME": t.TempDir()})
	code, _, errOut := runMain(t, []string{"run", "--workspace", ws, "what is here?"}, vars)
	if code != 0 {
		t.Fatalf("run: %d %s", code, errOut)
	}
	m := regexp.MustCompile(`session (\S+) \(continue it with --resume`).FindStringSubmatch(errOut)
	if m == nil {
		t.Fatalf("no session id in %q", errOut)
	}
	id := m[1]
	code, out, _ := runMain(t, []string{"sessions", "--workspace", ws}, vars)
	if code != 0 || !strings.Contains(out, id) || !strings.Contains(out, "what is here?") {
		t.Errorf("sessions list: %d\n%s", code, out)
	}
	code, out, _ = runMain(t, []string{"sessions", "show", id, "--workspace", ws}, vars)
	if code != 0 || !strings.Contains(out, "2 model calls") {
		t.Errorf("sessions show: %d\n%s", code, out)
	}
	code, out, _ = runMain(t, []string{"sessions", "checkpoints", id, "--workspace", ws}, vars)
	if code != 0 || !strings.Contains(out, "Checkpoint History (0 total)") {
		t.Errorf("sessions checkpoints: %d\n%s", code, out)
	}
	if code, _, errOut := runMain(t, []string{"sessions", "checkpoints", id, "3", "--workspace", ws}, vars); code != 2 || !strings.Contains(errOut, "no checkpoint") {
		t.Errorf("missing checkpoint: %d %s", code, errOut)
	}
	code, out, errOut = runMain(t, []string{"run", "--workspace", ws, "--resume", id, "and now?"}, vars)
	if code != 0 || !strings.Contains(out, "Still nothing.") || !strings.Contains(out, "3 model calls") {
		t.Fatalf("run --resume: %d %s\n%s", code, errOut, out)
	}
	reqs := srv.Requests()
	body := string(reqs[len(reqs)-1].Body)
	if !strings.Contains(body, "what is here?") || !strings.Contains(body, "and now?") {
		t.Errorf("the resumed run did not send the earlier history: %s", body)
	}
}
