package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/contextwin"
)

// The first tier of context management: old tool results cleared, no model call. A cleared
// result keeps its call and response part; its output becomes a stub that names the call and,
// for a long one, the file its whole text was saved to. A clearing is a checkpoint like a
// compaction: journaled, replayed on resume, undone by UndoCompaction.

// recallAbove is the output size past which a cleared result is saved to a file the stub names:
// a shorter one costs less to call again than to save and read back.
const recallAbove = 1000

// clearPlanLocked plans the first tier now: the old results to clear, oldest first, in the batch
// that gains the most over the calls expected to follow. The results of the turns kept verbatim
// and those the model still uses are never cleared. s.compactor.mu and s.conv.mu must be held.
func (c *Conversation) clearPlanLocked(f planFacts, calls, mustFree int) (contextwin.ClearPlan, bool) {
	keepFrom, ok := contextwin.SplitPoint(c.history, f.policy.KeepRecentTurns)
	if !ok || f.policy.KeepToolResults {
		return contextwin.ClearPlan{}, false
	}
	est := c.ledger.Estimator
	msgs := c.messageTokens()
	inUse := inUse(c.history, f.state.FilesModified)
	pinned := c.pinnedReadsLocked()
	var items []contextwin.ClearItem
	for i := 1; i < len(c.history); i++ {
		n := liveResults(c.history[i])
		if n == 0 {
			continue
		}
		items = append(items, contextwin.ClearItem{
			Index: i, Tokens: msgs[i], StubTokens: n * stubTokens,
			Keep: i >= keepFrom || inUse[i] || pinned[i],
		})
	}
	before, _ := c.ledger.Used()
	return contextwin.PlanClearing(items, contextwin.ClearInput{
		Messages: msgs, Fixed: est.Tokens(c.prompt.estimate()), Before: before,
		Cached: f.cached, MinCached: f.cacheMin, Horizon: c.opts.horizon(calls), Prices: f.prices, MustFree: mustFree,
		Growth: growthOf(c.history, msgs, f.policy.KeepRecentTurns),
	})
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

// growthOf is about what the prompt gains per call: the tokens of the last keep model turns and
// their results, divided by keep.
func growthOf(history []*genai.Content, msgs []int, keep int) int {
	keep = max(keep, 1)
	from, ok := contextwin.SplitPoint(history, keep)
	if !ok {
		return 0
	}
	n := 0
	for _, t := range msgs[from:] {
		n += t
	}
	return n / keep
}

// earlyFrom is, in the model's cache minimums, the prompt from which results are cleared before
// compactAt. Under it the prompt is small: clearing saves little in dollars, and each result the
// model has to read again costs a call, which the plan does not weigh.
const earlyFrom = 2

// earlyClear is what to do before compactAt: nothing, clear (plan), or a summary in its place.
type earlyClear struct {
	plan    contextwin.ClearPlan
	held    float64
	summary *contextwin.Plan
}

// earlyPlanLocked decides whether old tool results are cleared before compactAt: once waiting
// no longer pays (ClearPlan.Due), the results a clearing would free having cost, call after
// call, as much as the rebuild of the prompt, and the clearing paying over the calls expected
// to follow. Without it a long session keeps every result until compactAt and pays to read it
// again at each call. When it is due, a summary is taken instead if it gains more over those
// calls: the stubs and calls of cleared results pile up in a long session, and only a summary
// frees them. ok is false when nothing is due. s.compactor.mu and s.conv.mu must be held.
func (k *compactor) earlyPlanLocked(f planFacts, calls, used int) (earlyClear, bool) {
	if k.heldAt != len(k.conv.checkpoints) {
		k.held, k.heldAt = 0, len(k.conv.checkpoints)
	}
	if used < earlyFrom*f.cacheMin {
		return earlyClear{}, false
	}
	plan, _ := k.conv.clearPlanLocked(f, calls, 0)
	if len(plan.Indexes) == 0 {
		return earlyClear{}, false
	}
	k.held += max(plan.PerCall, 0)
	if !plan.Due(k.held) {
		return earlyClear{}, false
	}
	e := earlyClear{plan: plan, held: k.held}
	if f.policy.NoSummaries || !k.canCompactLocked() || k.job != nil {
		return e, true
	}
	// A summary in place of a clearing keeps the prompt above the cache minimum, with a margin
	// for the summary's length: under it, every call would pay the prompt in full.
	if sum, ok := k.conv.planLocked(f, f.cacheMin+f.cacheMin/8); ok {
		saving, cost := sum.Worth(f.prices, f.summary, f.cached, k.opts.horizon(calls))
		if saving-cost > plan.Net() {
			e.summary = &sum
		}
	}
	return e, true
}

// clearEarlyLocked does the clearing e plans and words it. s.compactor.mu and s.conv.mu must be
// held.
func (k *compactor) clearEarlyLocked(e earlyClear, calls int) (*contextwin.Checkpoint, string) {
	cp := k.conv.clearLocked(e.plan)
	return &cp, fmt.Sprintf("cleared %d old tool results before compactAt, %d tokens freed with no model call: keeping them had cost $%.4f since they could go, "+
		"at least what the rebuild of the prompt costs ($%.4f); the next %d calls save $%.4f", cp.Cleared, e.plan.Freed, e.held, e.plan.Rebuild, k.opts.horizon(calls), e.plan.Saving)
}

// firstTierLocked clears old tool results when clearOrSummarize says so, and words the decision
// either way, in dollars. s.compactor.mu and s.conv.mu must be held.
func (k *compactor) firstTierLocked(f planFacts, calls, used, window int) (*contextwin.Checkpoint, string) {
	plan, ok := k.clearOrSummarize(f, calls, used, window)
	h := k.opts.horizon(calls)
	if ok {
		cp := k.conv.clearLocked(plan)
		return &cp, fmt.Sprintf("cleared %d old tool results, %d tokens freed with no model call: the rebuild of the prompt costs $%.4f, the next %d calls save $%.4f",
			cp.Cleared, plan.Freed, plan.Cost, h, plan.Saving)
	}
	blockAt := int(f.policy.BlockAt * float64(window))
	if len(plan.Indexes) == 0 {
		return nil, fmt.Sprintf("past compactAt, nothing old to clear; at blockAt (%d tokens) the oldest turns are summarized", blockAt)
	}
	return nil, fmt.Sprintf("past compactAt, waiting: clearing %d old tool results would cost $%.4f to rebuild the prompt and save $%.4f over the next %d calls; "+
		"at blockAt (%d tokens) the cheaper of clearing and a summary runs", len(plan.Indexes), plan.Cost, plan.Saving, h, blockAt)
}

// clearOrSummarize chooses the first tier's plan, if any, over a summary. Past compactAt a
// clearing is taken when it pays for itself; at blockAt, where something must free room, the
// clearing that frees enough is taken unless the summary would gain more. s.compactor.mu and
// s.conv.mu must be held.
func (k *compactor) clearOrSummarize(f planFacts, calls, used, window int) (contextwin.ClearPlan, bool) {
	mustFree := 0
	if f.policy.Check(used, window) == contextwin.Block {
		mustFree = used - int(f.policy.BlockAt*float64(window)) + 1
	}
	clear, ok := k.conv.clearPlanLocked(f, calls, mustFree)
	if !ok || mustFree == 0 {
		return clear, ok
	}
	if sum, ok := k.conv.planLocked(f, 0); ok && sum.After < used-mustFree+1 {
		saving, cost := sum.Worth(f.prices, f.summary, f.cached, k.opts.horizon(calls)) // at blockAt: waited for, standard
		if saving-cost > clear.Net() {
			return contextwin.ClearPlan{}, false
		}
	}
	return clear, true
}

// stubTokens is about what one stub costs.
const stubTokens = 60

// horizon is how many calls a decision taken now is weighed over: a turn that has made calls
// calls makes, under a Lindy prior (P(T > t) = calls/t), at least calls/3 more three times out
// of four; and no more than its limit leaves. Never less than the next call and one more.
func (o *Options) horizon(calls int) int {
	return max(min(calls/3, o.MaxTurnRequests-calls), 2)
}

// liveResults counts the function responses of m that are not cleared yet.
func liveResults(m *genai.Content) int {
	if m == nil || m.Role == genai.RoleModel {
		return 0
	}
	n := 0
	for _, p := range m.Parts {
		if p != nil && p.FunctionResponse != nil && !contextwin.IsCleared(p.FunctionResponse) {
			n++
		}
	}
	return n
}

// inUse marks the results the model is still working from: the last read of the files it is
// editing (the two it changed last), and the last command run (the last test output). modified
// are the files it changed in the session, for the calls that name a path another way.
func inUse(history []*genai.Content, modified []string) map[int]bool {
	out := map[int]bool{}
	editing := map[string]bool{}
	lastRun := -1
	for i := len(history) - 1; i > 0; i-- {
		for _, call := range callsAnswered(history, i) {
			p, _ := call.Args["path"].(string)
			switch {
			case call.Name == "run_command" && lastRun < 0:
				lastRun = i
			case (call.Name == "edit_file" || call.Name == "write_file") && len(editing) < 2 && p != "":
				editing[clean(p)] = true
			}
		}
	}
	if lastRun > 0 {
		out[lastRun] = true
	}
	if len(editing) == 0 { // edits made before a compaction: the harness's own list
		for _, p := range modified[max(len(modified)-2, 0):] {
			editing[clean(p)] = true
		}
	}
	seen := map[string]bool{}
	for i := len(history) - 1; i > 0; i-- {
		for _, call := range callsAnswered(history, i) {
			if p, ok := call.Args["path"].(string); ok && call.Name == "read_file" && editing[clean(p)] && !seen[clean(p)] {
				seen[clean(p)] = true
				out[i] = true
			}
		}
	}
	return out
}

func clean(p string) string { return filepath.ToSlash(filepath.Clean(p)) }

// callsAnswered are the calls message i answers: those of the model message before it.
func callsAnswered(history []*genai.Content, i int) []*genai.FunctionCall {
	if liveResults(history[i]) == 0 || history[i-1] == nil || history[i-1].Role != genai.RoleModel {
		return nil
	}
	return journal.FunctionCalls(history[i-1])
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

// recall saves a long result whole to the session's tool outputs, where read_file reads it, and
// says how to read it back; "" for a short one, for a read (its stub names the path and range:
// reading it again is the way back), or when it cannot be saved.
func recall(dir, name string, fr *genai.FunctionResponse) string {
	if fr.Name == "read_file" {
		return ""
	}
	var text string
	for _, v := range fr.Response {
		if s, ok := v.(string); ok {
			text += s
		}
	}
	if utf8.RuneCountInString(text) <= recallAbove {
		return ""
	}
	return saveWhole(dir, name, text)
}

// saveWhole writes text to dir/name.txt and says how to read it back; "" when it cannot.
func saveWhole(dir, name, text string) string {
	if dir == "" {
		return ""
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return ""
	}
	path := filepath.Join(dir, name+".txt")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		return ""
	}
	return fmt.Sprintf("read_file path=%q", path)
}

// saveRequest saves a user request too long for the head whole to the session's tool outputs,
// named by its content (the same request saved twice is one file), and says how to read it.
func (o *Options) saveRequest(text string) string {
	sum := sha256.Sum256([]byte(text))
	return saveWhole(filepath.Join(o.StateDir, "tool-outputs"), "request-"+hex.EncodeToString(sum[:6]), text)
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, s)
}
