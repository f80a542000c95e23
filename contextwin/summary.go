package contextwin

import (
	"encoding/json"
	"fmt"
	"slices"
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

// SummaryMarker begins every summary request, in context or stand-alone, and nothing else the
// harness sends: scripted models recognise the summarizer's calls by it.
const SummaryMarker = "Summarize the conversation"

// SummaryInstruction is the summarizer's system instruction.
const SummaryInstruction = "You compact the history of a coding agent's session into a structured summary that the agent will continue from. You never call tools."

// InContextRequest is the summarizer's messages for a summary in context: prefix (the session's
// messages up to the split) unchanged, then the request, as a last part of prefix's last message
// when that is the user's (a function response, say), so that roles still alternate and every
// byte of prefix is one the provider has seen. afterSummaries says the head already holds
// summaries; merge asks for one summary that replaces them too.
func InContextRequest(prefix []*genai.Content, afterSummaries, merge bool, focus string) []*genai.Content {
	var b strings.Builder
	switch {
	case merge:
		b.WriteString(SummaryMarker + " above, the summaries in its first message included, so that a coding agent can continue the task without it: ")
		b.WriteString("the harness replaces those summaries and every message after the task up to here with yours. Keep what is still true, drop what later messages made obsolete.\n")
	case afterSummaries:
		b.WriteString(SummaryMarker + " above from the first message after the summaries at its start up to here, so that a coding agent can continue the task without those messages: ")
		b.WriteString("the harness replaces them with your summary, placed after the summaries already there. Do not repeat what those summaries say.\n")
	default:
		b.WriteString(SummaryMarker + " above, from the message after the task up to here, so that a coding agent can continue the task without those messages: ")
		b.WriteString("the harness replaces them with your summary.\n")
	}
	b.WriteString("Do not call any tool and do not continue the task: answer with the summary only.\n")
	writeSummaryRules(&b, focus)
	req := &genai.Part{Text: b.String()}
	out := slices.Clone(prefix)
	last := len(out) - 1
	if last >= 0 && out[last] != nil && out[last].Role == genai.RoleUser {
		c := *out[last]
		c.Parts = append(slices.Clip(slices.Clone(c.Parts)), req)
		out[last] = &c
		return out
	}
	return append(out, &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{req}})
}

// writeSummaryRules writes the headings and rules every summary request imposes.
func writeSummaryRules(b *strings.Builder, focus string) {
	b.WriteString("Use exactly these headings, in this order, as bold lines:\n")
	for _, h := range Headings {
		fmt.Fprintf(b, "**%s:**\n", h)
	}
	b.WriteString("Rules: keep exact identifiers, file paths, function names, commands, error strings and numbers; ")
	b.WriteString("say \"none\" under a heading with nothing to report; no preamble, no closing remarks; be brief.\n")
	if focus != "" {
		b.WriteString("\nThe user asks the summary to keep in particular: " + focus + "\n")
	}
}

// SummaryPrompt asks for a summary of transcript, merging a previous summary and honouring the
// user's focus.
func SummaryPrompt(transcript, previous, focus string) string {
	var b strings.Builder
	b.WriteString(SummaryMarker + " below so that a coding agent can continue the task without it.\n")
	writeSummaryRules(&b, "")
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
	if len(req.Blocks) > 0 {
		b.WriteString("\nEarlier summary:\n" + JoinSummaries(req.Blocks) + "\n")
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
