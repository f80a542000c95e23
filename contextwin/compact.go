package contextwin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"google.golang.org/genai"
)

// ToolOutputInSummary is how much of each tool output the summarizer sees.
const ToolOutputInSummary = 600

// ErrNothingToCompact means the history holds no more than the turns kept verbatim.
var ErrNothingToCompact = errors.New("nothing to compact")

// SummaryRequest is one call to the summarizer. In context, Contents are the session's own
// messages up to the split, the request riding as a last part of the last one: sent with the
// agent's system instruction and tool declarations (function calling off), the whole prefix is
// one the provider has cached from the agent's own calls. Stand-alone, Contents is one message
// holding a rendered transcript, for SummaryInstruction; that is the path for a history too long
// for one call.
type SummaryRequest struct {
	InContext bool
	Contents  []*genai.Content
}

// Summarizer answers a summary request; the agent passes a model call.
type Summarizer func(ctx context.Context, req SummaryRequest) (string, error)

// SplitPoint returns where to cut history so that the last keep model messages, and everything
// after the first of them, stay verbatim. The cut is always just before a model message: a
// function call and its response (the message right after it) are never separated. Message 0 is
// the task (or the previous head) and is never part of the cut range. ok is false when there is
// nothing before the kept turns.
func SplitPoint(history []*genai.Content, keep int) (split int, ok bool) {
	return splitBy(len(history), func(i int) bool { return history[i] != nil && history[i].Role == genai.RoleModel }, keep)
}

// Request is one compaction to perform.
type Request struct {
	History []*genai.Content
	Task    string         // the user's original request, exactly as first sent: the head's first part
	Blocks  []SummaryBlock // the summaries the head holds now, oldest first
	State   State
	// Pins are the user's pinned items, restated verbatim in the new head after State.
	Pins []Pin
	// KeepRecentTurns is how many model turns stay verbatim (see Plan for how it adapts).
	KeepRecentTurns int
	Focus           string // what the user asked the summary to keep (manual compaction)
	// MaxInputTokens bounds one summarizer call; a longer history is summarized stand-alone, in
	// chunks.
	MaxInputTokens int
	// MergeAbove is the size, in tokens, above which the head's summaries are merged into one
	// instead of a new one being appended after them. 0 always merges.
	MergeAbove int
	Estimator  *Estimator
	// StandAlone asks for the summary over a rendered transcript (tool outputs cut to
	// ToolOutputInSummary characters) rather than in context, however short the history: the
	// summarizer is another model, whose cache holds none of the session's prefix, so sending
	// the prefix as it is would pay it all in full. The head's summaries are merged only when
	// MergeAbove says so, as in context.
	StandAlone bool
	// SaveRequest saves a user request too long for the head (over RequestCap characters) whole
	// and says how to read it back (e.g. `read_file path="…"`), or "" when it could not.
	SaveRequest func(text string) string
}

// Result is a compacted history and what it replaced.
type Result struct {
	History  []*genai.Content // head message + the kept messages, untouched
	Split    int              // index in the old history of the first kept message
	Replaced int              // messages summarized now (history[1:Split])
	Covered  int              // messages the summaries cover in all, previous compactions included
	Blocks   []SummaryBlock   // the head's summaries after this compaction
	Summary  string           // what the model wrote this time (a new block, or the merged one)
	Merged   bool             // the head's earlier summaries were merged into Summary
	Title    string
	Fallback string // why the deterministic summary was used, "" if the model's was
}

// Compact replaces history[1:split] with a structured summary: a new block appended to the head's
// summaries, or one merged summary when they grew past MergeAbove. A cancelled ctx returns its
// error and the caller keeps its history; a failed or useless summary falls back to a
// deterministic one built from the harness state and the ledger of tool calls, so compaction
// itself never fails.
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
	prev := Covered(req.Blocks)
	covered := prev + len(old)
	merge := MergesBlocks(req.Blocks, est, req.MergeAbove)
	summary, fallback, merged, err := summarizeAll(ctx, req, split, merge, summarize, est)
	if err != nil {
		return Result{}, err
	}
	block := SummaryBlock{From: prev + 1, To: covered, Requests: capRequests(userRequests(old), req.SaveRequest), Summary: summary}
	blocks := append(slices.Clone(req.Blocks), block)
	if merged {
		block.From, block.Requests = 1, append(Requests(req.Blocks), block.Requests...)
		blocks = []SummaryBlock{block}
	}
	history := make([]*genai.Content, 0, 1+len(req.History)-split)
	history = append(history, HeadContent(req.Task, blocks, req.State, req.Pins))
	history = append(history, req.History[split:]...)
	return Result{
		History:  history,
		Split:    split,
		Replaced: len(old),
		Covered:  covered,
		Blocks:   blocks,
		Summary:  summary,
		Merged:   merged,
		Title:    Title(summary),
		Fallback: fallback,
	}, nil
}

