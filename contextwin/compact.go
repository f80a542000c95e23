package contextwin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/genai"
)

// ToolOutputInSummary is how much of each tool output the summarizer sees.
const ToolOutputInSummary = 600

// ErrNothingToCompact means the history holds no more than the turns kept verbatim.
var ErrNothingToCompact = errors.New("nothing to compact")

// Summarizer turns a prompt into a summary; the agent passes a model call.
type Summarizer func(ctx context.Context, prompt string) (string, error)

// SplitPoint returns where to cut history so that the last keep model messages, and everything
// after the first of them, stay verbatim. The cut is always just before a model message: a
// function call and its response (the message right after it) are never separated. Message 0 is
// the task (or the previous head) and is never part of the cut range. ok is false when there is
// nothing before the kept turns.
func SplitPoint(history []*genai.Content, keep int) (split int, ok bool) {
	keep = max(keep, 1)
	seen := 0
	for i := len(history) - 1; i > 0; i-- {
		if history[i] != nil && history[i].Role == genai.RoleModel {
			seen++
			if seen == keep {
				split = i
				break
			}
		}
	}
	if seen < keep || split <= 1 {
		return 0, false
	}
	return split, true
}

// Request is one compaction to perform.
type Request struct {
	History         []*genai.Content
	Task            string // the user's original request, restated in the head
	PreviousSummary string // merged into the new one
	PreviousCount   int    // messages the previous summary already covered
	// PreviousRequests are the user's later requests restated by the previous head; they stay.
	PreviousRequests []string
	State            State
	KeepRecentTurns  int
	Focus            string // what the user asked the summary to keep (manual compaction)
	// MaxInputTokens bounds one summarizer call; a longer transcript is summarized in chunks.
	MaxInputTokens int
	Estimator      *Estimator
}

// Result is a compacted history and what it replaced.
type Result struct {
	History  []*genai.Content // head message + the kept messages, untouched
	Split    int              // index in the old history of the first kept message
	Replaced int              // messages summarized now (history[1:Split])
	Covered  int              // messages the summary covers in all, previous compactions included
	Summary  string
	Requests []string // the user's requests found in the replaced messages, restated in the head
	Title    string
	Fallback string // why the deterministic summary was used, "" if the model's was
}

// Compact replaces history[1:split] with a structured summary. A cancelled ctx returns its error
// and the caller keeps its history; a failed or useless summary falls back to a deterministic one
// built from the harness state and the ledger of tool calls, so compaction itself never fails.
func Compact(ctx context.Context, req Request, summarize Summarizer) (Result, error) {
	split, ok := SplitPoint(req.History, req.KeepRecentTurns)
	if !ok {
		return Result{}, ErrNothingToCompact
	}
	old := req.History[1:split]
	est := req.Estimator
	if est == nil {
		est = &Estimator{}
	}
	summary, fallback, err := summarizeAll(ctx, req, old, summarize, est)
	if err != nil {
		return Result{}, err
	}
	covered := req.PreviousCount + len(old)
	requests := append(slices.Clone(req.PreviousRequests), userRequests(old)...)
	head := &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: Head(req.Task, requests, covered, summary, req.State)}}}
	history := make([]*genai.Content, 0, 1+len(req.History)-split)
	history = append(history, head)
	history = append(history, req.History[split:]...)
	return Result{
		History:  history,
		Split:    split,
		Replaced: len(old),
		Covered:  covered,
		Summary:  summary,
		Requests: requests,
		Title:    Title(summary),
		Fallback: fallback,
	}, nil
}

// summarizeAll asks for the summary, in chunks when the transcript is too long for one call, and
// falls back to the deterministic summary on failure.
func summarizeAll(ctx context.Context, req Request, old []*genai.Content, summarize Summarizer, est *Estimator) (summary, fallback string, err error) {
	chunks := chunkTranscripts(old, req.MaxInputTokens, est)
	running := req.PreviousSummary
	replacedTokens := est.Tokens(EstimateText(req.PreviousSummary))
	for _, c := range chunks {
		replacedTokens += est.Tokens(EstimateText(c))
	}
	for _, chunk := range chunks {
		out, serr := summarize(ctx, SummaryPrompt(chunk, running, req.Focus))
		if ctx.Err() != nil {
			return "", "", fmt.Errorf("compaction cancelled: %w", ctx.Err())
		}
		if serr != nil {
			return Deterministic(req, old), "summarizer failed: " + serr.Error(), nil
		}
		running = strings.TrimSpace(out)
	}
	switch {
	case running == "":
		return Deterministic(req, old), "summarizer returned nothing", nil
	case est.Tokens(EstimateText(running)) >= replacedTokens:
		return Deterministic(req, old), "summary was not smaller than what it replaced", nil
	}
	return running, "", nil
}

// chunkTranscripts renders old as one transcript, or as several at message boundaries when it
// exceeds maxTokens.
func chunkTranscripts(old []*genai.Content, maxTokens int, est *Estimator) []string {
	var chunks []string
	var cur strings.Builder
	curTokens := 0
	for _, c := range old {
		s := RenderMessage(c)
		t := est.Tokens(EstimateText(s))
		if maxTokens > 0 && cur.Len() > 0 && curTokens+t > maxTokens {
			chunks = append(chunks, cur.String())
			cur.Reset()
			curTokens = 0
		}
		cur.WriteString(s)
		curTokens += t
	}
	if cur.Len() > 0 || len(chunks) == 0 {
		chunks = append(chunks, cur.String())
	}
	return chunks
}

// Head is the first message after a compaction: the task, the user's later requests verbatim,
// what the summary covers and that the following messages win over it, the summary, and the
// state the harness holds.
func Head(task string, requests []string, covered int, summary string, st State) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(task))
	if len(requests) > 0 {
		b.WriteString("\n\nLater requests from the user, verbatim:\n")
		for _, r := range requests {
			b.WriteString("- " + strings.TrimSpace(r) + "\n")
		}
	}
	fmt.Fprintf(&b, "\n\n[Summary of the first %d messages, compacted by the harness. The messages that follow are kept verbatim and take precedence over this summary.]\n", covered)
	b.WriteString(strings.TrimSpace(summary))
	b.WriteString("\n\n")
	b.WriteString(st.Render())
	return b.String()
}

// userRequests returns the text of the user messages in old that are requests (not tool results).
func userRequests(old []*genai.Content) []string {
	var out []string
	for _, c := range old {
		if c == nil || c.Role != genai.RoleUser {
			continue
		}
		var parts []string
		for _, p := range c.Parts {
			if p.Text != "" && p.FunctionResponse == nil {
				parts = append(parts, p.Text)
			}
		}
		if len(parts) > 0 {
			out = append(out, strings.Join(parts, "\n"))
		}
	}
	return out
}
