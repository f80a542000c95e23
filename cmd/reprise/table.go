package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/contextwin"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// table prints a run as the harness lesson does: one row per model call (its number in the turn,
// prompt, output, tool), notes for compactions, truncations and refusals, then the closing status line.
type table struct {
	w       io.Writer
	verbose bool
	row     *agent.CallRecord // printed once its tools have run, to show their outcome
	notes   []string
	after   []string // lines printed under the row
	text    strings.Builder
	answer  string
	end     *agent.TurnEnd
}

func newTable(w io.Writer, verbose bool) *table {
	fmt.Fprintf(w, "%4s  %6s  %6s  %6s  %-13s\n", "call", "prompt", "cached", "output", "tool")
	return &table{w: w, verbose: verbose}
}

func (t *table) handle(ev agent.Event) {
	switch ev.Type {
	case agent.EventText:
		t.text.WriteString(ev.Text)
	case agent.EventRetry:
		if ev.Retry.Discard {
			t.text.Reset()
		}
		// One line per failed attempt: the retry after attempt N is number N+1.
		t.after = append(t.after, fmt.Sprintf("attempt %d failed: %s; retrying in %s", ev.Retry.Attempt-1,
			shortError(ev.Retry.Err), ev.Retry.Delay.Round(100*time.Millisecond)))
	case agent.EventModelCall:
		t.flush()
		t.row = ev.Call
		if s := strings.TrimSpace(t.text.String()); s != "" {
			t.answer = s
			if t.verbose && ev.Call.Tool != "" {
				t.after = append(t.after, "says: "+firstLine(s))
			}
		}
		t.text.Reset()
	case agent.EventToolUpdate:
		if ev.Tool.Live == nil { // a running command's output so far is for editors
			t.tool(ev.Tool)
		}
	case agent.EventCompaction:
		t.compaction(ev.Compaction)
	case agent.EventWarning:
		t.after = append(t.after, "warning: "+ev.Text)
	case agent.EventPlan:
		t.after = append(t.after, planLine(ev.Plan))
	case agent.EventSubagent:
		if line := subagentLine(ev.Subagent, t.verbose); line != "" {
			t.after = append(t.after, line)
		}
	case agent.EventTurnEnd:
		t.flush()
		t.end = ev.End
	}
}

// subagentLine is a subagent's end as a line under the row of its task call, with its own
// figures (in the session's too) and the session its transcript is; with verbose, its start and
// each tool it runs too. "" for what is not shown.
func subagentLine(e *agent.SubagentEvent, verbose bool) string {
	switch {
	case e.Status == "running" && !verbose:
		return ""
	case e.Status == "running" && e.Tool != "":
		return fmt.Sprintf("subagent «%s» → %s", e.Description, e.Tool)
	case e.Status == "running" && e.Calls == 0:
		return fmt.Sprintf("subagent «%s» started on %s", e.Description, e.Model)
	case e.Status == "running":
		return ""
	}
	line := fmt.Sprintf("subagent «%s» %s · %s · %s · %s input (%s cached) · %s", e.Description, e.Status, e.Model, count(e.Calls, "model call"),
		commas(e.Totals.InputTokens), commas(e.Totals.CachedTokens), e.Totals.CostText())
	if e.Saved != "" {
		line += " · transcript: reprise sessions show " + e.ID
	}
	return line
}

// planLine is a change of the agent's plan as one line under its row: how far it is, and the
// item in progress.
func planLine(todos []contextwin.Todo) string {
	done, now := 0, ""
	for _, td := range todos {
		switch td.Status {
		case contextwin.TodoCompleted:
			done++
		case contextwin.TodoInProgress:
			now = td.Description
		}
	}
	line := fmt.Sprintf("plan: %d/%d completed", done, len(todos))
	if now != "" {
		line += ", now: " + now
	}
	return line
}

// tool annotates the current row with a tool's outcome.
func (t *table) tool(te *agent.ToolEvent) {
	if t.row == nil {
		return
	}
	if te.Name == "run_command" {
		cmd, _ := te.Args["command"].(string)
		switch v, ok := contextwin.ExtractVerdict(te.Output); {
		case te.Refused:
			t.notes = append(t.notes, fmt.Sprintf("(%s, refused)", cmd))
		case ok:
			t.notes = append(t.notes, fmt.Sprintf("(%s: %s)", cmd, strings.Join(strings.Fields(v), " ")))
		default:
			t.notes = append(t.notes, fmt.Sprintf("(%s)", cmd))
		}
	} else if te.Status == agent.ToolFailed {
		t.notes = append(t.notes, "(failed: "+firstLine(te.Output)+")")
	}
	if te.Omitted > 0 || te.SavedPath != "" {
		line := fmt.Sprintf("%s: %s characters omitted from the middle (40 %% head, 60 %% tail kept)", te.Title, commas(te.Omitted))
		if te.SavedPath != "" {
			line += "; whole output saved to " + te.SavedPath
		}
		t.after = append(t.after, line)
	}
	if t.verbose {
		t.after = append(t.after, fmt.Sprintf("%s → %s", te.Title, firstLine(te.Output)))
	}
}

