package agent

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/contextwin"
	"google.golang.org/genai"
)

// planLocked estimates the compaction that would be done now (see contextwin.PlanCompaction): the
// turns kept adapt so that the prompt after it is under compactAt × budget when possible, and at
// least floor tokens (0: no floor). s.conv.mu must be held.
func (c *Conversation) planLocked(f planFacts, floor int) (contextwin.Plan, bool) {
	est := c.ledger.Estimator
	msgs := c.messageTokens()
	before, _ := c.ledger.Used()
	summaryOut := contextwin.DefaultSummaryTokens
	blocks := 0
	for _, b := range c.blocks {
		blocks += est.Tokens(contextwin.EstimateText(b.Summary))
		summaryOut = est.Tokens(contextwin.EstimateText(b.Summary))
	}
	headKept := est.Tokens(contextwin.EstimateText(c.task))
	newHead := headKept + summaryOut + est.Tokens(contextwin.EstimateText(f.state.Render())) + contextwin.PinnedTokens(c.pins)
	if !contextwin.MergesBlocks(c.blocks, &est, c.opts.mergeAbove(f.policy)) {
		headKept += blocks
		newHead += blocks
	}
	in := contextwin.PlanInput{
		Fixed: est.Tokens(c.prompt.estimate()), Before: before,
		HeadKept: headKept, NewHead: newHead, SummaryOutput: summaryOut,
		MinCached:       f.cacheMin,
		KeepRecentTurns: f.policy.KeepRecentTurns,
		Target:          int(f.policy.CompactAt * float64(c.opts.window(f.policy))),
		Floor:           floor,
		Growth:          growthOf(c.history, msgs, f.policy.KeepRecentTurns),
	}
	if f.cold {
		in.Cold, in.Rendered = true, c.renderedTokensLocked(&est)
		if contextwin.MergesBlocks(c.blocks, &est, c.opts.mergeAbove(f.policy)) {
			in.Merged = blocks
		}
	}
	return contextwin.PlanCompaction(msgs, func(i int) bool { return c.history[i] != nil && c.history[i].Role == genai.RoleModel }, in)
}

// installLocked swaps the history for the compaction res and records its checkpoint, whose
// trigger, focus and tokens before are from's. It tells whether the compaction left the prompt
// under blockAt. s.compactor.mu and s.conv.mu must be held.
func (c *Conversation) installLocked(res contextwin.Result, from contextwin.Checkpoint, p contextwin.Policy, state contextwin.State, fresh []contextwin.Pin) (contextwin.Checkpoint, bool) {
	head := contextwin.HeadContent(c.task, res.Blocks, state, c.headPinsLocked(fresh))
	undo := journal.UndoFrame{Before: c.history, Blocks: c.blocks}
	h := journal.Compact(c.history, head, res.Split)
	c.history = h
	undo.AfterLen = len(h)
	c.undo = append(c.undo, undo)
	c.ledger.Reset(h)
	c.blocks = res.Blocks
	after, _ := c.ledger.Used()
	cp := contextwin.Checkpoint{
		N:            len(c.checkpoints) + 1,
		Title:        res.Title,
		Summary:      contextwin.JoinSummaries(res.Blocks),
		Trigger:      from.Trigger,
		Focus:        from.Focus,
		From:         1,
		To:           res.Split,
		Replaced:     res.Replaced,
		Covered:      res.Covered,
		TokensBefore: from.TokensBefore,
		TokensAfter:  after,
		Fallback:     res.Fallback,
		Time:         c.opts.Now(),
	}
	if cp.Title == "" {
		cp.Title = fmt.Sprintf("Compaction %d", cp.N)
	}
	c.checkpoints = append(c.checkpoints, cp)
	c.transcript = append(c.transcript, journal.Entry{Checkpoint: &cp, Turn: c.turns})
	c.opts.journal(journal.Record{Kind: journal.KindCompaction, Compaction: &journal.Compaction{
		Head: h[0], Split: res.Split, Blocks: res.Blocks, Checkpoint: cp,
	}})
	return cp, p.Check(after, c.opts.window(p)) != contextwin.Block
}

