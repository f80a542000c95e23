package agent

import (
	"context"
	"fmt"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/contextwin"
)

// autoCompact starts a compaction when the prompt is past compactAt and one is due (see
// beforeCall). It returns the compaction running, if any, whether the next call must wait for it,
// and whether it started it.
func (k *compactor) autoCompact(ctx context.Context, f planFacts, calls int) (job *compactionJob, wait, started bool, cleared *contextwin.Checkpoint) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.conv.mu.Lock()
	defer k.conv.mu.Unlock()
	used, _ := k.conv.ledger.Used()
	window := k.opts.window(f.policy)
	th := f.policy.Check(used, window)
	// The first tier: old tool results cleared, when that pays; a summary only when it is not
	// enough. What was decided, and why, is kept for the meter.
	if th == contextwin.Below {
		k.decision = ""
		e, due := k.earlyPlanLocked(f, calls, used)
		switch {
		case !due || k.job != nil:
		case e.summary == nil:
			cleared, k.decision = k.clearEarlyLocked(f, e)
		default:
			note := k.startAutoLocked(ctx, f, *e.summary, calls, "a summary frees more than clearing old tool results", true)
			k.decision, started = "summarizing the oldest turns before compactAt: "+note, true
		}
	} else if k.job == nil {
		cleared, k.decision = k.firstTierLocked(f, calls, used, window)
		if cleared != nil {
			used, _ = k.conv.ledger.Used()
			th = f.policy.Check(used, window)
		}
	}
	if th != contextwin.Below && k.job == nil && !f.policy.NoSummaries && k.canCompactLocked() {
		if plan, ok := k.conv.planLocked(f, 0); ok && (th == contextwin.Block || k.opts.worth(f, plan, calls)) {
			note := k.startAutoLocked(ctx, f, plan, calls, thresholdNote(f.policy, used, window), th != contextwin.Block)
			k.decision, started = "summarizing the oldest turns: "+note, true
		} else if !ok {
			k.skipAt = len(k.conv.history)
		}
	}
	job = k.job
	// An early compaction overlaps one step (the model call it was started before, and its
	// tools); the next call waits for it. Its summary takes about as long as that call, so the
	// wait is short, and the saving starts at a known call instead of whenever it lands. Not one
	// on Flex: it takes minutes, and the loop goes on until it lands or blockAt comes.
	overlapped := job != nil && !job.route.flex && job.trigger == contextwin.TriggerAuto && job.turn == k.conv.turns && job.call < calls
	wait = job != nil && (th == contextwin.Block || overlapped)
	return job, wait, started, cleared
}

// startAutoLocked starts an automatic compaction as plan cuts it, before the model call calls,
// and returns its note. s.compactor.mu and s.conv.mu must be held.
func (k *compactor) startAutoLocked(ctx context.Context, f planFacts, plan contextwin.Plan, calls int, note string, background bool) string {
	k.startJobLocked(ctx, contextwin.TriggerAuto, "", note, plan, f, background)
	k.job.turn, k.job.call = k.conv.turns, calls
	return k.job.note
}

func thresholdNote(p contextwin.Policy, used, window int) string {
	if p.Check(used, window) == contextwin.Block {
		return fmt.Sprintf("%d ≥ %g × %d", used, p.BlockAt, window)
	}
	return fmt.Sprintf("%d > %g × %d", used, p.CompactAt, window)
}

// worth tells whether compacting early, before the prompt reaches blockAt, pays for itself over
// the calls expected to follow, its summary priced on the model it goes to (cold on another
// one). A summary that will ask for Flex is still weighed at the standard tier's price: Flex is
// best-effort and falls back to the standard tier when shed or waited for, and counting on its
// discount made marginal compactions look worth it, which cost more over a session (reprise
// bench, docs/decisions.md "Cheaper summaries"). Flex is a discount on a decision that pays
// without it. The horizon is a cautious guess: a turn that has made calls calls makes, under a
// Lindy prior (P(T > t) = calls/t), at least calls/3 more three times out of four; and no more
// than its limit leaves. A wrong guess costs one summary call: the compaction at blockAt would
// have come anyway, or not at all.
func (o *Options) worth(f planFacts, plan contextwin.Plan, calls int) bool {
	horizon := min(calls/3, o.MaxTurnRequests-calls)
	saving, cost := plan.Worth(f.prices, f.summary, f.cached, horizon)
	return saving > cost
}

