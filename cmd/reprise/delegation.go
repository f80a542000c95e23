package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/reprise-dev/reprise/cmd/reprise/scenarios"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// delegationTable plays the delegation pair (scenarios.Delegation) at the default budget and
// prints, for each, the main context's calls and peak, the subagent's calls, and what the whole
// task was billed: input with its cached share, output, dollars.
func delegationTable(ctx context.Context, w io.Writer) error {
	dir, err := os.MkdirTemp("", "reprise-delegation-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cat := catalog.Builtin()
	model := cat.DefaultModel()
	sub, _ := cat.SubagentModel()
	inline, delegated, same := scenarios.Delegation(model)
	all := []scenarios.Scenario{inline, delegated, same}
	runs := make([]scenarioRun, len(all))
	for i, sc := range all {
		if runs[i], err = playScenario(ctx, sc, sc.Budgets[0], filepath.Join(dir, fmt.Sprint(i)), 0); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "\nDelegation: %s, at the default budget (%s tokens); the main context on %s, the subagent on %s, at their prices of %s with the %s-token cache minimum:\n",
		"a task that reads 36 files once before a one-line edit", commas(inline.Budgets[0]), model, sub, timeNow().Format(time.DateOnly), commas(cat.CacheMin(model)))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tmain calls\tmain peak\tsubagent calls\tbilled input\tcached\toutput\tcost\t")
	for i, sc := range all {
		r, t := runs[i], runs[i].Totals
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%s\t%d %%\t%s\t$%.4f\t\n", sc.Name, r.Calls, commas(r.MaxPrompt), t.Subagents.Calls,
			commas(t.InputTokens), percent(t.CachedTokens, t.InputTokens), commas(t.OutputTokens), t.Cost)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	a, b, c := runs[0], runs[1], runs[2]
	fmt.Fprintf(w, "With the subagent the main context peaks at %s tokens instead of %s (%.2f×), and the task costs %.2f× as much;\n",
		commas(b.MaxPrompt), commas(a.MaxPrompt), float64(b.MaxPrompt)/float64(a.MaxPrompt), b.Totals.Cost/a.Totals.Cost)
	if r := c.Totals.Cost / a.Totals.Cost; r >= 1 {
		fmt.Fprintf(w, "on the session's own model it costs %.2f× as much: the saving comes from %s's lower prices, not from the smaller context.\n", r, sub)
	} else {
		fmt.Fprintf(w, "on the session's own model, %.2f× as much: %s's lower prices make the rest of the saving.\n", r, sub)
	}
	fmt.Fprintln(w, "A subagent starts with none of the main context: what the session has already read, it reads again and pays")
	fmt.Fprintln(w, "for again; here the session had read nothing before it, which is where delegating pays most.")
	return nil
}