// handoff is the message that ends a session whose compactions no longer free enough room: the
// last noProgress did not.
func (c *Conversation) handoff(p contextwin.Policy, noProgress int) string {
	c.mu.Lock()
	blocks := c.blocks
	c.mu.Unlock()
	return fmt.Sprintf("\n\nStopped: %d compactions in a row left the context above %g × %d tokens, so compacting again would not help. "+
		"Even the last turn kept verbatim is too large for the budget. Raise contextBudget, "+
		"or start a new session from the latest checkpoint:\n\n%s\n", noProgress, p.BlockAt, c.opts.window(p), contextwin.JoinSummaries(blocks))
}

// clearPlanLocked plans the first tier now: the old results to clear, in the batch that gains
// the most over the calls expected to follow. The results of the turns kept verbatim and those
// the model still uses are never cleared. s.compactor.mu and s.conv.mu must be held.
func (c *Conversation) clearPlanLocked(f planFacts, calls, mustFree int) (contextwin.ClearPlan, bool) {
	return c.clearPlanAtLeastLocked(f, calls, mustFree, 0)
}

// clearPlanAtLeastLocked is clearPlanLocked among the batches that free at least minFreed tokens.
// s.compactor.mu and s.conv.mu must be held.
func (c *Conversation) clearPlanAtLeastLocked(f planFacts, calls, mustFree, minFreed int) (contextwin.ClearPlan, bool) {
	if f.policy.KeepToolResults {
		return contextwin.ClearPlan{}, false
	}
	items, in := c.clearInputLocked(f, calls, mustFree)
	in.MinFreed = minFreed
	return contextwin.PlanClearing(items, in)
}

// clearInputLocked is what planning the first tier weighs: each message holding results not
// cleared yet (Keep when the rules keep it), and the prompt around them. c.mu must be held.
func (c *Conversation) clearInputLocked(f planFacts, calls, mustFree int) ([]contextwin.ClearItem, contextwin.ClearInput) {
	est := c.ledger.Estimator
	msgs := c.messageTokens()
	clearable := map[int]bool{}
	for _, i := range Clearable(c.history, f.state.FilesModified, f.policy.KeepRecentTurns, c.pinnedReadsLocked()) {
		clearable[i] = true
	}
	var items []contextwin.ClearItem
	for i := 1; i < len(c.history); i++ {
		n := liveResults(c.history[i])
		if n == 0 {
			continue
		}
		items = append(items, contextwin.ClearItem{
			Index: i, Tokens: msgs[i], StubTokens: c.clearedTokensLocked(&est, i), Keep: !clearable[i],
		})
	}
	before, _ := c.ledger.Used()
	return items, contextwin.ClearInput{
		Messages: msgs, Fixed: est.Tokens(c.prompt.estimate()), Before: before,
		Cached: f.cached, MinCached: f.cacheMin, Horizon: c.opts.horizon(calls), Prices: f.prices, MustFree: mustFree,
		Growth: growthOf(c.history, msgs, f.policy.KeepRecentTurns),
	}
}

// growthLocked is about what the prompt gains a call: the turns kept verbatim over their count.
// c.mu must be held.
func (c *Conversation) growthLocked(f planFacts) int {
	return growthOf(c.history, c.messageTokens(), f.policy.KeepRecentTurns)
}

// messageTokens is the estimated tokens of each message of the history, head first. c.mu must be
// held.
func (c *Conversation) messageTokens() []int {
	est := c.ledger.Estimator
	msgs := make([]int, len(c.history))
	for i := range c.history {
		msgs[i] = est.Tokens(c.ledger.MessageEstimate(i))
	}
	return msgs
}

