package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/contextwin"
)

// compactionJob is one compaction running in the background over a snapshot of the history. The
// session owns it: cancel stops it, done closes when its goroutine ends.
type compactionJob struct {
	trigger     contextwin.Trigger
	focus, note string
	snapshot    int // history length when it started; only appends happen meanwhile
	turn, call  int // the turn and its model call before which an automatic one started
	before      int // tokens used when it started
	cancel      context.CancelFunc
	done        chan struct{}
	res         contextwin.Result
	err         error
	// route is where its summaries go. urgent is the context of a call on Flex: hurry cancels
	// it when the agent comes to wait for the job, which sends the summary to the standard tier.
	route  summaryRoute
	urgent context.Context
	hurry  context.CancelFunc
	// fellBack says why a summary asked on Flex was asked again on the standard tier; written by
	// the job's goroutine, read once done is closed.
	fellBack string
}

// onFlex tells whether the job's summary is still asked on the Flex tier, unfinished: nothing has
// come to wait for it, nothing shed it.
func (j *compactionJob) onFlex() bool {
	select {
	case <-j.done:
		return false
	case <-j.urgent.Done():
		return false
	default:
		return j.route.flex
	}
}

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
	// held is what the calls since the last checkpoint have paid, in cache reads, for old tool
	// results a clearing could have freed; heldAt is the checkpoint count it was summed under
	// (another checkpoint starts the sum again). See contextwin.ClearPlan.Due.
	held   float64
	heldAt int

	// The parts a compaction reads and changes, the session's; set by New.
	conv *Conversation
	bill *billing
	opts *Options
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
}

