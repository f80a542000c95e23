package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
)

// TestHelp: -h and --help print the command's usage on stdout and exit 0, on every command; bench
// does not run the benchmark.
func TestHelp(t *testing.T) {
	for _, cmd := range []string{"run", "serve", "acp", "demo", "bench", "sessions", "models", "version"} {
		for _, flag := range []string{"-h", "--help"} {
			t.Run(cmd+" "+flag, func(t *testing.T) {
				start := time.Now()
				code, out, errOut := runMain(t, []string{cmd, flag}, env(nil))
				if code != 0 || errOut != "" {
					t.Errorf("exit %d, stderr %q; want 0 and nothing", code, errOut)
				}
				if !strings.HasPrefix(out, "Usage: reprise "+cmd) && !strings.HasPrefix(out, "Usage of reprise "+cmd) {
					t.Errorf("stdout does not start with the usage:\n%s", out)
				}
				if strings.Contains(out, "serve: spawn") || time.Since(start) > 10*time.Second {
					t.Errorf("%s %s did the work instead of printing its usage:\n%s", cmd, flag, out)
				}
			})
		}
	}
	// The flags are listed as the README and the messages write them.
	_, out, _ := runMain(t, []string{"run", "--help"}, env(nil))
	if !strings.Contains(out, "\n  --allow value\n") || regexp.MustCompile(`(?m)^  -[a-z]`).MatchString(out) {
		t.Errorf("run's flags are not listed as --name:\n%s", out)
	}
	// help COMMAND is that command's help.
	for _, cmd := range []string{"run", "sessions", "demo", "models"} {
		code, out, _ := runMain(t, []string{"help", cmd}, env(nil))
		if code != 0 || !strings.HasPrefix(out, "Usage: reprise "+cmd) {
			t.Errorf("help %s: exit %d\n%s", cmd, code, out)
		}
	}
}

// TestCLIMistakes: a mistake is one line naming it as the user typed it, and where the help is, as
// gh and kubectl say it; exit 2, nothing on stdout.
func TestCLIMistakes(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--frobnicate"}, "reprise serve: unknown flag --frobnicate\nSee 'reprise serve --help'.\n"},
		{[]string{"run", "--frob", "x"}, "reprise run: unknown flag --frob\nSee 'reprise run --help'.\n"},
		{[]string{"run", "--budget", "lots", "x"}, "reprise run: invalid value \"lots\" for flag --budget: parse error\nSee 'reprise run --help'.\n"},
		{[]string{"run", "--model"}, "reprise run: flag needs an argument: --model\nSee 'reprise run --help'.\n"},
		{[]string{"demo", "--frob"}, "reprise demo: unknown flag --frob\nSee 'reprise demo --help'.\n"},
		{[]string{"--frob"}, "reprise: unknown flag \"--frob\"\nSee 'reprise --help'.\n"},
		{[]string{"frobnicate"}, "reprise: unknown command \"frobnicate\"\nSee 'reprise --help'.\n"},
		{[]string{"help", "frobnicate"}, "reprise: unknown command \"frobnicate\"\nSee 'reprise --help'.\n"},
	} {
		code, out, errOut := runMain(t, tt.args, env(nil))
		if code != 2 || out != "" || errOut != tt.want {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and %q", tt.args, code, out, errOut, tt.want)
		}
	}
}

// TestFlagNamesInErrors: a setting given on the command line is named in its error as the flag the
// user typed, not as the policy's field.
func TestFlagNamesInErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"run", "--budget", "-5", "x"}, "--budget -5, want at least 1000"},
		{[]string{"run", "--compact-at", "1.5", "x"}, "--compact-at 1.5, want between 0 and 1"},
		{[]string{"run", "--block-at", "0.5", "x"}, "--block-at 0.5, want above --compact-at"},
		{[]string{"run", "--keep-recent", "0", "x"}, "--keep-recent 0"},
		{[]string{"run", "--max-cost", "-1", "x"}, "--max-cost -1"},
		{[]string{"acp", "--budget", "-5"}, "--budget -5"},
	}
	fields := regexp.MustCompile(`contextBudget|compactAt|blockAt|keepRecentTurns|maxCostUSD|sessionTokenCap|toolOutputMaxChars`)
	for _, tt := range tests {
		code, _, errOut := runMain(t, tt.args, env(nil))
		if code != 2 || !strings.Contains(errOut, tt.want) || fields.MatchString(errOut) {
			t.Errorf("%v: exit %d, %q; want 2 and %q, no internal name", tt.args, code, errOut, tt.want)
		}
	}
}