// clearLocked clears the results plan names and records it as a checkpoint. s.compactor.mu and
// s.conv.mu must be held.
func (c *Conversation) clearLocked(plan contextwin.ClearPlan) contextwin.Checkpoint {
	before, _ := c.ledger.Used()
	spill := filepath.Join(c.opts.StateDir, "tool-outputs")
	seq := 0
	h := contextwin.ClearResults(c.history, plan.Indexes, func(fr *genai.FunctionResponse) string {
		seq++
		return recall(spill, fmt.Sprintf("cleared-%d-%d-%s", len(c.checkpoints)+1, seq, safeName(fr.Name)), fr)
	})
	cleared := map[int]*genai.Content{}
	n := 0
	var lines []string
	for _, i := range plan.Indexes {
		cleared[i] = h[i]
		for j, old := range c.history[i].Parts { // ClearResults keeps the parts where they were
			if old == nil || old.FunctionResponse == nil || contextwin.IsCleared(old.FunctionResponse) {
				continue
			}
			n++
			for _, v := range h[i].Parts[j].FunctionResponse.Response {
				lines = append(lines, "- "+fmt.Sprint(v))
			}
		}
	}
	c.undo = append(c.undo, journal.UndoFrame{Before: c.history, Blocks: c.blocks, AfterLen: len(h)})
	c.history = h
	c.ledger.Reset(h)
	after, _ := c.ledger.Used()
	cp := contextwin.Checkpoint{
		N:            len(c.checkpoints) + 1,
		Title:        fmt.Sprintf("%d tool results cleared", n),
		Summary:      fmt.Sprintf("%d old tool results were cleared to free %d tokens; the model reads them again on demand:\n\n%s", n, before-after, strings.Join(lines, "\n")),
		Trigger:      contextwin.TriggerAuto,
		From:         plan.From,
		To:           plan.Indexes[len(plan.Indexes)-1] + 1,
		Replaced:     len(plan.Indexes),
		TokensBefore: before,
		TokensAfter:  after,
		Time:         c.opts.Now(),
		Cleared:      n,
	}
	c.checkpoints = append(c.checkpoints, cp)
	c.transcript = append(c.transcript, journal.Entry{Checkpoint: &cp, Turn: c.turns})
	c.opts.journal(journal.Record{Kind: journal.KindCompaction, Compaction: &journal.Compaction{Checkpoint: cp, Blocks: c.blocks, Cleared: cleared}})
	return cp
}

// renderedTokensLocked are the tokens of each message as a stand-alone summary renders it (tool
// outputs cut), for planning a summary on another model. s.conv.mu must be held.
func (c *Conversation) renderedTokensLocked(est *contextwin.Estimator) []int {
	out := make([]int, len(c.history))
	for i, m := range c.history {
		if m != nil {
			out[i] = est.Tokens(contextwin.EstimateText(contextwin.RenderMessage(m)))
		}
	}
	return out
}

// planFacts is what planning a compaction needs from the parts other than the conversation,
// read before the compactor's and the conversation's locks are taken.
type planFacts struct {
	policy   contextwin.Policy
	state    contextwin.State  // the harness's state, as the new head would state it
	cacheMin int               // the shortest prefix the serving model caches implicitly
	prices   contextwin.Prices // what a compaction is weighed at (billing.forPlan)
	cached   int               // the last prompt, when its model caches it
	// summaryModel is the model summaries go to; cold when it is not the session's (no share of
	// its cache), flexOK when a background summary may ask it for Flex. summary is its prices on
	// the standard tier, which a summary is weighed at even when it asks for Flex (worth).
	summaryModel string
	cold, flexOK bool
	summary      contextwin.Prices
	// inTime is set when prices are a local model's pace (billing.timePricesLocked): the plans
	// weigh seconds, not dollars.
	inTime bool
}

// worth words an amount the plans weighed: dollars, or a local model's seconds.
func (f planFacts) worth(x float64) string {
	if f.inTime {
		return fmt.Sprintf("%.1f s", x)
	}
	return fmt.Sprintf("$%.4f", x)
}

// mergeAbove is the size past which the head's summaries are merged into one rather than added
// to: a tenth of the window. Appending keeps the head's prefix cached; merging keeps the head
// small.
func (o *Options) mergeAbove(p contextwin.Policy) int {
	return o.window(p) / 10
}
