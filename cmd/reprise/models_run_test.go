package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/contextwin"
)

// TestRunRetiredModel: `reprise run --model gemini-2.5-flash` with a key the API no longer serves
// it to ends at once, in one line that names the model and its replacement, without retrying or
// calling the model.
func TestRunRetiredModel(t *testing.T) {
	srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{{Parts: []geminitest.Part{{Text: "never"}}}}})
	defer srv.Close()
	vars := map[string]string{"GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": srv.URL(), "REPRISE_HOME": t.TempDir()}
	start := time.Now()
	code, out, errOut := runMain(t, []string{"run", "--workspace", t.TempDir(), "--model", "gemini-2.5-flash", "hello"}, env(vars))
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("took %v, want well under 10 s", took)
	}
	if code == 0 {
		t.Fatalf("exit 0:\n%s", out)
	}
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "model gemini-2.5-flash is not available") || !strings.Contains(lines[0], "use gemini-3.5-flash-lite") {
		t.Errorf("stderr = %q, want one line naming the model and its replacement", errOut)
	}
	for _, r := range srv.Requests() {
		if r.Method != "GET" {
			t.Errorf("a model call was made: %s %s", r.Method, r.Path)
		}
	}
}

// TestRunRoutedModel: a run on a retired model the API answers with another says so, once, and
// its closing line is priced at the model that answered.
func TestRunRoutedModel(t *testing.T) {
	u := &geminitest.Usage{Prompt: 100_000, Candidates: 10_000}
	srv := geminitest.New(geminitest.Script{
		Routes: map[string]geminitest.Route{"gemini-2.5-pro": {To: "gemini-3.8-flash"}},
		Turns: []geminitest.Turn{
			{Parts: []geminitest.Part{{FunctionCall: &geminitest.FunctionCall{Name: "list_files", Args: map[string]any{}}}}, Usage: u},
			{Parts: []geminitest.Part{{Text: "Nothing here."}}, Usage: u},
		},
	})
	defer srv.Close()
	vars := map[string]string{"GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": srv.URL(), "REPRISE_HOME": t.TempDir()}
	code, out, errOut := runMain(t, []string{"run", "--workspace", t.TempDir(), "--model", "gemini-2.5-pro", "what is here?"}, env(vars))
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	flat := strings.Join(strings.Fields(out), " ") // notes wrap at 92 columns
	if n := strings.Count(flat, "warning: gemini-2.5-pro is retired: the API answered with gemini-3.8-flash; its calls are billed at gemini-3.8-flash's prices"); n != 1 {
		t.Errorf("%d routing warnings, want one:\n%s", n, out)
	}
	if !strings.Contains(flat, "warning: gemini-2.5-pro was shut down on 2026-12-01") {
		t.Errorf("no retirement warning before the first call:\n%s", out)
	}
	p, _ := contextwin.Pricing{}.At("gemini-3.8-flash", time.Now(), u.Prompt)
	cost := 2 * contextwin.CallUsage{Prompt: u.Prompt, Candidates: u.Candidates}.Cost(p)
	// The closing line ends with the cost, then the hit rate: the scripted usage reports nothing
	// cached.
	if want := fmt.Sprintf("· $%.4f · cache: 0 %% of the expected hits\n", cost); !strings.Contains(out, want) {
		t.Errorf("closing line not priced at gemini-3.8-flash's rates (want %q):\n%s", want, out)
	}
}