func TestShortError(t *testing.T) {
	tests := []struct{ in, want string }{
		{
			`model unavailable after 5 attempts: doRequest: error sending request: Post "http://127.0.0.1:9/v1beta/models/gemini-3.8-flash:streamGenerateContent?alt=sse": dial tcp 127.0.0.1:9: connect: connection refused`,
			"model unavailable after 5 attempts: cannot reach 127.0.0.1:9 (connection refused)",
		},
		{
			`doRequest: error sending request: Get "https://nowhere.invalid/v1beta/models/m": dial tcp: lookup nowhere.invalid on 127.0.0.53:53: no such host`,
			"cannot find the host nowhere.invalid (no such host)",
		},
		{
			`doRequest: error sending request: Post "http://10.0.0.1:80/x": dial tcp 10.0.0.1:80: i/o timeout`,
			"cannot reach 10.0.0.1:80 (i/o timeout)",
		},
		{"Error 503, Message: model overloaded, Status: UNAVAILABLE", "Error 503, Message: model overloaded, Status: UNAVAILABLE"},
		{"first\nsecond", "first …"},
	}
	var got, want []string
	for _, tt := range tests {
		got = append(got, shortError(tt.in))
		want = append(want, tt.want)
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("short errors (-got +want):\n%s", diff)
	}
}

// TestRetryLines: each failed attempt is one short line under the run's table.
func TestRetryLines(t *testing.T) {
	var out bytes.Buffer
	tb := newTable(&out, false)
	refused := `doRequest: error sending request: Post "http://127.0.0.1:9/v1beta/models/m:streamGenerateContent?alt=sse": dial tcp 127.0.0.1:9: connect: connection refused`
	for n := 2; n <= 3; n++ {
		tb.handle(agent.Event{Type: agent.EventRetry, Retry: &agent.RetryEvent{Attempt: n, Delay: time.Duration(n) * 600 * time.Millisecond, Err: refused}})
	}
	tb.handle(agent.Event{Type: agent.EventTurnEnd, End: &agent.TurnEnd{StopReason: agent.StopError}})
	got := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")[1:]
	want := []string{
		"      ↳ attempt 1 failed: cannot reach 127.0.0.1:9 (connection refused); retrying in 1.2s",
		"      ↳ attempt 2 failed: cannot reach 127.0.0.1:9 (connection refused); retrying in 1.8s",
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("retry lines (-got +want):\n%s", diff)
	}
}

// TestFailedFirstCallKeepsNoSession: a run whose first model call fails says so in one line,
// never offers to continue it, and leaves no saved session behind.
func TestFailedFirstCallKeepsNoSession(t *testing.T) {
	srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{{Fault: &geminitest.Fault{Status: 403, Message: "API key not valid"}}}})
	defer srv.Close()
	ws, home := t.TempDir(), t.TempDir()
	vars := env(map[string]string{"GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": srv.URL(), "REPRISE_HOME": home})
	code, out, errOut := runMain(t, []string{"run", "--workspace", ws, "hello"}, vars)
	if code != 1 || !strings.Contains(errOut, "not kept: no model call was answered") {
		t.Errorf("exit %d, stderr %q; want 1 and the session not kept", code, errOut)
	}
	if strings.Contains(errOut, "--resume") {
		t.Errorf("stderr offers to continue a session it does not keep: %q", errOut)
	}
	if !strings.Contains(out, "0 model calls") {
		t.Errorf("closing line lacks the model calls:\n%s", out)
	}
	dirs, _ := filepath.Glob(filepath.Join(home, "*", "sessions", "*"))
	if len(dirs) != 0 {
		t.Errorf("sessions left behind: %v", dirs)
	}
	code, out, _ = runMain(t, []string{"sessions", "--workspace", ws}, vars)
	if code != 0 || !strings.HasPrefix(out, "no saved session") {
		t.Errorf("sessions list: exit %d\n%s", code, out)
	}
}

