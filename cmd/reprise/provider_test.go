package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reprise-dev/reprise/agent/openai/openaitest"
)

// TestRunOnAnOpenAICompatibleServer (issue 38, first step): a bug fix scripted on a fake
// OpenAI-compatible server runs through the real openai-go client and the whole agent: the calls
// and their results go back as tool messages, the file is fixed, the window is read from the
// server, and the key never reaches the model or the output.
func TestRunOnAnOpenAICompatibleServer(t *testing.T) {
	srv := openaitest.New(
		openaitest.Turn{Calls: []openaitest.Call{{Name: "read_file", Args: map[string]any{"path": "cart.go"}}}},
		openaitest.Turn{Text: "The total skips the last item.", Calls: []openaitest.Call{{Name: "edit_file", Args: map[string]any{"path": "cart.go", "old": "i < len(items)-1", "new": "i < len(items)"}}}},
		openaitest.Turn{Text: "Fixed: the loop now counts every item."},
	)
	defer srv.Close()
	srv.Models, srv.ContextLength, srv.NumCtx = []string{"qwen3:8b"}, 40960, 16384
	ws := t.TempDir()
	src := "package cart\n\nfunc Total(items []int) int {\n\tt := 0\n\tfor i := 0; i < len(items)-1; i++ {\n\t\tt += items[i]\n\t}\n\treturn t\n}\n"
	os.WriteFile(filepath.Join(ws, "cart.go"), []byte(src), 0o644)
	vars := map[string]string{"MY_LOCAL_KEY": "sk-local-secret-123", "REPRISE_HOME": t.TempDir()}
	code, out, errOut := runMain(t, []string{"run", "--provider", "openai", "--base-url", srv.URL(), "--api-key-env", "MY_LOCAL_KEY",
		"--model", "qwen3:8b", "--workspace", ws, "fix the total"}, env(vars))
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	b, _ := os.ReadFile(filepath.Join(ws, "cart.go"))
	if !strings.Contains(string(b), "i < len(items); i++") {
		t.Errorf("cart.go not fixed:\n%s", b)
	}
	if !strings.Contains(out, "Fixed: the loop now counts every item.") || !strings.Contains(out, "3 model calls") {
		t.Errorf("output:\n%s", out)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	last := reqs[2].Messages()
	var tools int
	for _, m := range last {
		if m["role"] == "tool" && strings.HasPrefix(m["tool_call_id"].(string), "call_") {
			tools++
		}
	}
	if tools != 2 || reqs[2].Body["model"] != "qwen3:8b" {
		t.Errorf("the last request holds %d tool messages, model %v", tools, reqs[2].Body["model"])
	}
	for _, r := range reqs {
		if strings.Contains(mustJSONAny(r.Body), "sk-local-secret-123") {
			t.Error("the key reached the model")
		}
	}
	if strings.Contains(out+errOut, "sk-local-secret-123") {
		t.Error("the key was printed")
	}
}

// TestProviderFlagsRefused: a wrong provider, a Gemini run given --base-url, a bad URL, a bad
// variable name and an OpenAI run without --model are refused in one line, before anything runs.
func TestProviderFlagsRefused(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--provider", "anthropic"}, `--provider "anthropic": use gemini or openai`},
		{[]string{"--base-url", "http://x/v1"}, "--base-url is for --provider openai"},
		{[]string{"--provider", "openai", "--model", "m", "--base-url", "localhost:11434"}, "give the server's URL"},
		{[]string{"--provider", "openai", "--model", "m", "--api-key-env", "MY-KEY"}, "is not an environment variable's name"},
		{[]string{"--provider", "openai"}, "--provider openai needs --model"},
	} {
		code, _, errOut := runMain(t, append(append([]string{"run"}, tt.args...), "task"), env(map[string]string{"REPRISE_HOME": t.TempDir()}))
		if code != 2 || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", tt.args, code, errOut, tt.want)
		}
	}
}