// minClearShare: a clearing before compactAt frees at least the model's cache minimum divided by
// it. A batch that starts past the minimum rebuilds almost nothing, and without a floor the rule
// would clear each small result as soon as it may go, a checkpoint per call for a few hundredths
// of a cent; an eighth of the minimum is the head's margin over it too.
const minClearShare = 8

// earlyClear is what to do before compactAt: nothing, clear (plan), or a summary in its place.
type earlyClear struct {
	plan    contextwin.ClearPlan
	summary *contextwin.Plan
}

// earlyPlanLocked decides whether old tool results are cleared before compactAt, at any size of
// prompt: once the results a clearing would free have cost, call after call, as much as the
// rebuild of the prompt it causes (contextwin.DueClearing, the rent-or-buy rule), and the calls
// after it pay less at the sizes the prompt will have. Without it a long session keeps every
// result until compactAt and pays to read it again at each call. When it is due, a summary is
// taken instead if it gains more over the calls expected to follow: the stubs and calls of
// cleared results pile up in a long session, and only a summary frees them. ok is false when
// nothing is due. s.compactor.mu and s.conv.mu must be held.
func (k *compactor) earlyPlanLocked(f planFacts, calls, used int) (earlyClear, bool) {
	if f.policy.KeepToolResults {
		return earlyClear{}, false
	}
	items, in := k.conv.clearInputLocked(f, calls, 0)
	k.payRentLocked(f, items)
	in.MinFreed = f.cacheMin / minClearShare
	plan, ok := contextwin.DueClearing(items, in)
	if !ok {
		return earlyClear{}, false
	}
	e := earlyClear{plan: plan}
	if f.policy.NoSummaries || !k.canCompactLocked() || k.job != nil {
		return e, true
	}
	// A summary in place of a clearing keeps the prompt above the cache minimum, with a margin
	// for the summary's length: under it, every call would pay the prompt in full. A prompt
	// already under that has nothing a summary could free.
	floor := f.cacheMin + f.cacheMin/8
	if used <= floor {
		return e, true
	}
	if sum, ok := k.conv.planLocked(f, floor); ok {
		saving, cost := sum.Worth(f.prices, f.summary, f.cached, k.opts.horizon(calls))
		if saving-cost > plan.Net() {
			e.summary = &sum
		}
	}
	return e, true
}

// payRentLocked counts what this call pays to keep each result that could be cleared, its tokens
// beyond its stub at the cached price, and sets each item's Held to its sum. Results no longer in
// the history are forgotten. The cached price even under the cache minimum, where the call pays
// them in full: a clearing there costs no rebuild, so it needs no rent to be due, and rent
// counted in full there would make a clearing past the minimum look paid for by calls that
// clearing could not have made cheaper (under the minimum a larger prompt reaches it sooner and
// is cached). s.compactor.mu and s.conv.mu must be held.
func (k *compactor) payRentLocked(f planFacts, items []contextwin.ClearItem) {
	price := f.prices.CachedInput
	rent := make(map[*genai.Content]float64, len(items))
	for i, it := range items {
		if it.Keep || it.Tokens <= it.StubTokens {
			continue
		}
		msg := k.conv.history[it.Index]
		rent[msg] = k.rent[msg] + float64(it.Tokens-it.StubTokens)*price/1e6
		items[i].Held = rent[msg]
	}
	k.rent = rent
}

// clearEarlyLocked does the clearing e plans and words it. s.compactor.mu and s.conv.mu must be
// held.
func (k *compactor) clearEarlyLocked(f planFacts, e earlyClear) (*contextwin.Checkpoint, string) {
	cp := k.conv.clearLocked(e.plan)
	return &cp, fmt.Sprintf("cleared %d old tool results before compactAt, %d tokens freed with no model call: keeping them had cost %s since they could go, "+
		"at least what the rebuild of the prompt costs (%s), and the %d calls after the next save %s", cp.Cleared, e.plan.Freed, f.worth(e.plan.Held), f.worth(e.plan.Rebuild), e.plan.LaterCalls, f.worth(e.plan.Later))
}