// TestRunUnknownModel: a model the catalogue lacks runs; its cost is unknown, never $0. Under a
// dollar cap it does not run: the cap could not be enforced, and the error says how to allow it.
func TestRunUnknownModel(t *testing.T) {
	srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{{Parts: []geminitest.Part{{Text: "Hi."}}}}})
	defer srv.Close()
	vars := map[string]string{"GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": srv.URL(), "REPRISE_HOME": t.TempDir()}
	code, out, errOut := runMain(t, []string{"run", "--workspace", t.TempDir(), "--model", "gemini-9-experimental", "--max-cost", "0.5", "hello"}, env(vars))
	if code == 0 || !strings.Contains(errOut, "gemini-9-experimental has no known price, so the dollar cap ($0.50) cannot be enforced") ||
		!strings.Contains(errOut, "--max-cost 0") || generateCalls(srv) != 0 {
		t.Errorf("under a dollar cap: exit %d after %d calls:\n%s\n%s", code, generateCalls(srv), errOut, out)
	}
	code, out, errOut = runMain(t, []string{"run", "--workspace", t.TempDir(), "--model", "gemini-9-experimental", "hello"}, env(vars))
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	if !strings.Contains(out, " output · unknown\n") || strings.Contains(out, "$0.0000") {
		t.Errorf("closing line does not say the cost is unknown:\n%s", out)
	}
}

// TestRunThinking: --thinking low puts thinkingLevel LOW on every request and no budget; on a 2.5
// model a level is its budget; a level the model does not take is refused before anything runs,
// with the levels it accepts. Thinking tokens show in the closing line.
func TestRunThinking(t *testing.T) {
	for _, tt := range []struct {
		model, level string
		wantLevel    string
		wantBudget   int
	}{
		{"gemini-3.8-flash", "low", "LOW", 0},
		{"gemini-2.5-flash-lite", "medium", "", 8192},
	} {
		srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{
			{Parts: []geminitest.Part{{FunctionCall: &geminitest.FunctionCall{Name: "list_files", Args: map[string]any{}}, ThoughtSignature: "c2ln"}}},
			{Parts: []geminitest.Part{{Text: "Nothing here."}}, Usage: &geminitest.Usage{Prompt: 1200, Candidates: 4, Thoughts: 250}},
		}})
		vars := map[string]string{"GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": srv.URL(), "REPRISE_HOME": t.TempDir()}
		code, out, errOut := runMain(t, []string{"run", "--workspace", t.TempDir(), "--model", tt.model, "--thinking", tt.level, "what is here?"}, env(vars))
		srv.Close()
		if code != 0 {
			t.Fatalf("%s: exit %d: %s\n%s", tt.model, code, errOut, out)
		}
		posts := 0
		for _, r := range srv.Requests() {
			if r.Method != "POST" {
				continue
			}
			posts++
			budget := 0
			if r.ThinkingBudget != nil {
				budget = *r.ThinkingBudget
			}
			if r.ThinkingLevel != tt.wantLevel || budget != tt.wantBudget {
				t.Errorf("%s: a request sent level %q, budget %d; want %q, %d", tt.model, r.ThinkingLevel, budget, tt.wantLevel, tt.wantBudget)
			}
		}
		if posts != 2 {
			t.Errorf("%s: %d model calls, want 2", tt.model, posts)
		}
		if !strings.Contains(out, " output (250 thinking) · ") {
			t.Errorf("%s: the closing line does not show the thinking tokens:\n%s", tt.model, out)
		}
	}

	for _, args := range [][]string{
		{"run", "--thinking", "minimal", "task"},
		{"run", "--model", "gemini-4-argon", "--thinking", "xhigh", "task"},
		{"acp", "--thinking", "minimal"},
	} {
		code, _, errOut := runMain(t, args, env(map[string]string{"GEMINI_API_KEY": "k"}))
		if code != 2 || !strings.Contains(errOut, "does not accept thinking level") || !strings.Contains(errOut, "it accepts low, medium, high") {
			t.Errorf("%v: exit %d, %q; want a usage error listing the accepted levels", args, code, errOut)
		}
	}
}

// generateCalls counts the model calls srv answered (not model information).
func generateCalls(srv *geminitest.Server) int {
	n := 0
	for _, r := range srv.Requests() {
		if r.Method == "POST" && strings.Contains(r.Path, "enerateContent") {
			n++
		}
	}
	return n
}
