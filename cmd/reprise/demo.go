package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/gemini"
	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/agent/runner"
	"github.com/reprise-dev/reprise/agent/sandbox"
	"github.com/reprise-dev/reprise/agent/tools"
	"github.com/reprise-dev/reprise/cmd/reprise/demo"
	"github.com/reprise-dev/reprise/cmd/reprise/scenarios"
	"github.com/reprise-dev/reprise/contextwin"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// demoCmd runs the scripted session twice: with the demo's small budget (compaction happens) and
// with a budget large enough that it does not, and compares the billed input.
func demoCmd(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := withUsage(flag.NewFlagSet("reprise demo", flag.ContinueOnError), "Usage: reprise demo [--keep] [--verbose]")
	keep := fs.Bool("keep", false, "keep the demo's temporary workspace and session files")
	verbose := fs.Bool("verbose", false, "print each tool result's first line")
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "reprise-demo-")
	if err != nil {
		return err
	}
	if *keep {
		defer fmt.Fprintf(stdout, "\nDemo files kept in %s\n", dir)
	} else {
		defer func() {
			os.RemoveAll(dir)
			fmt.Fprintln(stdout, "\nThe demo's files, the saved outputs named above included, are removed now; --keep keeps them.")
		}()
	}
	fmt.Fprintln(stdout, "Reprise demo — offline. The model is SCRIPTED: a fake Gemini server replays a fixed session")
	fmt.Fprintln(stdout, "through the real genai client. The tools, the workspace, the token counts (characters/4 of what")
	fmt.Fprintln(stdout, "is actually sent), truncation and compaction are real.")
	// A release archive runs on machines without Go, where the workspace's `go test` cannot run:
	// the scripted model, which cannot see that, would still report the tests passing.
	if _, err := exec.LookPath("go"); err != nil {
		fmt.Fprintln(stdout, "\nGo is not on PATH: the demo's `go test` commands fail (\"go: not found\") though the scripted model")
		fmt.Fprintln(stdout, "reports them passing, and the figures differ from a run with Go (https://go.dev/dl).")
	}
	fmt.Fprintf(stdout, "\nTask: %s\nBudget %s tokens, small on purpose so that the context fills in a few calls · compact at 0.7 · keep 3 recent turns\n\n",
		demo.Task, commas(demo.Budget))

	withCompaction, s, err := demoRun(ctx, filepath.Join(dir, "compacted"), demo.Budget, stdout, *verbose, true)
	if err != nil {
		return err
	}
	showCheckpoints(stdout, s)
	without, _, err := demoRun(ctx, filepath.Join(dir, "plain"), noCompaction, io.Discard, false, false)
	if err != nil {
		return fmt.Errorf("demo without compaction: %w", err)
	}
	fmt.Fprintf(stdout, "\nBilled input for the same task: %s tokens with compaction (budget %s, summaries included), %s without: %s.\n",
		commas(withCompaction.InputTokens), commas(demo.Budget), commas(without.InputTokens), saving(withCompaction.InputTokens, without.InputTokens))
	// Tokens are not dollars: a cached prefix is billed a tenth, and a compaction rewrites it.
	model := catalog.Builtin().DefaultModel()
	fmt.Fprintf(stdout, "Cost at %s's prices of %s, prefix cache included: $%.4f with compaction (%s of its input cached), $%.4f without (%s cached): %s.\n",
		model, timeNow().Format(time.DateOnly), withCompaction.Cost, commas(withCompaction.CachedTokens), without.Cost, commas(without.CachedTokens), costRatio(withCompaction.Cost, without.Cost))
	if minimum := catalog.Builtin().CacheMin(model); float64(demo.Budget)*contextwin.DefaultPolicy().BlockAt < float64(minimum) {
		fmt.Fprintf(stdout, "No prompt under a %s-token budget reaches %s's %s-token implicit-cache minimum, so none is billed cached:\n"+
			"a budget this small is a choice of a small prompt, paid in dollars. A session this short gains nothing from\n"+
			"managing its context: every tool result is paid in full once, and what a context manager saves is the re-reading\n"+
			"of old ones, call after call.\n", commas(demo.Budget), model, commas(minimum))
	}
	return longSession(ctx, filepath.Join(dir, "long"), stdout, model)
}

