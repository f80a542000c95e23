package contextwin

// DefaultSummaryTokens is the summary length assumed before a session has produced one.
const DefaultSummaryTokens = 400

// summaryRequestTokens is about what the in-context summary request adds to the prefix.
const summaryRequestTokens = 250

// Plan is a compaction as it would be done now, estimated: where it cuts, how many turns it
// keeps and what the prompt would be after it.
type Plan struct {
	Split, Keep int
	Before      int // the next prompt without compaction
	After       int // the next prompt right after it
	// AfterCached is the part of After the provider would still have cached: the head's
	// unchanged prefix, when it reaches the minimum.
	AfterCached int
	// SummaryInput and SummaryCached are the summarizer's prompt and its cached part.
	SummaryInput, SummaryCached int
	SummaryOutput               int
	// MinCached is the model's implicit-cache minimum the plan was made with, and Growth what
	// the prompt was gaining per call (PlanInput.Growth).
	MinCached, Growth int
}

// PlanInput is what planning needs, in tokens (the estimator's, corrected).
type PlanInput struct {
	Fixed  int // system instruction and tool declarations
	Before int // the next prompt without compaction (the ledger's figure)
	// HeadKept is the part of the head a compaction leaves byte for byte: the task, and the
	// summaries when a new one is appended after them. NewHead is the head after compaction
	// (its kept part, the new summary and the state).
	HeadKept, NewHead int
	SummaryOutput     int
	MinCached         int
	KeepRecentTurns   int
	Target            int // keep fewer turns, down to one, while the prompt after exceeds this
	// Floor: keep more turns while the prompt after stays under this and under Target. A
	// prompt under the model's cache minimum is billed in full at every call, which costs more
	// than a larger one cached.
	Floor int
	// Growth is what the prompt gains per call, about (ClearInput.Growth).
	Growth int
	// Cold: the summary goes to another model, whose cache holds none of the session's prefix
	// (Request.StandAlone). Its input is then the old messages as Rendered says, plus the
	// summaries it merges (Merged), all billed in full.
	Cold bool
	// Rendered holds the tokens of each message as the stand-alone summarizer sees it (tool
	// outputs cut to ToolOutputInSummary characters); nil: as history says.
	Rendered []int
	Merged   int // tokens of the head's summaries a cold summary merges (0: it appends)
}

// PlanCompaction chooses how many turns to keep: keepRecentTurns, or fewer when the turns kept
// alone would leave the prompt above target (a compaction that frees too little only leads to
// the next one). history holds the tokens of each message, head first, and isModel says which
// messages are the model's. It returns ok false when there is nothing before the kept turns.
func PlanCompaction(history []int, isModel func(i int) bool, in PlanInput) (Plan, bool) {
	var best Plan
	found := false
	for keep := max(in.KeepRecentTurns, 1); keep >= 1; keep-- {
		p, ok := in.plan(history, isModel, keep)
		if !ok {
			continue
		}
		best, found = p, true
		if p.After <= in.Target {
			break
		}
	}
	for keep := best.Keep + 1; found && best.After < in.Floor; keep++ {
		p, ok := in.plan(history, isModel, keep)
		if !ok || p.After > in.Target {
			break
		}
		best = p
	}
	return best, found
}

// plan is the compaction that keeps the last keep model turns; ok is false when nothing is
// before them.
func (in PlanInput) plan(history []int, isModel func(i int) bool, keep int) (Plan, bool) {
	split, ok := splitBy(len(history), isModel, keep)
	if !ok {
		return Plan{}, false
	}
	kept := 0
	for _, t := range history[split:] {
		kept += t
	}
	prefix := in.Fixed
	for _, t := range history[:split] {
		prefix += t
	}
	p := Plan{
		Split: split, Keep: keep, Before: in.Before, MinCached: in.MinCached, Growth: in.Growth,
		After:         in.Fixed + in.NewHead + kept,
		SummaryInput:  prefix + summaryRequestTokens,
		SummaryOutput: in.SummaryOutput,
	}
	if c := in.Fixed + in.HeadKept; c >= in.MinCached {
		p.AfterCached = c
	}
	if prefix >= in.MinCached {
		p.SummaryCached = prefix
	}
	if in.Cold {
		p.SummaryInput, p.SummaryCached = in.coldInput(history, split), 0
	}
	return p, true
}

// coldInput is the prompt of a stand-alone summary of history[1:split]: the rendered messages,
// the summaries it merges, and the request around them.
func (in PlanInput) coldInput(history []int, split int) int {
	r := in.Rendered
	if r == nil {
		r = history
	}
	n := in.Merged + summaryRequestTokens
	for _, t := range r[1:split] {
		n += t
	}
	return n
}

// splitBy is SplitPoint over a history known by its length and which messages are the model's.
func splitBy(n int, isModel func(i int) bool, keep int) (int, bool) {
	keep = max(keep, 1)
	seen := 0
	for i := n - 1; i > 0; i-- {
		if isModel(i) {
			seen++
			if seen == keep {
				if i <= 1 {
					return 0, false
				}
				return i, true
			}
		}
	}
	return 0, false
}

// Worth weighs compacting now against not compacting, in dollars: what it costs (the summary
// call, and the next call paying in full for a prefix it would have had cached) against what it
// saves on each of the horizon calls that follow, each paying the prompt it would have: cached
// when it reaches the model's minimum, in full below it (weigh). prices are the session model's;
// summary are the summary call's (SummaryCost): the same, another model's, or either on the
// Flex tier. cached is what the next call would have cached without compaction.
func (p Plan) Worth(prices, summary Prices, cached, horizon int) (saving, cost float64) {
	return weigh(prices, p.Before, cached, p.After, p.AfterCached, p.MinCached, horizon, p.Growth, p.SummaryCost(summary))
}

// SummaryCost is what the summary call costs at prices: its uncached input, the prefix it shares
// with the session's calls at the cached rate (none on another model: Cold), and its output.
func (p Plan) SummaryCost(prices Prices) float64 {
	in, ca, out := prices.Input/1e6, prices.CachedInput/1e6, prices.Output/1e6
	return float64(p.SummaryInput-p.SummaryCached)*in + float64(p.SummaryCached)*ca + float64(p.SummaryOutput)*out
}
