package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/agent/runner"
	"github.com/reprise-dev/reprise/cmd/reprise/scenarios"
	"github.com/reprise-dev/reprise/contextwin"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// noCompaction is the budget of a run that never compacts: far above any scenario's prompt.
const noCompaction = 1_000_000

// scenarioRun is what one scripted session cost.
type scenarioRun struct {
	Budget      int // noCompaction: the run without compaction
	Stop        agent.StopReason
	Calls       int   // the agent's model calls
	Summaries   int   // summarizer calls
	Compactions int   // checkpoints: summaries and clearings
	Clearings   int   // checkpoints that cleared old tool results
	MaxPrompt   int   // the largest prompt the agent sent
	Prompts     []int // each of the agent's prompts, in order
	Totals      contextwin.Totals
	// Requests are what the fake received: the true mark (markRun) replays those of the run
	// without compaction.
	Requests []geminitest.Request
}

// halfMissed is implicit caching at its unluckiest in the field: half of the requests that would
// hit report no cached tokens, the same ones on every run (the seed).
var halfMissed = geminitest.Cache{MissRate: 0.5, Seed: 1}

// playScenario runs sc once at budget in a fresh workspace under dir, against a fake Gemini that
// bills implicit caching as the API does. summaryDelay holds every summary back that long, so
// that a background compaction ends later in the session.
func playScenario(ctx context.Context, sc scenarios.Scenario, budget int, dir string, summaryDelay time.Duration, tweaks ...func(*contextwin.Policy)) (scenarioRun, error) {
	return playScenarioLuck(ctx, sc, budget, dir, summaryDelay, geminitest.Cache{}, tweaks...)
}

// playScenarioLuck is playScenario with the fake's implicit caching missing as luck says: luck's
// miss rate, seed, dead zone and implicit hits over an explicit cache, over the scenario's own cache settings.
func playScenarioLuck(ctx context.Context, sc scenarios.Scenario, budget int, dir string, summaryDelay time.Duration, luck geminitest.Cache, tweaks ...func(*contextwin.Policy)) (scenarioRun, error) {
	script := sc.Script()
	script.Cache.MissRate, script.Cache.Seed, script.Cache.DeadZone, script.Cache.OverExplicit = luck.MissRate, luck.Seed, luck.DeadZone, luck.OverExplicit
	if summaryDelay > 0 {
		for i := range script.Turns {
			if script.Turns[i].Match != "" {
				script.Turns[i].Delay = summaryDelay.String()
			}
		}
	}
	srv := geminitest.New(script)
	s, closeAll, err := scriptedSessionOn(ctx, srv, dir, sc.Workspace, budget, io.Discard, sc.Subagents, runTweaks(budget, tweaks)...)
	if err != nil {
		return scenarioRun{}, err
	}
	defer closeAll()
	run, err := playSession(ctx, sc, s, budget)
	run.Requests = srv.Requests()
	return run, err
}

// runTweaks are the policy's tweaks for a run at budget: for the run without compaction, old tool
// results are kept whatever the budget, and the session cap, which the longest scenario reaches
// uncompacted, would cut short the run everything is measured against.
func runTweaks(budget int, tweaks []func(*contextwin.Policy)) []func(*contextwin.Policy) {
	if budget != noCompaction {
		return tweaks
	}
	return append([]func(*contextwin.Policy){func(p *contextwin.Policy) { p.KeepToolResults, p.SessionTokenCap = true, 1<<30 }}, tweaks...)
}

// playSession runs sc's task in s and counts what it cost.
func playSession(ctx context.Context, sc scenarios.Scenario, s *runner.Live, budget int) (scenarioRun, error) {
	run := scenarioRun{Budget: budget}
	for i, ask := range append([]string{sc.Task}, sc.FollowUps...) {
		run.Stop = ""
		for ev, err := range s.Run(ctx, ask) {
			switch {
			case err != nil:
				return run, fmt.Errorf("%s at %d: %w", sc.Name, budget, err)
			case ev.Type == agent.EventModelCall:
				run.Calls++
				run.MaxPrompt = max(run.MaxPrompt, ev.Call.Prompt)
				run.Prompts = append(run.Prompts, ev.Call.Prompt)
			case ev.Type == agent.EventTurnEnd:
				run.Stop = ev.End.StopReason
				run.Totals = ev.End.Totals
			}
		}
		if run.Stop != agent.StopEndTurn && i < len(sc.FollowUps) {
			break // a turn that did not end normally ends the session
		}
	}
	run.Compactions = len(s.Conversation().Checkpoints())
	for _, cp := range s.Conversation().Checkpoints() {
		if cp.Cleared > 0 {
			run.Clearings++
		}
	}
	run.Summaries = run.Totals.Calls - run.Calls - run.Totals.Subagents.Calls
	if run.Stop == "" {
		return run, errors.New("the turn did not end")
	}
	return run, nil
}