// showCheckpoints shows what the model read after the session's checkpoints: one of the stubs the
// last clearing left, and the new head of the last compaction when it came after.
func showCheckpoints(w io.Writer, s *agent.Session) {
	cps := s.Conversation().Checkpoints()
	for i := len(cps) - 1; i >= 0; i-- {
		cp := cps[i]
		if cp.Cleared == 0 {
			continue
		}
		// A clearing's summary lists its stubs, one a line: the history may have none left.
		for _, line := range strings.Split(cp.Summary, "\n") {
			if stub, ok := strings.CutPrefix(line, "- "); ok && strings.HasPrefix(stub, contextwin.ClearedMarker) {
				fmt.Fprintf(w, "\nCheckpoint %d «%s», %s → %s tokens, with no model call. What the model reads in place of an old result:\n",
					cp.N, cp.Title, commas(cp.TokensBefore), commas(cp.TokensAfter))
				fmt.Fprintln(w, indent(stub, "  │ "))
				break
			}
		}
		break
	}
	if len(cps) > 0 && cps[len(cps)-1].Cleared == 0 {
		last := cps[len(cps)-1]
		fmt.Fprintf(w, "\nFirst message the model saw after the last compaction (checkpoint %d «%s»):\n", last.N, last.Title)
		fmt.Fprintln(w, indent(contextwin.HeadText(s.Conversation().History()[0]), "  │ "))
	}
}

// longSession plays the scripted 41-call investigation at the default budget and without
// context management, and puts the two side by side: the session where managing the context pays.
func longSession(ctx context.Context, dir string, w io.Writer, model string) error {
	sc, ok := scenarioNamed("investigation")
	if !ok {
		return errors.New("the long scenario is missing")
	}
	budget := contextwin.DefaultPolicy().ContextBudget
	fmt.Fprintf(w, "\nA long session: %s, at the default budget (%s tokens) and unmanaged.\n", sc.About, commas(budget))
	managed, err := playScenario(ctx, sc, budget, filepath.Join(dir, "managed"), 0)
	if err != nil {
		return err
	}
	plain, err := playScenario(ctx, sc, noCompaction, filepath.Join(dir, "plain"), 0)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tcalls\tcheckpoints\tlargest prompt\tbilled input\tcached\tcost\t")
	for _, r := range []struct {
		name string
		run  scenarioRun
	}{{"managed", managed}, {"unmanaged", plain}} {
		t := r.run.Totals
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%d %%\t$%.4f\t\n", r.name, r.run.Calls, r.run.Compactions, commas(r.run.MaxPrompt),
			commas(t.InputTokens), percent(t.CachedTokens, t.InputTokens), t.Cost)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "At %s's prices of %s, prefix cache included: %s.\n", model, timeNow().Format(time.DateOnly), costRatio(managed.Totals.Cost, plain.Totals.Cost))
	return nil
}

func percent(part, whole int) int {
	if whole <= 0 {
		return 0
	}
	return part * 100 / whole
}

func scenarioNamed(name string) (scenarios.Scenario, bool) {
	for _, sc := range scenarios.All() {
		if sc.Name == name {
			return sc, true
		}
	}
	return scenarios.Scenario{}, false
}

// demoRun plays the script once in a fresh copy of the workspace. With compact, a run whose
// context management needed no summary ends as a user would before the next task: /compact, so
// that the demo shows the structured summary too (its cost is not in the totals returned).
func demoRun(ctx context.Context, dir string, budget int, stdout io.Writer, verbose, compact bool) (contextwin.Totals, *agent.Session, error) {
	s, closeAll, err := scriptedSession(ctx, dir, demo.CopyWorkspace, demo.Script(), budget, stdout, agent.SubagentSettings{})
	if err != nil {
		return contextwin.Totals{}, nil, err
	}
	defer closeAll()
	end, err := printRun(ctx, s, demo.Task, stdout, verbose)
	if err != nil {
		return contextwin.Totals{}, nil, err
	}
	if end.StopReason != agent.StopEndTurn {
		return contextwin.Totals{}, nil, fmt.Errorf("the demo stopped: %s", end.StopReason)
	}
	if compact && !summarized(s.Conversation().Checkpoints()) {
		cp, err := s.Compact(ctx, "")
		if err != nil {
			return contextwin.Totals{}, nil, fmt.Errorf("the demo's /compact: %w", err)
		}
		fmt.Fprintf(stdout, "\n/compact (the run needed no summary; a user compacts before the next task): checkpoint %d «%s», %s messages summarized, %s → %s tokens\n",
			cp.N, cp.Title, commas(cp.Replaced), commas(cp.TokensBefore), commas(cp.TokensAfter))
	}
	return end.Totals, s.Session, nil
}

// scriptedSession starts a session, at budget, on a workspace that workspace writes under dir,
// with the real genai client against a fake Gemini playing script (implicit caching billed);
// the scripted user's refusals are told to approvals. closeAll ends the session and the server.
func scriptedSession(ctx context.Context, dir string, workspace func(string) error, script geminitest.Script, budget int, approvals io.Writer, subagents agent.SubagentSettings, tweaks ...func(*contextwin.Policy)) (s *runner.Live, closeAll func(), err error) {
	return scriptedSessionOn(ctx, geminitest.New(script), dir, workspace, budget, approvals, subagents, tweaks...)
}

