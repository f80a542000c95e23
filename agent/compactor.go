package agent

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/contextwin"
)

// compactor is the compaction running in the background and what decides when to start the
// next. Its lock is held while conv.mu is taken to start, install or undo a compaction: a job is
// a snapshot of the history, and no other may start or land until it is in place.
type compactor struct {
	mu         sync.Mutex // guards everything below; taken before conv.mu, never while it is held
	job        *compactionJob
	blocking   bool // the loop waits for job
	skipAt     int  // history length when a compaction found nothing to compact
	noProgress int  // compactions in a row that left the prompt at blockAt
	// decision says what was last decided past compactAt, and why (Usage.Decision).
	decision string
	// rent is what the calls have paid to keep each old tool result since it could be cleared,
	// by message (a cleared or summarized message is a new one): contextwin.DueClearing.
	rent map[*genai.Content]float64

	// The parts a compaction reads and changes, the session's, which its summary calls use too;
	// set by New.
	summaryCalls
}

// lastDecision is what the meter says of the compactor past compactAt.
func (k *compactor) lastDecision() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.decision
}

// state is what Usage shows of the compactor.
func (k *compactor) state() CompactionState {
	k.mu.Lock()
	defer k.mu.Unlock()
	switch {
	case k.blocking:
		return CompactionBlocking
	case k.job != nil:
		return CompactionRunning
	}
	return CompactionIdle
}

// setBlocking records whether the loop waits for the job.
func (k *compactor) setBlocking(b bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.blocking = b
}

// canCompactLocked tells whether an automatic compaction is worth starting: not when the last
// attempt found nothing to compact and no model turn was added since. s.compactor.mu and
// s.conv.mu must be held.
func (k *compactor) canCompactLocked() bool {
	return k.skipAt == 0 || len(k.conv.history) > k.skipAt+1
}

// startJobLocked starts a compaction of the current history as plan cuts it. It runs on its own
// context (a turn that ends does not stop it; a cancelled turn or Close does, through job.cancel).
// background says nothing waits for it yet, so that its summary may ask for Flex.
// s.compactor.mu and s.conv.mu must be held.
func (k *compactor) startJobLocked(ctx context.Context, trigger contextwin.Trigger, focus, note string, plan contextwin.Plan, f planFacts, background bool) {
	jctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	route := k.opts.route(f, background)
	maxInput := k.opts.InputTokenLimit
	if route.cold {
		maxInput = min(maxInput, k.opts.Catalog.InputLimit(route.name))
	}
	c := k.conv
	used, _ := c.ledger.Used()
	est := c.ledger.Estimator
	req := contextwin.Request{
		History:         slices.Clone(c.history),
		Task:            c.task,
		Blocks:          slices.Clone(c.blocks),
		State:           f.state,
		Pins:            slices.Clone(c.pins),
		KeepRecentTurns: plan.Keep,
		Focus:           focus,
		MaxInputTokens:  maxInput * 3 / 4,
		MergeAbove:      k.opts.mergeAbove(f.policy),
		Estimator:       &est,
		SaveRequest:     k.opts.saveRequest,
		StandAlone:      route.cold,
	}
	if note != "" && plan.Split > 1 {
		note = fmt.Sprintf("%s: compacting %d messages", note, plan.Split-1)
		if keep := f.policy.KeepRecentTurns; plan.Keep < keep {
			note += fmt.Sprintf(", keeping %d turns (the last %d alone would fill the budget)", plan.Keep, keep)
		}
	}
	if route.flex {
		note += " (summary asked on the Flex tier)"
	}
	job := &compactionJob{trigger: trigger, focus: focus, note: note, snapshot: len(req.History), before: used, cancel: cancel, done: make(chan struct{}), route: route}
	job.urgent, job.hurry = context.WithCancel(jctx)
	k.job = job
	go func() { // ends when Compact returns: on completion or when job.cancel is called
		defer close(job.done)
		defer cancel()
		job.res, job.err = contextwin.Compact(jctx, req, k.summarizer(job))
	}()
}

// startManual starts the compaction Compact asked for, planned with f, and returns it; nil when
// one is running.
func (k *compactor) startManual(ctx context.Context, focus string, f planFacts) *compactionJob {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.job != nil {
		return nil
	}
	k.conv.mu.Lock()
	defer k.conv.mu.Unlock()
	plan, ok := k.conv.planLocked(f, 0)
	if !ok {
		plan.Keep = f.policy.KeepRecentTurns
	}
	k.startJobLocked(ctx, contextwin.TriggerManual, focus, "", plan, f, false)
	return k.job
}

func (k *compactor) currentJob() *compactionJob {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.job
}

// cancelJob stops a running compaction; the history stays as it was.
func (k *compactor) cancelJob() {
	if job := k.currentJob(); job != nil {
		job.cancel()
	}
}
