package contextwin

import (
	"encoding/json"
	"fmt"
	"strings"

	"google.golang.org/genai"
)

// Headings the summary must have: a free summary loses exactly what the agent needs, such as
// file paths.
var Headings = []string{
	"Objective",
	"Files read and what mattered",
	"Modifications made",
	"Last tests",
	"Hypotheses ruled out",
	"Remaining work",
}

// SummaryInstruction is the summarizer's system instruction.
const SummaryInstruction = "You compact the history of a coding agent's session into a structured summary that the agent will continue from. You never call tools."

// SummaryPrompt asks for a summary of transcript, merging a previous summary and honouring the
// user's focus.
func SummaryPrompt(transcript, previous, focus string) string {
	var b strings.Builder
	b.WriteString("Summarize the conversation below so that a coding agent can continue the task without it.\n")
	b.WriteString("Use exactly these headings, in this order, as bold lines:\n")
	for _, h := range Headings {
		fmt.Fprintf(&b, "**%s:**\n", h)
	}
	b.WriteString("Rules: keep exact identifiers, file paths, function names, commands, error strings and numbers; ")
	b.WriteString("say \"none\" under a heading with nothing to report; no preamble, no closing remarks; be brief.\n")
	if previous != "" {
		b.WriteString("\nA previous summary covers what came before this conversation. Merge it: keep what is still true, drop what the conversation made obsolete.\n<previous-summary>\n")
		b.WriteString(previous)
		b.WriteString("\n</previous-summary>\n")
	}
	if focus != "" {
		b.WriteString("\nThe user asks the summary to keep in particular: " + focus + "\n")
	}
	b.WriteString("\n<conversation>\n")
	b.WriteString(transcript)
	b.WriteString("</conversation>\n")
	return b.String()
}

// RenderMessage renders one message for the summarizer: text as is, calls with their arguments,
// tool outputs cut to ToolOutputInSummary characters (head and tail), thoughts left out.
func RenderMessage(c *genai.Content) string {
	if c == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range c.Parts {
		switch {
		case p.Thought:
			continue
		case p.FunctionCall != nil:
			args, _ := json.Marshal(p.FunctionCall.Args)
			fmt.Fprintf(&b, "[model calls %s %s]\n", p.FunctionCall.Name, args)
		case p.FunctionResponse != nil:
			out, _ := Truncate(responseText(p.FunctionResponse), ToolOutputInSummary)
			fmt.Fprintf(&b, "[%s result]\n%s\n", p.FunctionResponse.Name, out)
		case p.Text != "":
			fmt.Fprintf(&b, "[%s]\n%s\n", c.Role, p.Text)
		}
	}
	return b.String()
}

// responseText extracts the output a tool returned: the "output" or "error" field the agent sets,
// else the whole response as JSON.
func responseText(fr *genai.FunctionResponse) string {
	for _, k := range []string{"output", "error"} {
		if s, ok := fr.Response[k].(string); ok {
			return s
		}
	}
	b, _ := json.Marshal(fr.Response)
	return string(b)
}

// Deterministic builds a summary without the model: the task, the ledger of tool calls with
// their outcome, and the harness state. It is what a failed summarizer leaves; exact, if terse.
func Deterministic(req Request, old []*genai.Content) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**Objective:**\n%s\n", firstLine(req.Task))
	b.WriteString("**Files read and what mattered:**\n")
	b.WriteString(ledger(old, func(name string) bool { return name == "read_file" || name == "search" || name == "list_files" }))
	b.WriteString("**Modifications made:**\n")
	b.WriteString(orNone(strings.Join(req.State.FilesModified, ", ")) + "\n")
	b.WriteString("**Last tests:**\n" + orNone(req.State.LastVerdict) + "\n")
	b.WriteString("**Hypotheses ruled out:**\nnone recorded (summary built by the harness without the model)\n")
	b.WriteString("**Remaining work:**\ncontinue the objective; the commands run so far:\n")
	b.WriteString(ledger(old, func(name string) bool { return name == "run_command" || name == "edit_file" || name == "write_file" }))
	if req.PreviousSummary != "" {
		b.WriteString("\nEarlier summary:\n" + req.PreviousSummary + "\n")
	}
	return b.String()
}

// ledger lists the calls in old whose tool keep accepts, with the first line of their outcome.
func ledger(old []*genai.Content, keep func(string) bool) string {
	var b strings.Builder
	calls := map[string]*genai.FunctionCall{}
	n := 0
	for _, c := range old {
		for _, p := range c.Parts {
			if fc := p.FunctionCall; fc != nil {
				calls[CallKey(fc.ID, fc.Name)] = fc
			}
			fr := p.FunctionResponse
			if fr == nil || !keep(fr.Name) {
				continue
			}
			label := fr.Name
			if fc := calls[CallKey(fr.ID, fr.Name)]; fc != nil {
				_, label = describeCall(fc)
			}
			out := strings.TrimSpace(responseText(fr))
			if v, ok := ExtractVerdict(out); ok {
				out = v
			} else {
				out = firstLine(out)
			}
			out, _ = Truncate(out, 160)
			n++
			fmt.Fprintf(&b, "- %s → %s\n", label, out)
		}
	}
	if n == 0 {
		return "none\n"
	}
	return b.String()
}

// Title is a checkpoint's title: the first line under the summary's objective.
func Title(summary string) string {
	lines := strings.Split(summary, "\n")
	for i, l := range lines {
		l = strings.TrimSpace(l)
		low := strings.ToLower(strings.Trim(l, "*#: "))
		if !strings.HasPrefix(low, "objective") {
			continue
		}
		if rest := strings.TrimSpace(strings.Trim(l[strings.Index(strings.ToLower(l), "objective")+len("objective"):], "*: ")); rest != "" {
			return clip(rest, 60)
		}
		for _, next := range lines[i+1:] {
			if t := strings.TrimSpace(strings.TrimLeft(next, "-*• ")); t != "" {
				return clip(t, 60)
			}
		}
	}
	return clip(firstLine(summary), 60)
}

func clip(s string, n int) string {
	r := []rune(strings.TrimSpace(s))
	if len(r) <= n {
		return string(r)
	}
	return strings.TrimSpace(string(r[:n-1])) + "…"
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func orNone(s string) string {
	if strings.TrimSpace(s) == "" {
		return "none"
	}
	return s
}