func (s *Session) planFacts() planFacts {
	f := planFacts{policy: s.policy(), state: s.files.State()}
	f.prices, f.cached, f.cacheMin = s.bill.forPlan()
	f.summaryModel, f.cold, f.flexOK = s.bill.summaryTarget(f.policy)
	f.summary = s.bill.summaryPrices(f.summaryModel)
	return f
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

// mergeAbove is the size past which the head's summaries are merged into one rather than added
// to: a tenth of the window. Appending keeps the head's prefix cached; merging keeps the head
// small.
func (o *Options) mergeAbove(p contextwin.Policy) int {
	return o.window(p) / 10
}

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

// applyJob installs a finished compaction: the new head and kept messages, then whatever was
// appended while it ran. It returns a stop reason when the loop guard trips.
func (s *Session) applyJob(em *emitter) StopReason {
	p := s.policy()
	// The head states the harness's state as it is now, not as it was when the summary began:
	// edits made while the summarizer ran are part of it.
	state := s.files.State()
	pins := s.freshPins() // read before the locks: files are read again for the new head
	k := &s.compactor
	k.mu.Lock()
	job := k.job
	if job == nil {
		k.mu.Unlock()
		return ""
	}
	select {
	case <-job.done:
	default:
		k.mu.Unlock()
		return ""
	}
	k.job = nil
	ev := &CompactionEvent{Trigger: job.trigger, Note: job.note}
	var stop StopReason
	s.conv.mu.Lock()
	switch {
	case errors.Is(job.err, contextwin.ErrNothingToCompact):
		ev.State = CompactionSkipped
		k.skipAt = len(s.conv.history)
	case job.err != nil:
		ev.State = CompactionCancelled
	default:
		cp, progress := s.conv.installLocked(job, p, state, pins)
		ev.State, ev.Checkpoint = CompactionDone, &cp
		// A compaction that leaves the prompt where the next call must wait for another one made
		// no progress; one under blockAt leaves room to go on.
		if progress {
			k.noProgress = 0
		} else {
			k.noProgress++
		}
		if k.noProgress >= p.MaxCompactionsWithoutProgress {
			stop = StopCompactionLimit
		}
	}
	s.conv.mu.Unlock()
	noProgress := k.noProgress
	k.mu.Unlock()
	if em != nil {
		u := s.usage()
		if job.fellBack != "" {
			if w := s.bill.warnOnce("compaction:fellBack", job.fellBack); w != "" {
				em.send(Event{Type: EventWarning, Text: w})
			}
		}
		em.send(Event{Type: EventCompaction, Compaction: ev})
		em.send(Event{Type: EventUsage, Usage: &u})
		if stop != "" {
			em.send(Event{Type: EventText, Text: s.conv.handoff(p, noProgress)})
		}
	}
	return stop
}

// installLocked swaps the history and records the checkpoint. It tells whether the compaction
// left the prompt under blockAt. s.compactor.mu and s.conv.mu must be held.
func (c *Conversation) installLocked(job *compactionJob, p contextwin.Policy, state contextwin.State, fresh []contextwin.Pin) (contextwin.Checkpoint, bool) {
	res := job.res
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
		Trigger:      job.trigger,
		Focus:        job.focus,
		From:         1,
		To:           res.Split,
		Replaced:     res.Replaced,
		Covered:      res.Covered,
		TokensBefore: job.before,
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

// ErrNothingToCompact is returned by Compact when the history is no longer than the turns kept.
var ErrNothingToCompact = contextwin.ErrNothingToCompact

// Compact compacts the session now (the /compact command), with an optional focus for the summary.
// A compaction already running is awaited first. Cancelling ctx abandons it and leaves the history
// unchanged. If a turn is running, the result is installed at the loop's next step, as a
// background compaction would be.
func (s *Session) Compact(ctx context.Context, focus string) (contextwin.Checkpoint, error) {
	if job := s.compactor.currentJob(); job != nil {
		job.hurry() // the user waits for it now
		select {
		case <-job.done:
		case <-ctx.Done():
			return contextwin.Checkpoint{}, fmt.Errorf("compact session %s: %w", s.ID(), ctx.Err())
		}
		s.applyJob(nil)
	}
	job := s.compactor.startManual(ctx, focus, s.planFacts())
	if job == nil { // a turn started one meanwhile: wait for that one instead
		return s.Compact(ctx, focus)
	}
	select {
	case <-job.done:
	case <-ctx.Done():
		job.cancel()
		<-job.done
		s.compactor.mu.Lock()
		if s.compactor.job == job {
			s.compactor.job = nil
		}
		s.compactor.mu.Unlock()
		return contextwin.Checkpoint{}, fmt.Errorf("compact session %s: %w", s.ID(), ctx.Err())
	}
	if job.err != nil {
		s.applyJob(nil)
		return contextwin.Checkpoint{}, fmt.Errorf("compact session %s: %w", s.ID(), job.err)
	}
	if !s.loop.isRunning() {
		s.applyJob(nil)
	}
	return job.checkpointFor(s), nil
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

// checkpointFor returns the checkpoint the job produced once installed, or a preview of it while a
// running turn has yet to install it.
func (j *compactionJob) checkpointFor(s *Session) contextwin.Checkpoint {
	s.conv.mu.Lock()
	defer s.conv.mu.Unlock()
	for _, cp := range slices.Backward(s.conv.checkpoints) {
		if cp.Summary == contextwin.JoinSummaries(j.res.Blocks) && cp.To == j.res.Split {
			return cp
		}
	}
	return contextwin.Checkpoint{N: len(s.conv.checkpoints) + 1, Title: j.res.Title, Summary: contextwin.JoinSummaries(j.res.Blocks), Trigger: j.trigger, From: 1, To: j.res.Split, Replaced: j.res.Replaced, Covered: j.res.Covered, TokensBefore: j.before}
}

// Close stops a running compaction and waits for it, then deletes the explicit cache the session
// uses, so that it stops billing storage when the session ends, whichever front-end ends it.
func (s *Session) Close() {
	if job := s.compactor.currentJob(); job != nil {
		job.cancel()
		<-job.done
	}
	s.caching.stopKeeper()
	// Bounded: a cache not deleted expires with its TTL anyway.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s.caching.Drop(ctx)
	s.settings.mu.Lock()
	sb := s.settings.env.Sandbox
	s.settings.mu.Unlock()
	if err := sb.RemoveTemp(); err != nil {
		s.opts.Logger.Warn("remove the session's temp dir", "session", s.opts.ID, "error", err)
	}
}