// TestRunOpenAIServerDown: a server that cannot be reached ends the run at once, naming it.
func TestRunOpenAIServerDown(t *testing.T) {
	code, _, errOut := runMain(t, []string{"run", "--provider", "openai", "--base-url", "http://127.0.0.1:1/v1", "--model", "m", "--workspace", t.TempDir(), "task"},
		env(map[string]string{"REPRISE_HOME": t.TempDir()}))
	if code == 0 || !strings.Contains(errOut, "the server at http://127.0.0.1:1/v1 cannot list its models") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

func mustJSONAny(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestModelsOfAnEndpoint: reprise models --provider openai lists what the server serves, with the
// window where it says.
func TestModelsOfAnEndpoint(t *testing.T) {
	srv := openaitest.New()
	defer srv.Close()
	srv.Models, srv.ContextLength, srv.Loaded = []string{"qwen3:8b", "gpt-5.4-mini"}, 40960, 32768
	code, out, errOut := runMain(t, []string{"models", "--provider", "openai", "--base-url", srv.URL()}, env(map[string]string{"REPRISE_HOME": t.TempDir()}))
	if code != 0 || !strings.Contains(out, "qwen3:8b      32768 tokens    free (local: its time is counted)") ||
		!strings.Contains(out, "gpt-5.4-mini  32768 tokens    0.75 / 0.075 / 4.50") {
		t.Errorf("exit %d:\n%s%s", code, out, errOut)
	}
	code, _, errOut = runMain(t, []string{"models", "--provider", "openai", "--base-url", "http://127.0.0.1:1/v1"}, env(map[string]string{"REPRISE_HOME": t.TempDir()}))
	if code == 0 || !strings.Contains(errOut, "cannot list its models") {
		t.Errorf("a server down: exit %d, %q", code, errOut)
	}
}

// TestRunPricedAtTheProvidersRates: a run on an OpenAI model the catalogue knows is priced at its
// rates, its cached share at the cached rate.
func TestRunPricedAtTheProvidersRates(t *testing.T) {
	u := &openaitest.Usage{Prompt: 100_000, Cached: 80_000, Completion: 10_000}
	srv := openaitest.New(openaitest.Turn{Text: "Nothing to do.", Usage: u})
	defer srv.Close()
	code, out, errOut := runMain(t, []string{"run", "--provider", "openai", "--base-url", srv.URL(), "--model", "gpt-5.4-mini", "--workspace", t.TempDir(), "hello"},
		env(map[string]string{"REPRISE_HOME": t.TempDir()}))
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	// 20,000 at $0.75, 80,000 at $0.075 and 10,000 at $4.50 per million.
	want := fmt.Sprintf("$%.4f", (20_000*0.75+80_000*0.075+10_000*4.50)/1e6)
	if !strings.Contains(out, "100,000 input tokens (80,000 cached)") || !strings.Contains(out, want) {
		t.Errorf("closing line without %s:\n%s", want, out)
	}
}

// TestLocalModelWithinItsWindow (issue 38): a local model whose server says its window is 16,384
// tokens: the budget follows it, the session reads more than fits, the context is cleared or
// compacted within the window, and the run completes.
func TestLocalModelWithinItsWindow(t *testing.T) {
	ws := t.TempDir()
	var turns []openaitest.Turn
	for i := range 14 {
		name := fmt.Sprintf("notes/part%02d.md", i)
		var b strings.Builder
		for j := range 60 {
			fmt.Fprintf(&b, "Line %d of part %d: the stock levels of warehouse %d were checked and found in order.\n", j, i, j%7)
		}
		os.MkdirAll(filepath.Join(ws, "notes"), 0o755)
		os.WriteFile(filepath.Join(ws, name), []byte(b.String()), 0o644)
		turns = append(turns, openaitest.Turn{Calls: []openaitest.Call{{Name: "read_file", Args: map[string]any{"path": name}}}})
	}
	turns = append(turns, openaitest.Turn{Text: "All fourteen parts say the stock is in order."},
		openaitest.Turn{Match: "Summarize the conversation", Text: "**Objective:**\nRead the notes.\n\n**Progress:**\nParts read; all in order."})
	srv := openaitest.New(turns...)
	defer srv.Close()
	srv.Models, srv.ContextLength, srv.NumCtx = []string{"qwen3:8b"}, 40960, 16384 // a Modelfile's num_ctx
	// As Ollama: no cache reported, and each reply takes a local model's time.
	srv.NoCache, srv.Pace = true, &openaitest.Pace{Prompt: 200_000, Output: 2_000}
	code, out, errOut := runMain(t, []string{"run", "--provider", "openai", "--base-url", srv.URL(), "--model", "qwen3:8b", "--workspace", ws, "read every part of the notes"},
		env(map[string]string{"REPRISE_HOME": t.TempDir()}))
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	if !strings.Contains(out, "All fourteen parts say the stock is in order.") {
		t.Errorf("the run did not complete:\n%s", out)
	}
	if !strings.Contains(out, "checkpoint") {
		t.Errorf("nothing was cleared or compacted:\n%s", out)
	}
	// The model is local: its cost is its time, never dollars or "unknown", and the time is at
	// least what the server took.
	status := out[strings.LastIndex(out, "status "):]
	m := regexp.MustCompile(`· local · ([0-9.]+) s`).FindStringSubmatch(status)
	if m == nil || strings.Contains(status, "$") || strings.Contains(status, "unknown") || strings.Contains(status, "cache:") {
		t.Fatalf("the closing line does not give the local model's time: %q", status)
	}
	if secs, _ := strconv.ParseFloat(m[1], 64); secs < srv.Slept().Seconds()-0.1 || srv.Slept() < 300*time.Millisecond {
		t.Errorf("model time %s s, the server took %s", m[1], srv.Slept())
	}
	checkPeak(t, srv, 16384, out)
}

// TestOllamaDefaultContext: an Ollama model with nothing setting its context gets Ollama's
// default, not the model's maximum, which Ollama would not allocate (it cuts a longer prompt
// silently): the budget is 4,096 and the user is told how to raise it.
func TestOllamaDefaultContext(t *testing.T) {
	srv := openaitest.New(openaitest.Turn{Text: "Hello."})
	defer srv.Close()
	srv.Models, srv.ContextLength = []string{"qwen3:8b"}, 40960
	code, out, errOut := runMain(t, []string{"run", "--provider", "openai", "--base-url", srv.URL(), "--model", "qwen3:8b", "--workspace", t.TempDir(), "hello"},
		env(map[string]string{"REPRISE_HOME": t.TempDir()}))
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	if !strings.Contains(errOut, "Ollama gives qwen3:8b 4096 tokens of context unless told more (the model takes 40960)") ||
		!strings.Contains(errOut, "OLLAMA_CONTEXT_LENGTH=32768") {
		t.Errorf("stderr %q", errOut)
	}
}

// TestLocalModelSummarizes: on a local model with a 16,384-token window, a session whose history
// is mostly the model's own words (which clearing cannot free) is summarized within the window,
// the summary on the same free model, and completes; the decisions are weighed in seconds.
func TestLocalModelSummarizes(t *testing.T) {
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "inventory.csv"), []byte("sku,count\nA-1,4\nB-2,9\n"), 0o644)
	var turns []openaitest.Turn
	for i := range 26 {
		var b strings.Builder
		for j := range 16 {
			fmt.Fprintf(&b, "Step %d, point %d: the count of aisle %d differs from the ledger by %d units, which the next read should explain. ", i, j, (i*7+j)%13, (i+j)%5+1)
		}
		turns = append(turns, openaitest.Turn{Text: b.String(), Calls: []openaitest.Call{{Name: "read_file", Args: map[string]any{"path": "inventory.csv"}}}})
	}
	turns = append(turns, openaitest.Turn{Text: "The ledger and the shelves agree once the returns are counted."},
		openaitest.Turn{Match: "Summarize the conversation", Text: "**Objective:**\nReconcile the inventory.\n\n**Progress:**\nTwenty-six aisles compared with the ledger."})
	srv := openaitest.New(turns...)
	defer srv.Close()
	srv.Models, srv.ContextLength, srv.NumCtx, srv.NoCache = []string{"qwen3:8b"}, 40960, 16384, true
	code, out, errOut := runMain(t, []string{"run", "--verbose", "--provider", "openai", "--base-url", srv.URL(), "--model", "qwen3:8b", "--workspace", ws, "reconcile the inventory"},
		env(map[string]string{"REPRISE_HOME": t.TempDir()}))
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	if !strings.Contains(out, "once the returns are counted") {
		t.Errorf("the run did not complete:\n%s", out)
	}
	summarized := false
	for _, r := range srv.Requests() {
		msgs := r.Messages()
		if c, _ := msgs[len(msgs)-1]["content"].(string); strings.Contains(c, "Summarize the conversation") {
			summarized = true
		}
	}
	if !summarized || !strings.Contains(out, "of which 1 summary local") {
		t.Errorf("no summary on the local model:\n%s", out)
	}
	if strings.Contains(out, "$") {
		t.Errorf("a local session words something in dollars:\n%s", out)
	}
	checkPeak(t, srv, 16384, out)
}

// checkPeak fails the test if a request the server received is over window tokens (its JSON's
// bytes over four, which overstates the tokens of prose and JSON alike).
func checkPeak(t *testing.T, srv *openaitest.Server, window int, out string) {
	t.Helper()
	peak := 0
	for _, r := range srv.Requests() {
		b, _ := json.Marshal(map[string]any{"t": r.Body["tools"], "m": r.Body["messages"]})
		peak = max(peak, len(b)/4)
	}
	if peak > window {
		t.Errorf("a request of about %d tokens, over the %d-token window", peak, window)
	}
	t.Logf("peak request about %d tokens; %d requests\n%s", peak, len(srv.Requests()), out)
}