// firstTierLocked clears old tool results when clearOrSummarize says so, and words the decision
// either way, in dollars. s.compactor.mu and s.conv.mu must be held.
func (k *compactor) firstTierLocked(f planFacts, calls, used, window int) (*contextwin.Checkpoint, string) {
	plan, ok := k.clearOrSummarize(f, calls, used, window)
	h := k.opts.horizon(calls)
	if ok {
		cp := k.conv.clearLocked(plan)
		return &cp, fmt.Sprintf("cleared %d old tool results, %d tokens freed with no model call: the rebuild of the prompt costs %s, the next %d calls save %s",
			cp.Cleared, plan.Freed, f.worth(plan.Cost), h, f.worth(plan.Saving))
	}
	blockAt := int(f.policy.BlockAt * float64(window))
	if len(plan.Indexes) == 0 {
		if small, _ := k.conv.clearPlanLocked(f, calls, 0); len(small.Indexes) > 0 {
			return nil, fmt.Sprintf("past compactAt, waiting: clearing the %d old tool results that may go would leave the next call past it again; "+
				"at blockAt (%d tokens) the cheaper of clearing and a summary runs", len(small.Indexes), blockAt)
		}
		return nil, fmt.Sprintf("past compactAt, nothing old to clear; at blockAt (%d tokens) the oldest turns are summarized", blockAt)
	}
	return nil, fmt.Sprintf("past compactAt, waiting: clearing %d old tool results would cost %s to rebuild the prompt and save %s over the next %d calls; "+
		"at blockAt (%d tokens) the cheaper of clearing and a summary runs", len(plan.Indexes), f.worth(plan.Cost), f.worth(plan.Saving), h, blockAt)
}

// forcedCost is what clearing as p plans at blockAt costs, in rebuilds, over the calls expected to
// follow: its own, then one like least's (the clearing that frees just what lets the next call
// go) each time the prompt grows back to blockAt. Freeing just that is the cheapest rebuild when
// the results past the cache minimum allow it, but it leaves the call after at blockAt again: one
// result cleared and a rebuild at every call (a checkpoint each in the chat, nine in twelve reads
// in VS Code's e2e); freeing back to compactAt, as a summary would, may rebuild more of the
// prompt once and then not for several calls. s.compactor.mu and s.conv.mu must be held.
func (k *compactor) forcedCost(f planFacts, p, least contextwin.ClearPlan, calls, blockAt int) float64 {
	growth := max(k.conv.growthLocked(f), 1)
	room := max((blockAt-p.After)/growth, 1)
	again := (k.opts.horizon(calls)+room-1)/room - 1
	return max(p.Rebuild, 0) + float64(again)*max(least.Rebuild, 0)
}

// clearOrSummarize chooses the first tier's plan, if any, over a summary. Past compactAt a
// clearing is taken when it pays for itself; at blockAt, where something must free room, the
// clearing that frees enough is taken unless the summary would gain more. s.compactor.mu and
// s.conv.mu must be held.
func (k *compactor) clearOrSummarize(f planFacts, calls, used, window int) (contextwin.ClearPlan, bool) {
	compactAt := int(f.policy.CompactAt * float64(window))
	if f.policy.Check(used, window) != contextwin.Block {
		// Past compactAt, a clearing that leaves the next call past it again would clear one
		// result and rebuild the prompt at every call, a checkpoint each in the chat (VS Code's
		// e2e: nine in a turn of twelve reads, each result past the cache minimum, so each
		// rebuild nearly free): only a batch that leaves room for a call's growth is weighed.
		// Under the cache minimum nothing is cached to rebuild, and the smallest pays at once.
		room := 0
		if used >= f.cacheMin {
			room = used - compactAt + k.conv.growthLocked(f)
		}
		return k.conv.clearPlanAtLeastLocked(f, calls, 0, room)
	}
	blockAt := int(f.policy.BlockAt * float64(window))
	mustFree := used - blockAt + 1
	clear, ok := k.conv.clearPlanLocked(f, calls, mustFree)
	if !ok {
		return clear, ok
	}
	if enough := used - compactAt + 1; enough > mustFree {
		if more, ok := k.conv.clearPlanLocked(f, calls, enough); ok && k.forcedCost(f, more, clear, calls, blockAt) < k.forcedCost(f, clear, clear, calls, blockAt) {
			clear, mustFree = more, enough
		}
	}
	if sum, ok := k.conv.planLocked(f, 0); ok && sum.After < used-mustFree+1 {
		saving, cost := sum.Worth(f.prices, f.summary, f.cached, k.opts.horizon(calls)) // at blockAt: waited for, standard
		if saving-cost > clear.Net() {
			return contextwin.ClearPlan{}, false
		}
	}
	return clear, true
}
