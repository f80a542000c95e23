package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/cmd/reprise/scenarios"
	"github.com/reprise-dev/reprise/contextwin"
)

// TestRunCompactionModelOnFlex: `reprise run --compaction-model M --compaction-tier flex` asks
// M for the summaries, on Flex in the background, and the closing line shows what they cost
// apart, with their cached share and tier.
func TestRunCompactionModelOnFlex(t *testing.T) {
	ws := t.TempDir()
	var turns []geminitest.Turn
	for i := range 16 {
		name := fmt.Sprintf("n%d.txt", i)
		os.WriteFile(filepath.Join(ws, name), []byte(fmt.Sprintf("note %d\n", i)), 0o644)
		// The model's own notes grow the context, which clearing old tool results cannot free.
		turns = append(turns, geminitest.Turn{Parts: []geminitest.Part{{Text: strings.Repeat(fmt.Sprintf("what note %d says so far. ", i), 32)},
			{FunctionCall: &geminitest.FunctionCall{Name: "read_file", Args: map[string]any{"path": name}}, ThoughtSignature: "c2lnLTE="}}})
	}
	turns = append(turns, geminitest.Turn{Parts: []geminitest.Part{{Text: "read them all"}}})
	for range 3 {
		turns = append(turns, geminitest.Turn{Match: contextwin.SummaryMarker, Parts: []geminitest.Part{{Text: "**Objective:**\nRead the notes"}}})
	}
	srv := geminitest.New(geminitest.Script{Turns: turns})
	defer srv.Close()
	// No cache discount and free output: compacting early pays, so the summary runs in the
	// background, where it may ask for Flex.
	prices := filepath.Join(t.TempDir(), "prices.json")
	os.WriteFile(prices, []byte(`{"gemini": {"input": 1, "cachedInput": 1, "output": 0}}`), 0o644)
	vars := map[string]string{"GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": srv.URL(), "REPRISE_HOME": t.TempDir()}
	code, out, errOut := runMain(t, []string{"run", "--workspace", ws, "--budget", "5000", "--keep-recent", "2", "--prices", prices,
		"--compaction-model", "gemini-3.1-flash-lite", "--compaction-tier", "flex", "Read every note."}, env(vars))
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	var flex int
	for _, r := range srv.Requests() {
		if !strings.Contains(string(r.Body), contextwin.SummaryMarker) {
			continue
		}
		if r.Model != "gemini-3.1-flash-lite" {
			t.Errorf("a summary went to %s", r.Model)
		}
		if r.ServedTier == "flex" {
			flex++
		}
	}
	m := regexp.MustCompile(`status completed · .* · \$\d+\.\d{4} · of which (\d+) summar(y|ies) \$\d+\.\d{4} \([\d,]+ input, 0 cached; (\d+) on Flex\)`).FindStringSubmatch(out)
	if m == nil || flex == 0 || m[1] != fmt.Sprint(flex) || m[3] != fmt.Sprint(flex) {
		t.Errorf("closing line does not show the %d summaries on Flex apart:\n%s", flex, out)
	}
}

// TestCompactionFlags: a bad --compaction-model or --compaction-tier is refused with the flag's
// name, before any model is reached.
func TestCompactionFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--compaction-tier", "batch", "x"}, `--compaction-tier: "batch" is not a service tier`},
		{[]string{"run", "--compaction-model", "a b", "x"}, "--compaction-model: \"a b\" is not a model name"},
		{[]string{"acp", "--compaction-tier", "priority"}, "--compaction-tier"},
	} {
		code, _, errOut := runMain(t, tt.args, env(nil))
		if code != 2 || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tt.args, code, errOut, tt.want)
		}
	}
}

// TestFlexRow: reprise bench's Flex row, the investigation at the default budget with summaries
// alone, has every background summary served on Flex, at about half what the same run's
// summaries cost on the standard tier (the runs differ a little: a summary on Flex is not waited
// for after one step).
func TestFlexRow(t *testing.T) {
	var sc scenarios.Scenario
	for _, s := range scenarios.All() {
		if s.Name == "investigation" {
			sc = s
		}
	}
	only := func(p *contextwin.Policy) { p.KeepToolResults = true }
	budget := contextwin.DefaultPolicy().ContextBudget
	standard, err := playScenario(t.Context(), sc, budget, t.TempDir(), 0, only)
	if err != nil {
		t.Fatal(err)
	}
	flex, err := playScenario(t.Context(), sc, budget, t.TempDir(), 0, only, onFlex)
	if err != nil {
		t.Fatal(err)
	}
	f, s := flex.Totals.Summaries, standard.Totals.Summaries
	if flex.Stop != "end_turn" || f.Calls == 0 || f.Flex != f.Calls || s.Flex != 0 {
		t.Fatalf("flex run %s, summaries %+v; standard %+v", flex.Stop, f, s)
	}
	perToken := func(x contextwin.SummaryTotals) float64 { return x.Cost / float64(x.InputTokens+x.OutputTokens) }
	if r := perToken(f) / perToken(s); r < 0.4 || r > 0.6 {
		t.Errorf("a summary token on Flex costs %.2f× one on the standard tier, want about half: %+v vs %+v", r, f, s)
	}
	if !strings.Contains(flexCell(flex, standard), fmt.Sprintf("%d of %d on Flex", f.Flex, f.Calls)) {
		t.Errorf("flex cell %q", flexCell(flex, standard))
	}
}