// scriptedSessionOn is scriptedSession on the fake srv, which closeAll closes: the caller may read
// its requests before.
func scriptedSessionOn(ctx context.Context, srv *geminitest.Server, dir string, workspace func(string) error, budget int, approvals io.Writer, subagents agent.SubagentSettings, tweaks ...func(*contextwin.Policy)) (s *runner.Live, closeAll func(), err error) {
	client, err := gemini.New(ctx, gemini.Config{APIKey: "scripted", BaseURL: srv.URL(), BaseDelay: 10 * time.Millisecond})
	if err != nil {
		srv.Close()
		return nil, nil, err
	}
	// One client per model, on the same fake: a subagent's calls are served and billed as its
	// model's.
	models := func(ctx context.Context, name string) (agent.Model, int, error) {
		if name == client.Model() {
			return client, contextwin.DefaultInputTokenLimit, nil
		}
		other, err := gemini.New(ctx, gemini.Config{APIKey: "scripted", BaseURL: srv.URL(), Model: name, BaseDelay: 10 * time.Millisecond})
		return other, contextwin.DefaultInputTokenLimit, err
	}
	open := scripted{dir: dir, workspace: workspace, model: client.Model(), models: models, budget: budget, approvals: approvals, subagents: subagents}
	return open.session(ctx, srv.Close, tweaks...)
}

// scripted is a scripted session's setting: its workspace, its model and the factory of the
// models it calls (a fake's clients), its budget, and who is told of the scripted user's
// refusals.
type scripted struct {
	dir       string
	workspace func(string) error
	model     string
	models    func(context.Context, string) (agent.Model, int, error)
	budget    int
	approvals io.Writer
	subagents agent.SubagentSettings
}

// session opens the session; closeServer is called when it ends, or at once if it cannot open.
func (o scripted) session(ctx context.Context, closeServer func(), tweaks ...func(*contextwin.Policy)) (*runner.Live, func(), error) {
	ws := filepath.Join(o.dir, "workspace")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		closeServer()
		return nil, nil, err
	}
	if err := o.workspace(ws); err != nil {
		closeServer()
		return nil, nil, err
	}
	policy := contextwin.DefaultPolicy()
	policy.ContextBudget = o.budget
	for _, t := range tweaks {
		t(&policy)
	}
	h := &runner.Runner{StateHome: filepath.Join(o.dir, "session"), Now: timeNow, Models: o.models}
	s, err := h.Open(ctx, runner.Spec{
		Config:    agent.Config{ContextPolicy: policy, Approver: scriptedUser{out: o.approvals}, Stream: true, Subagents: o.subagents},
		Workspace: ws, Model: o.model,
		// Every run has a workspace of its own, always the same bundled code: one build cache
		// for all of them, so that only the first run compiles cold.
		Sandbox: sandbox.Config{Cache: sandbox.WorkspaceCache(os.Getenv, "scripted-demo")},
	})
	if err != nil {
		closeServer()
		return nil, nil, err
	}
	return s, func() {
		// The demo's log is a temporary directory's, removed with it.
		_ = h.Close(context.WithoutCancel(ctx), s.ID())
		closeServer()
	}, nil
}

// scriptedUser stands for the user in the demo: it refuses what the policy does not allow, as a
// cautious user would refuse an unexpected command.
type scriptedUser struct{ out io.Writer }

func (u scriptedUser) Approve(_ context.Context, req tools.ApprovalRequest) (tools.Decision, error) {
	fmt.Fprintf(u.out, "%6s↳ approval asked for %s: the demo's user says no\n", "", shownCommand(req.Command))
	return tools.Reject, nil
}

func saving(with, without int) string {
	if with >= without {
		return fmt.Sprintf("compaction cost %s more on this run", commas(with-without))
	}
	return fmt.Sprintf("%.0f %% saved", 100*float64(without-with)/float64(without))
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}

// costRatio says how the compacted run's cost compares with the plain one's.
func costRatio(with, without float64) string {
	if without <= 0 {
		return "no cost to compare"
	}
	r := with / without
	if r <= 1 {
		return fmt.Sprintf("%.0f %% saved", (1-r)*100)
	}
	return fmt.Sprintf("compaction costs %.2f× as much", r)
}

// summarized tells whether a checkpoint is a summary (not a clearing).
func summarized(cps []contextwin.Checkpoint) bool {
	for _, cp := range cps {
		if cp.Cleared == 0 {
			return true
		}
	}
	return false
}
