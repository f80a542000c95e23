package export

import (
	"fmt"
	"html"
	"strings"

	"github.com/reprise-dev/reprise/contextwin"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// Figures says what t billed, as one line: calls, input with its cached share, output, dollars.
func Figures(t contextwin.Totals) string {
	share := ""
	if t.CachedTokens > 0 && t.InputTokens > 0 {
		share = fmt.Sprintf(", %d %%", (100*t.CachedTokens+t.InputTokens/2)/t.InputTokens)
	}
	return fmt.Sprintf("%s · %s input tokens (%s cached%s) · %s output · %s",
		count(t.Calls, "model call"), catalog.Commas(t.InputTokens), catalog.Commas(t.CachedTokens), share,
		catalog.Commas(t.OutputTokens), t.CostText())
}

func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// origin says where a fork comes from, or which session ran a subagent, or "".
func (d Doc) origin() string {
	switch {
	case d.Parent == "":
		return ""
	case d.Subagent != "":
		return fmt.Sprintf("subagent of session %s: «%s»", d.Parent, d.Subagent)
	}
	return fmt.Sprintf("forked from session %s at %s", d.Parent, d.From)
}

// checkpointLine says what a compaction or clearing did.
func checkpointLine(cp *contextwin.Checkpoint) string {
	if cp.Cleared > 0 {
		return fmt.Sprintf("Checkpoint %d: %s old tool results cleared, %s → %s tokens, with no model call",
			cp.N, catalog.Commas(cp.Cleared), catalog.Commas(cp.TokensBefore), catalog.Commas(cp.TokensAfter))
	}
	return fmt.Sprintf("Checkpoint %d «%s» (%s): %s messages summarized, %s → %s tokens",
		cp.N, cp.Title, cp.Trigger, catalog.Commas(cp.Replaced), catalog.Commas(cp.TokensBefore), catalog.Commas(cp.TokensAfter))
}

// stopLine says how a turn ended, when not plainly.
func stopLine(t Turn) string {
	switch t.Stop {
	case "end_turn":
		return ""
	case "":
		return "The turn was interrupted."
	}
	if t.Error != "" {
		return fmt.Sprintf("The turn ended: %s (%s).", t.Stop, t.Error)
	}
	return fmt.Sprintf("The turn ended: %s.", t.Stop)
}

var planMark = map[string]string{contextwin.TodoPending: "[ ]", contextwin.TodoInProgress: "[>]", contextwin.TodoCompleted: "[x]", contextwin.TodoCancelled: "[-]"}

// toolHead names a call, and what became of it.
func toolHead(t *Tool) string {
	state := ""
	switch {
	case t.Refused:
		state = " — refused"
	case t.Error:
		state = " — failed"
	case !t.answered:
		state = " — no result"
	}
	return fmt.Sprintf("%s %s%s", t.Name, t.Args, state)
}

// outputNote says what of a tool's output the model did not get, and where the whole is.
func outputNote(t *Tool) string {
	var parts []string
	if t.Omitted > 0 {
		parts = append(parts, catalog.Commas(t.Omitted)+" characters omitted")
	}
	if t.SavedPath != "" {
		parts = append(parts, "whole output saved to "+t.SavedPath)
	}
	return strings.Join(parts, "; ")
}

// Markdown writes d as Markdown.
func Markdown(d Doc) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", oneLine(d.Title, "(untitled)"))
	fmt.Fprintf(&b, "Session `%s` · %s · %s · started %s", d.ID, d.Model, d.Workspace, d.Created.Local().Format("2006-01-02 15:04"))
	if o := d.origin(); o != "" {
		b.WriteString(" · " + o)
	}
	fmt.Fprintf(&b, "\n\n**Total:** %s\n", Figures(d.Totals))
	for _, s := range d.Before {
		mdStep(&b, s)
	}
	for _, t := range d.Turns {
		fmt.Fprintf(&b, "\n## Turn %d\n\n*%s*\n", t.N, Figures(t.Totals))
		for _, s := range t.Steps {
			mdStep(&b, s)
		}
		if l := stopLine(t); l != "" {
			fmt.Fprintf(&b, "\n*%s*\n", l)
		}
	}
	return b.String()
}

func mdStep(b *strings.Builder, s Step) {
	switch s.Kind {
	case StepUser:
		fmt.Fprintf(b, "\n**You**\n\n%s\n", quote(s.Text))
	case StepAgent:
		fmt.Fprintf(b, "\n**Reprise**\n\n%s\n", strings.TrimSpace(s.Text))
	case StepNote:
		fmt.Fprintf(b, "\n*Harness note:*\n\n%s\n", quote(s.Text))
	case StepTool:
		t := s.Tool
		fmt.Fprintf(b, "\n**Tool** `%s`\n", strings.ReplaceAll(toolHead(t), "`", "'"))
		if t.answered {
			note := outputNote(t)
			if note != "" {
				note = " (" + note + ")"
			}
			fmt.Fprintf(b, "\n<details><summary>Output%s</summary>\n\n%s\n\n</details>\n", html.EscapeString(note), fence(t.Output))
		}
	case StepCompaction:
		if s.Checkpoint != nil {
			fmt.Fprintf(b, "\n---\n*%s*\n", checkpointLine(s.Checkpoint))
			if s.Checkpoint.Cleared == 0 && s.Checkpoint.Summary != "" {
				fmt.Fprintf(b, "\n<details><summary>Summary</summary>\n\n%s\n\n</details>\n", s.Checkpoint.Summary)
			}
			b.WriteString("\n---\n")
		} else {
			fmt.Fprintf(b, "\n*%s*\n", s.Text)
		}
	case StepPlan:
		b.WriteString("\n**Plan**\n\n")
		if len(s.Plan) == 0 {
			b.WriteString("(cleared)\n")
		}
		for _, t := range s.Plan {
			text := t.Description
			if t.Status == contextwin.TodoCancelled {
				text = "~~" + text + "~~"
			}
			fmt.Fprintf(b, "- %s %s\n", planMark[t.Status], text)
		}
	case StepRestore, StepFork:
		fmt.Fprintf(b, "\n*%s*\n", s.Text)
	}
}

// quote makes s a Markdown block quote.
func quote(s string) string {
	return "> " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n> ")
}

// fence puts s in a code block whose fence is longer than any run of backticks in it.
func fence(s string) string {
	f := contextwin.CodeFence(s)
	return f + "\n" + strings.TrimRight(s, "\n") + "\n" + f
}

func oneLine(s, empty string) string {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return empty
	}
	if r := []rune(s); len(r) > 100 {
		return string(r[:99]) + "…"
	}
	return s
}