// MergesBlocks tells whether the next compaction merges the head's summaries into one rather than
// appending a new one: when they are larger than mergeAbove tokens.
func MergesBlocks(blocks []SummaryBlock, est *Estimator, mergeAbove int) bool {
	return len(blocks) > 0 && blocksTokens(blocks, est) > mergeAbove
}

func blocksTokens(blocks []SummaryBlock, est *Estimator) int {
	n := 0
	for _, b := range blocks {
		n += est.Tokens(EstimateText(b.render(false)))
	}
	return n
}

// summarizeAll asks for the summary: in context when the messages to summarize fit one call and
// the summarizer shares the session's cache, else stand-alone over the rendered transcript (in
// chunks, merging the earlier summaries, when it does not fit one call). It
// falls back to the deterministic summary on failure. merged tells whether the result replaces
// the earlier summaries.
func summarizeAll(ctx context.Context, req Request, split int, merge bool, summarize Summarizer, est *Estimator) (summary, fallback string, merged bool, err error) {
	old := req.History[1:split]
	replaced := est.Tokens(EstimateContents(old))
	if merge {
		replaced += blocksTokens(req.Blocks, est)
	}
	var out string
	var serr error
	fits := req.MaxInputTokens <= 0 || est.Tokens(EstimateContents(req.History[:split])) <= req.MaxInputTokens
	if fits && !req.StandAlone {
		out, serr = summarize(ctx, SummaryRequest{InContext: true, Contents: InContextRequest(req.History[:split], len(req.Blocks) > 0, merge, req.Focus)})
	} else {
		if !fits { // chunks cannot append to summaries they do not see: merge them
			merge = len(req.Blocks) > 0
		}
		running := ""
		replaced = est.Tokens(EstimateContents(old))
		if merge {
			running = JoinSummaries(req.Blocks)
			replaced += blocksTokens(req.Blocks, est)
		}
		out, serr = summarizeChunks(ctx, req, old, running, summarize, est)
	}
	if ctx.Err() != nil {
		return "", "", false, fmt.Errorf("compaction cancelled: %w", ctx.Err())
	}
	out = strings.TrimSpace(out)
	// The deterministic summary restates the earlier summaries, so it replaces them.
	why := ""
	switch {
	case serr != nil:
		why = "summarizer failed: " + serr.Error()
	case out == "":
		why = "summarizer returned nothing"
	case est.Tokens(EstimateText(out)) >= replaced:
		why = "summary was not smaller than what it replaced"
	default:
		return out, "", merge, nil
	}
	return Deterministic(req, old), why, len(req.Blocks) > 0, nil
}

// summarizeChunks summarizes old stand-alone, chunk by chunk, each chunk's summary merged into
// the next (running starts as the summaries to merge, or "").
func summarizeChunks(ctx context.Context, req Request, old []*genai.Content, running string, summarize Summarizer, est *Estimator) (string, error) {
	var out string
	var err error
	for _, chunk := range chunkTranscripts(old, req.MaxInputTokens, est) {
		out, err = summarize(ctx, SummaryRequest{Contents: []*genai.Content{{Role: genai.RoleUser, Parts: []*genai.Part{{Text: SummaryPrompt(chunk, running, req.Focus)}}}}})
		if err != nil || ctx.Err() != nil {
			return out, err
		}
		running = strings.TrimSpace(out)
	}
	return running, nil
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

// RequestCap is how many characters of one user request the head keeps verbatim (about 1,000
// tokens): a pasted log or file must not ride along in every later prompt. The rest is saved.
const RequestCap = 4000

// capRequests bounds each request to RequestCap characters (40 % head, 60 % tail, as tool
// outputs), saving a longer one whole with save and saying where in its place.
func capRequests(reqs []string, save func(string) string) []string {
	for i, r := range reqs {
		total := utf8.RuneCountInString(r)
		if total <= RequestCap {
			continue
		}
		head, tail := Split(RequestCap)
		note := fmt.Sprintf("[… %d characters of this request omitted here", total-head-tail)
		if where := callSave(save, r); where != "" {
			note += "; the whole request is saved: " + where + " to read it"
		}
		reqs[i] = r[:byteOffsetOfRune(r, head)] + "\n" + note + " …]\n" + r[byteOffsetOfRuneFromEnd(r, tail):]
	}
	return reqs
}

func callSave(save func(string) string, text string) string {
	if save == nil {
		return ""
	}
	return save(text)
}

// userRequests returns the text of the user messages in old that are requests (not tool results,
// not pins: the head restates the pins still pinned on their own).
func userRequests(old []*genai.Content) []string {
	var out []string
	for _, c := range old {
		if c == nil || c.Role != genai.RoleUser {
			continue
		}
		var parts []string
		for _, p := range c.Parts {
			if p.Text != "" && p.FunctionResponse == nil && !IsPinNote(p.Text) {
				parts = append(parts, p.Text)
			}
		}
		if len(parts) > 0 {
			out = append(out, strings.Join(parts, "\n"))
		}
	}
	return out
}