// costTable plays every scenario at each of its budgets and without compaction, and prints what
// each run cost, the prefix cache included; then again with half of the implicit hits missed
// (halfMissed), and prints that run's cost, its cached share of the billed input and its ratio
// to the run where every hit lands.
func costTable(ctx context.Context, w io.Writer) error {
	dir, err := os.MkdirTemp("", "reprise-cost-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\tbudget, tiers\tstop\tcalls\tsummaries\tclearings\tmax prompt\tbilled input\tcached\toutput\tcost\tvs none\thalf the implicit hits missed\t")
	summariesOnly := func(p *contextwin.Policy) { p.KeepToolResults = true }
	clearingOnly := func(p *contextwin.Policy) { p.NoSummaries = true }
	var best []string
	for _, sc := range scenarios.All() {
		var base scenarioRun
		row := func(label string, r scenarioRun, missed string) {
			ratio := fmt.Sprintf("%.2f×", r.Totals.Cost/base.Totals.Cost)
			if label == "none" {
				ratio = ""
			}
			stop := string(r.Stop)
			if r.Budget != noCompaction && r.MaxPrompt > r.Budget {
				stop += " (over budget)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t$%.4f\t%s\t%s\t\n", sc.Name, label, stop, r.Calls, r.Summaries, r.Clearings,
				commas(r.MaxPrompt), commas(r.Totals.InputTokens), commas(r.Totals.CachedTokens), commas(r.Totals.OutputTokens), r.Totals.Cost, ratio, missed)
		}
		for i, budget := range append([]int{noCompaction}, sc.Budgets...) {
			r, err := playScenario(ctx, sc, budget, filepath.Join(dir, fmt.Sprintf("%s-%d", sc.Name, i)), 0)
			if err != nil {
				return err
			}
			missed, err := playScenarioLuck(ctx, sc, budget, filepath.Join(dir, fmt.Sprintf("%s-%d-missed", sc.Name, i)), 0, halfMissed)
			if err != nil {
				return err
			}
			if i == 0 {
				base = r
				row("none", r, missedCell(missed, r))
				line, err := markLine(sc.Name, r)
				if err != nil {
					return err
				}
				best = append(best, line)
				continue
			}
			only, err := playScenario(ctx, sc, budget, filepath.Join(dir, fmt.Sprintf("%s-%d-summaries", sc.Name, i)), 0, summariesOnly)
			if err != nil {
				return err
			}
			row(commas(budget)+" summaries", only, "")
			clearing, err := playScenario(ctx, sc, budget, filepath.Join(dir, fmt.Sprintf("%s-%d-clearing", sc.Name, i)), 0, clearingOnly)
			if err != nil {
				return err
			}
			row(commas(budget)+" clearing", clearing, "")
			row(commas(budget)+" both", r, missedCell(missed, r))
			if sc.Name == "investigation" && budget == contextwin.DefaultPolicy().ContextBudget {
				// With both tiers this run clears and never summarizes: Flex is measured on the
				// summaries-only run, against it.
				flex, err := playScenario(ctx, sc, budget, filepath.Join(dir, fmt.Sprintf("%s-%d-flex", sc.Name, i)), 0, summariesOnly, onFlex)
				if err != nil {
					return err
				}
				row(commas(budget)+" summaries, Flex", flex, flexCell(flex, only))
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nThe cheapest schedule of clearings, each leaving the prompt at the cache minimum and billed in full\n"+
		"(under the minimum every call is billed in full; above it every call costs more), against the same\n"+
		"session uncompacted; then the true mark: the cheapest schedule of clearings under the policy's keep\n"+
		"rules, on the uncompacted run's requests, stubs included, cached up to the first changed character:")
	fmt.Fprintln(w, strings.Join(best, "\n"))
	return deadZoneTable(ctx, w, dir)
}

// markLine is the cost table's line for the marks of the uncompacted run r: the simplified one
// (bestSchedule) and the true one (markRun), against r.
func markLine(name string, r scenarioRun) (string, error) {
	ideal, err := idealCost(r)
	if err != nil {
		return "", err
	}
	truth, err := trueMark(r)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("  %s: $%.4f, %.2f×; the true mark $%.4f, %.2f× (%d clearings)", name, ideal, ideal/r.Totals.Cost,
		truth.Cost, truth.Cost/r.Totals.Cost, len(truth.Clearings)), nil
}

// deadZone is implicit caching as reported of 3.x Flash models: no hit for a prompt of about
// 9,000 to 17,000 tokens (googleapis/python-genai#2064), every other hit landing.
var deadZone = geminitest.Cache{DeadZone: &geminitest.Zone{From: 9_000, To: 17_000}}

// deadZoneRun is one run of the investigation in the dead zone: its budget, explicit caching on
// or off, and its ratio to the run at the same budget where every hit lands.
type deadZoneRun struct {
	scenarioRun
	Explicit bool
	Ratio    float64
}

// playDeadZone plays sc without compaction and at the default budget, in the dead zone, with
// and without explicit caching, each against the run where every implicit hit lands.
func playDeadZone(ctx context.Context, sc scenarios.Scenario, dir string) ([]deadZoneRun, error) {
	explicit := func(p *contextwin.Policy) { p.ExplicitCache = true }
	var out []deadZoneRun
	for _, budget := range []int{noCompaction, contextwin.DefaultPolicy().ContextBudget} {
		// Names of one length: the workspace's path is in the prompt, and a prompt a token longer
		// can cross the zone's edge.
		lucky, err := playScenario(ctx, sc, budget, filepath.Join(dir, fmt.Sprintf("dz-%d-l", budget)), 0)
		if err != nil {
			return nil, err
		}
		for _, on := range []bool{false, true} {
			var tweaks []func(*contextwin.Policy)
			if on {
				tweaks = append(tweaks, explicit)
			}
			r, err := playScenarioLuck(ctx, sc, budget, filepath.Join(dir, fmt.Sprintf("dz-%d-%d", budget, len(tweaks))), 0, deadZone, tweaks...)
			if err != nil {
				return nil, err
			}
			out = append(out, deadZoneRun{scenarioRun: r, Explicit: on, Ratio: r.Totals.Cost / lucky.Totals.Cost})
		}
	}
	return out, nil
}

// deadZoneTable prints the dead-zone runs of the investigation: what each cost, its cached share,
// what explicit caches wrote, and its ratio to every hit landing.
func deadZoneTable(ctx context.Context, w io.Writer, dir string) error {
	var sc scenarios.Scenario
	for _, s := range scenarios.All() {
		if s.Name == "investigation" {
			sc = s
		}
	}
	runs, err := playDeadZone(ctx, sc, dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nThe investigation in the dead zone (no implicit hit for prompts of %s to %s tokens, every other hit landing):\n",
		commas(deadZone.DeadZone.From), commas(deadZone.DeadZone.To))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "budget\texplicit cache\tstop\tcalls\tmax prompt\tbilled input\tcached\twritten to caches\tcost\tvs every hit\t")
	for _, r := range runs {
		budget := "none"
		if r.Budget != noCompaction {
			budget = commas(r.Budget)
		}
		t := r.Totals
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s (%.0f %%)\t%s\t$%.4f\t%.2f×\t\n", budget, onOff(r.Explicit), r.Stop, r.Calls, commas(r.MaxPrompt),
			commas(t.InputTokens), commas(t.CachedTokens), 100*float64(t.CachedTokens)/float64(max(t.InputTokens, 1)), commas(t.CacheWriteTokens), t.Cost, r.Ratio)
	}
	return tw.Flush()
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// onFlex asks Flex for background summaries (compactionTier flex). The fake answers them at once,
// so the row measures Flex's price, not its minutes of latency.
func onFlex(p *contextwin.Policy) { p.CompactionTier = catalog.TierFlex }

// flexCell compares the summaries of a run on Flex with those of the same run on the standard
// tier: their cost, their cached share, how many Flex served.
func flexCell(flex, standard scenarioRun) string {
	f, s := flex.Totals.Summaries, standard.Totals.Summaries
	return fmt.Sprintf("summaries $%.4f (%d of %d on Flex, %d %% cached) vs $%.4f standard (%d %% cached)",
		f.Cost, f.Flex, f.Calls, percent(f.CachedTokens, f.InputTokens), s.Cost, percent(s.CachedTokens, s.InputTokens))
}

// missedCell is the "half the implicit hits missed" cell: the run's cost, its cached share of
// the billed input, and its cost against the run where every hit lands (lucky).
func missedCell(missed, lucky scenarioRun) string {
	t := missed.Totals
	share := 0.0
	if t.InputTokens > 0 {
		share = float64(t.CachedTokens) / float64(t.InputTokens)
	}
	return fmt.Sprintf("$%.4f · %.0f %% cached · %.2f×", t.Cost, 100*share, t.Cost/lucky.Totals.Cost)
}