// TestSessionsShowForPeople: `sessions show` has counts with their nouns, "none" for what is
// empty, and nothing of Go's syntax.
func TestSessionsShowForPeople(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{
		{Parts: []geminitest.Part{{FunctionCall: &geminitest.FunctionCall{Name: "list_files", Args: map[string]any{}}}}},
		{Parts: []geminitest.Part{{Text: "One file."}}},
	}})
	defer srv.Close()
	vars := env(map[string]string{"GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": srv.URL(), "REPRISE_HOME": t.TempDir()})
	code, _, errOut := runMain(t, []string{"run", "--workspace", ws, "what is here?"}, vars)
	m := regexp.MustCompile(`session (\S+) \(continue it`).FindStringSubmatch(errOut)
	if code != 0 || m == nil {
		t.Fatalf("run: %d %s", code, errOut)
	}
	code, out, _ := runMain(t, []string{"sessions", "show", m[1], "--workspace", ws}, vars)
	if code != 0 {
		t.Fatalf("sessions show: exit %d", code)
	}
	for _, want := range []string{"1 turn · 2 model calls", "files modified none", "last verdict   none", "history        "} {
		if !strings.Contains(out, want) {
			t.Errorf("sessions show lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"[]", `""`, `\t`, "map["} {
		if strings.Contains(out, bad) {
			t.Errorf("sessions show prints Go syntax %q:\n%s", bad, out)
		}
	}
}

// TestUnreachableBaseURL: an endpoint nothing listens on ends the run at once, in one line that
// names the address and the setting, and leaves no session.
func TestUnreachableBaseURL(t *testing.T) {
	home := t.TempDir()
	vars := env(map[string]string{"GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:9", "REPRISE_HOME": home})
	code, out, errOut := runMain(t, []string{"run", "--workspace", t.TempDir(), "hello"}, vars)
	want := "reprise: cannot reach 127.0.0.1:9 (connection refused): check GOOGLE_GEMINI_BASE_URL and the network\n"
	if code != 1 || errOut != want || out != "" {
		t.Errorf("exit %d\nstdout %q\nstderr %q\nwant 1 and stderr %q", code, out, errOut, want)
	}
	if dirs, _ := filepath.Glob(filepath.Join(home, "*", "sessions", "*")); len(dirs) != 0 {
		t.Errorf("sessions left behind: %v", dirs)
	}
}

// TestSessionsFork: `sessions fork ID --turn 2` makes a session without turn 2 that `run --resume`
// continues, and `show` says where it comes from; bad points are refused with the reason and
// make nothing.
func TestSessionsFork(t *testing.T) {
	ws := t.TempDir()
	srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{
		{Parts: []geminitest.Part{{Text: "One."}}},
		{Parts: []geminitest.Part{{Text: "Two."}}},
		{Parts: []geminitest.Part{{Text: "The fork's two."}}},
	}})
	defer srv.Close()
	vars := env(map[string]string{"GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": srv.URL(), "REPRISE_HOME": t.TempDir()})
	code, _, errOut := runMain(t, []string{"run", "--workspace", ws, "first"}, vars)
	m := regexp.MustCompile(`session (\S+) \(continue it`).FindStringSubmatch(errOut)
	if code != 0 || m == nil {
		t.Fatalf("run: %d %s", code, errOut)
	}
	if code, _, errOut := runMain(t, []string{"run", "--workspace", ws, "--resume", m[1], "second"}, vars); code != 0 {
		t.Fatalf("run --resume: %d %s", code, errOut)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"9"}, "no checkpoint 9 (it has 0)"},
		{[]string{"--turn", "5"}, "no turn 5 (it has 2)"},
		{[]string{"--turn", "x"}, `turn must be a number (1 or more), got "x"`},
		{[]string{"0"}, `checkpoint must be a number (1 or more), got "0"`},
	} {
		code, _, errOut := runMain(t, append([]string{"sessions", "fork", m[1], "--workspace", ws}, tt.args...), vars)
		if code == 0 || !strings.Contains(errOut, tt.want) {
			t.Errorf("fork %v: exit %d, %q, want %q", tt.args, code, errOut, tt.want)
		}
	}
	code, out, errOut := runMain(t, []string{"sessions", "fork", m[1], "--turn", "2", "--workspace", ws}, vars)
	f := regexp.MustCompile(`^session (\S+): forked from session (\S+) at turn 2 \(1 turn, 0 checkpoints\)\nThe files on disk were not changed. Continue the fork with: reprise run --resume (\S+)\n$`).FindStringSubmatch(out)
	if code != 0 || f == nil || f[2] != m[1] || f[3] != f[1] {
		t.Fatalf("fork: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runMain(t, []string{"sessions", "--workspace", ws}, vars)
	if code != 0 || strings.Count(out, "\n") != 3 {
		t.Errorf("two sessions listed, want:\n%s", out)
	}
	code, out, _ = runMain(t, []string{"sessions", "show", f[1], "--workspace", ws}, vars)
	if code != 0 || !strings.Contains(out, "forked from    session "+m[1]+" at turn 2\n") || !strings.Contains(out, "1 turn ·") {
		t.Errorf("show the fork: %d\n%s", code, out)
	}
	if code, _, errOut := runMain(t, []string{"run", "--workspace", ws, "--resume", f[1], "second, another way"}, vars); code != 0 {
		t.Fatalf("run --resume the fork: %d %s", code, errOut)
	}
	reqs := srv.Requests()
	got := reqs[len(reqs)-1].Contents
	if len(got) != 3 || got[0].Parts[0].Text != "first" || got[2].Parts[0].Text != "second, another way" {
		t.Errorf("the fork's call sends %d messages: %+v", len(got), got)
	}
}

// TestSessionsExport: a session with a tool call, a refused command, a plan and a compaction,
// exported as Markdown and as HTML: every step is there, each turn's figures add up to the
// totals `sessions show` prints, the API key the model echoed is masked, the page loads nothing.
func TestSessionsExport(t *testing.T) {
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("alpha\n"), 0o644)
	call := func(name string, args map[string]any) geminitest.Turn {
		return geminitest.Turn{Parts: []geminitest.Part{{FunctionCall: &geminitest.FunctionCall{Name: name, Args: args}}}}
	}
	say := func(s string) geminitest.Turn { return geminitest.Turn{Parts: []geminitest.Part{{Text: s}}} }
	srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{
		call("write_todos", map[string]any{"todos": []any{map[string]any{"description": "Read a", "status": "in_progress"}, map[string]any{"description": "Drop b", "status": "cancelled"}}}),
		call("read_file", map[string]any{"path": "a.txt"}),
		say("A says alpha; the token is sk-live-0123456789abcdef."),
		say("Second answer <b>bold</b> ``` fence."),
	}})
	defer srv.Close()
	vars := env(map[string]string{"GEMINI_API_KEY": "sk-live-0123456789abcdef", "GOOGLE_GEMINI_BASE_URL": srv.URL(), "REPRISE_HOME": t.TempDir()})
	code, _, errOut := runMain(t, []string{"run", "--workspace", ws, "Read a.txt"}, vars)
	m := regexp.MustCompile(`session (\S+) \(continue it`).FindStringSubmatch(errOut)
	if code != 0 || m == nil {
		t.Fatalf("run: %d %s", code, errOut)
	}
	if code, _, errOut := runMain(t, []string{"run", "--workspace", ws, "--resume", m[1], "And then?"}, vars); code != 0 {
		t.Fatalf("run --resume: %d %s", code, errOut)
	}
	code, show, _ := runMain(t, []string{"sessions", "show", m[1], "--workspace", ws}, vars)
	billed := regexp.MustCompile(`· ([\d,]+) input billed · ([\d,]+) output`).FindStringSubmatch(show)
	if code != 0 || billed == nil {
		t.Fatalf("show: %d\n%s", code, show)
	}
	code, md, errOut := runMain(t, []string{"sessions", "export", m[1], "--workspace", ws}, vars)
	if code != 0 {
		t.Fatalf("export: %d %s", code, errOut)
	}
	for _, want := range []string{
		"# Read a.txt\n", "**Total:** 4 model calls · " + billed[1] + " input tokens (", " · " + billed[2] + " output · $",
		"## Turn 1\n", "## Turn 2\n", "> Read a.txt\n", "**Tool** `write_todos ", "**Tool** `read_file {\"path\":\"a.txt\"}`",
		"- [>] Read a\n- [-] ~~Drop b~~\n", "alpha", "> And then?\n", "Second answer <b>bold</b> ``` fence.",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "sk-live-0123456789abcdef") {
		t.Error("the Markdown holds the secret")
	}
	// Each turn's figures add up to the total.
	in := 0
	for _, f := range regexp.MustCompile(`(?m)^\*(\d+) model calls? · ([\d,]+) input tokens`).FindAllStringSubmatch(md, -1) {
		n, _ := strconv.Atoi(strings.ReplaceAll(f[2], ",", ""))
		in += n
	}
	if want, _ := strconv.Atoi(strings.ReplaceAll(billed[1], ",", "")); in != want {
		t.Errorf("the turns' input adds up to %d, the total is %d", in, want)
	}
	out := filepath.Join(t.TempDir(), "session.html")
	if code, _, errOut := runMain(t, []string{"sessions", "export", m[1], "--workspace", ws, "-o", out}, vars); code != 0 || !strings.Contains(errOut, "exported to "+out) {
		t.Fatalf("export -o: %d %s", code, errOut)
	}
	page, _ := os.ReadFile(out)
	for _, want := range []string{"<!DOCTYPE html>", "default-src 'none'", "prefers-color-scheme: dark", "Second answer &lt;b&gt;bold&lt;/b&gt;", "<h2>Turn 2</h2>"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	for _, bad := range []string{"<script", "<link", "<img", "src=", "href=", "url(", "@import", "sk-live-0123456789abcdef"} {
		if strings.Contains(strings.ToLower(string(page)), bad) {
			t.Errorf("the page holds %q", bad)
		}
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--format", "pdf"}, `unknown export format "pdf": md or html`},
		{[]string{"-o", filepath.Join(t.TempDir(), "missing", "x.md")}, "export: open"},
	} {
		code, _, errOut := runMain(t, append([]string{"sessions", "export", m[1], "--workspace", ws}, tt.args...), vars)
		if code == 0 || !strings.Contains(errOut, tt.want) {
			t.Errorf("export %v: %d %q, want %q", tt.args, code, errOut, tt.want)
		}
	}
	if code, _, errOut := runMain(t, []string{"sessions", "export", "20260101-000000-abcdef", "--workspace", ws}, vars); code == 0 || !strings.Contains(errOut, "no such session") {
		t.Errorf("export of an unknown session: %d %q", code, errOut)
	}
}

// TestModelsOffline: with the API out of reach, `reprise models` says so in one short line, the
// address named and no Go error chain, and shows the catalogue.
func TestModelsOffline(t *testing.T) {
	vars := env(map[string]string{"GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:9", "XDG_CACHE_HOME": t.TempDir(), "HOME": t.TempDir()})
	code, out, errOut := runMain(t, []string{"models", "--refresh"}, vars)
	if code != 0 || !strings.Contains(out, "gemini-3.8-flash") {
		t.Fatalf("models offline: exit %d\n%s%s", code, out, errOut)
	}
	want := "reprise: warning: list the models: model unavailable after 1 attempt: cannot reach 127.0.0.1:9 (connection refused); showing the catalogue alone\n"
	if errOut != want {
		t.Errorf("stderr %q, want %q", errOut, want)
	}
}