func (t *table) compaction(c *agent.CompactionEvent) {
	switch c.State {
	case agent.CompactionDone:
		cp := c.Checkpoint
		line := fmt.Sprintf("checkpoint %d «%s»: %d messages summarized, %s → %s tokens", cp.N, cp.Title, cp.Replaced, commas(cp.TokensBefore), commas(cp.TokensAfter))
		if cp.Cleared > 0 {
			line = fmt.Sprintf("checkpoint %d: %d old tool results cleared, no model call, %s → %s tokens; the model reads them again on demand",
				cp.N, cp.Cleared, commas(cp.TokensBefore), commas(cp.TokensAfter))
		}
		if cp.Fallback != "" {
			line += " (deterministic summary: " + cp.Fallback + ")"
		}
		t.after = append(t.after, line)
	case agent.CompactionRunning:
		if c.Note != "" {
			t.notes = append(t.notes, c.Note)
		}
	case agent.CompactionBlocking:
		t.after = append(t.after, "context at blockAt: waiting for the compaction")
	case agent.CompactionSkipped:
		t.after = append(t.after, "compaction skipped: no older turns to summarize")
	}
}

// flush prints the pending row and the lines under it.
func (t *table) flush() {
	if t.row != nil {
		tool := t.row.Tool
		if tool == "" {
			tool = "—"
			t.notes = append([]string{"final report"}, t.notes...)
		}
		fmt.Fprintf(t.w, "%4d  %6d  %6d  %6d  %-13s  %s\n", t.row.Turn, t.row.Prompt, t.row.Cached, t.row.Output, tool, strings.Join(t.notes, "  "))
	}
	for _, l := range t.after {
		fmt.Fprintf(t.w, "%6s↳ %s\n", "", wrap(l, noteWidth, "        "))
	}
	t.row, t.notes, t.after = nil, nil, nil
}

// status is the closing line:
// status completed · 13 model calls · 46,704 input tokens (39,066 cached) · 520 output · $0.0048.
// The cached figure is always shown, 0 included: it is what explains the cost.
// Once a call expected cached tokens, the line ends with how many of them the API reported:
// "· cache: 58 % of the expected hits".
func status(end *agent.TurnEnd) string {
	word := map[agent.StopReason]string{
		agent.StopEndTurn:         "completed",
		agent.StopCancelled:       "cancelled",
		agent.StopCapped:          "capped",
		agent.StopError:           "error",
		agent.StopMaxTurnRequests: "stopped (model-call limit)",
		agent.StopCompactionLimit: "stopped (compaction limit)",
	}[end.StopReason]
	output := commas(end.Totals.OutputTokens) + " output"
	if th := end.Totals.ThoughtTokens; th > 0 {
		output += fmt.Sprintf(" (%s thinking)", commas(th))
	}
	line := fmt.Sprintf("status %s · %s · %s input tokens (%s cached) · %s · %s",
		word, count(end.Calls, "model call"), commas(end.Totals.InputTokens), commas(end.Totals.CachedTokens), output, end.Totals.CostText())
	var of []string
	for _, s := range []string{end.Totals.Summaries.Text(), end.Totals.Subagents.Text()} {
		if s != "" {
			of = append(of, s)
		}
	}
	if len(of) > 0 {
		line += " · of which " + strings.Join(of, ", ")
	}
	if c := end.Totals.CacheText(); c != "" {
		line += " · " + c
	}
	return line
}

// commas writes n with thousands separators: 46,704.
var commas = catalog.Commas

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if r := []rune(s); len(r) > 100 {
		s = string(r[:99]) + "…"
	}
	return s
}

// noteWidth is where a note under a row wraps: a warning is read, not scrolled sideways.
const noteWidth = 92

// wrap breaks s at spaces into lines of at most width runes, the lines after the first starting
// with indent. A word longer than width (a path) stays whole.
func wrap(s string, width int, indent string) string {
	var b strings.Builder
	n := 0
	for i, w := range strings.Fields(s) {
		l := len([]rune(w))
		switch {
		case i == 0:
		case n+1+l > width:
			b.WriteString("\n" + indent)
			n = 0
		default:
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += l
	}
	return b.String()
}
