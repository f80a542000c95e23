package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent/gemini"
	"github.com/reprise-dev/reprise/agent/session"
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
}

// canCompactLocked tells whether an automatic compaction is worth starting: not when the last
// attempt found nothing to compact and no model turn was added since.
func (s *Session) canCompactLocked() bool {
	return s.skipAt == 0 || len(s.history) > s.skipAt+1
}

// startJobLocked starts a compaction of the current history as plan cuts it. It runs on its own
// context (a turn that ends does not stop it; a cancelled turn or Close does, through job.cancel).
func (s *Session) startJobLocked(ctx context.Context, trigger contextwin.Trigger, focus, note string, plan contextwin.Plan) {
	jctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	used, _ := s.ledger.Used()
	est := s.ledger.Estimator
	req := contextwin.Request{
		History:         slices.Clone(s.history),
		Task:            s.task,
		Blocks:          slices.Clone(s.blocks),
		State:           s.stateLocked(),
		KeepRecentTurns: plan.Keep,
		Focus:           focus,
		MaxInputTokens:  s.opts.InputTokenLimit * 3 / 4,
		MergeAbove:      s.mergeAbove(),
		Estimator:       &est,
	}
	if note != "" && plan.Split > 1 {
		note = fmt.Sprintf("%s: compacting %d messages", note, plan.Split-1)
		if plan.Keep < s.opts.ContextPolicy.KeepRecentTurns {
			note += fmt.Sprintf(", keeping %d turns (the last %d alone would fill the budget)", plan.Keep, s.opts.ContextPolicy.KeepRecentTurns)
		}
	}
	job := &compactionJob{trigger: trigger, focus: focus, note: note, snapshot: len(req.History), before: used, cancel: cancel, done: make(chan struct{})}
	s.job = job
	go func() { // ends when Compact returns: on completion or when job.cancel is called
		defer close(job.done)
		defer cancel()
		job.res, job.err = contextwin.Compact(jctx, req, s.summarize)
	}()
}

// mergeAbove is the size past which the head's summaries are merged into one rather than added
// to: a tenth of the window. Appending keeps the head's prefix cached; merging keeps the head
// small.
func (s *Session) mergeAbove() int {
	return s.Window() / 10
}

// planLocked estimates the compaction that would be done now (see contextwin.PlanCompaction): the
// turns kept adapt so that the prompt after it is under compactAt × budget when possible.
func (s *Session) planLocked() (contextwin.Plan, bool) {
	est := s.ledger.Estimator
	msgs := make([]int, len(s.history))
	for i := range s.history {
		msgs[i] = est.Tokens(s.ledger.MessageEstimate(i))
	}
	before, _ := s.ledger.Used()
	summaryOut := contextwin.DefaultSummaryTokens
	blocks := 0
	for _, b := range s.blocks {
		blocks += est.Tokens(contextwin.EstimateText(b.Summary))
		summaryOut = est.Tokens(contextwin.EstimateText(b.Summary))
	}
	headKept := est.Tokens(contextwin.EstimateText(s.task))
	newHead := headKept + summaryOut + est.Tokens(contextwin.EstimateText(s.stateLocked().Render()))
	if !contextwin.MergesBlocks(s.blocks, &est, s.mergeAbove()) {
		headKept += blocks
		newHead += blocks
	}
	return contextwin.PlanCompaction(msgs, func(i int) bool { return s.history[i] != nil && s.history[i].Role == genai.RoleModel }, contextwin.PlanInput{
		Fixed: est.Tokens(s.prompt.estimate()), Before: before,
		HeadKept: headKept, NewHead: newHead, SummaryOutput: summaryOut,
		MinCached:       s.cacheMinLocked(),
		KeepRecentTurns: s.opts.ContextPolicy.KeepRecentTurns,
		Target:          int(s.opts.ContextPolicy.CompactAt * float64(s.Window())),
	})
}

// worthLocked tells whether compacting early, before the prompt reaches blockAt, pays for itself
// over the calls expected to follow. The horizon is a cautious guess: a turn that has made calls
// calls makes, under a Lindy prior (P(T > t) = calls/t), at least calls/3 more three times out of
// four; and no more than its limit leaves. A wrong guess costs one summary call: the compaction
// at blockAt would have come anyway, or not at all.
func (s *Session) worthLocked(plan contextwin.Plan, calls int) bool {
	horizon := min(calls/3, s.opts.MaxTurnRequests-calls)
	cached := 0
	if s.lastPrompt >= s.cacheMinLocked() {
		cached = s.lastPrompt
	}
	saving, cost := plan.Worth(s.planPricesLocked(), cached, horizon)
	return saving > cost
}

// applyJob installs a finished compaction: the new head and kept messages, then whatever was
// appended while it ran. It returns a stop reason when the loop guard trips.
func (s *Session) applyJob(em *emitter) StopReason {
	s.mu.Lock()
	job := s.job
	if job == nil {
		s.mu.Unlock()
		return ""
	}
	select {
	case <-job.done:
	default:
		s.mu.Unlock()
		return ""
	}
	s.job = nil
	ev := &CompactionEvent{Trigger: job.trigger, Note: job.note}
	var stop StopReason
	switch {
	case errors.Is(job.err, contextwin.ErrNothingToCompact):
		ev.State = CompactionSkipped
		s.skipAt = len(s.history)
	case job.err != nil:
		ev.State = CompactionCancelled
	default:
		cp := s.installLocked(job)
		ev.State, ev.Checkpoint = CompactionDone, &cp
		if s.noProgress >= s.opts.ContextPolicy.MaxCompactionsWithoutProgress {
			stop = StopCompactionLimit
		}
	}
	u := s.usageLocked()
	s.mu.Unlock()
	if em != nil {
		em.send(Event{Type: EventCompaction, Compaction: ev})
		em.send(Event{Type: EventUsage, Usage: &u})
		if stop != "" {
			em.send(Event{Type: EventText, Text: s.handoff()})
		}
	}
	return stop
}

// installLocked swaps the history and records the checkpoint.
func (s *Session) installLocked(job *compactionJob) contextwin.Checkpoint {
	res := job.res
	// The head states the harness's state as it is now, not as it was when the summary began:
	// edits made while the summarizer ran are part of it.
	head := contextwin.HeadContent(s.task, res.Blocks, s.stateLocked())
	undo := session.UndoFrame{Before: s.history, Blocks: s.blocks}
	h := session.Compact(s.history, head, res.Split)
	s.history = h
	undo.AfterLen = len(h)
	s.undo = append(s.undo, undo)
	s.ledger.Reset(h)
	s.blocks = res.Blocks
	after, _ := s.ledger.Used()
	cp := contextwin.Checkpoint{
		N:            len(s.checkpoints) + 1,
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
		Time:         s.opts.Now(),
	}
	if cp.Title == "" {
		cp.Title = fmt.Sprintf("Compaction %d", cp.N)
	}
	s.checkpoints = append(s.checkpoints, cp)
	s.transcript = append(s.transcript, session.Entry{Checkpoint: &cp, Turn: s.turns})
	s.journal(session.Record{Kind: session.KindCompaction, Compaction: &session.Compaction{
		Head: h[0], Split: res.Split, Blocks: res.Blocks, Checkpoint: cp,
	}})
	// A compaction that leaves the prompt where the next call must wait for another one made no
	// progress; one under blockAt leaves room to go on.
	if s.opts.ContextPolicy.Check(after, s.Window()) == contextwin.Block {
		s.noProgress++
	} else {
		s.noProgress = 0
	}
	return cp
}

// handoff is the message that ends a session whose compactions no longer free enough room.
func (s *Session) handoff() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.opts.ContextPolicy
	return fmt.Sprintf("\n\nStopped: %d compactions in a row left the context above %g × %d tokens, so compacting again would not help. "+
		"Even the last turn kept verbatim is too large for the budget. Raise contextBudget, "+
		"or start a new session from the latest checkpoint:\n\n%s\n", s.noProgress, p.BlockAt, s.Window(), contextwin.JoinSummaries(s.blocks))
}

func (s *Session) currentJob() *compactionJob {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.job
}

// cancelJob stops a running compaction; the history stays as it was.
func (s *Session) cancelJob() {
	if job := s.currentJob(); job != nil {
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
	if job := s.currentJob(); job != nil {
		select {
		case <-job.done:
		case <-ctx.Done():
			return contextwin.Checkpoint{}, fmt.Errorf("compact session %s: %w", s.ID(), ctx.Err())
		}
		s.applyJob(nil)
	}
	s.mu.Lock()
	if s.job != nil { // a turn started one meanwhile: wait for that one instead
		s.mu.Unlock()
		return s.Compact(ctx, focus)
	}
	plan, ok := s.planLocked()
	if !ok {
		plan.Keep = s.opts.ContextPolicy.KeepRecentTurns
	}
	s.startJobLocked(ctx, contextwin.TriggerManual, focus, "", plan)
	job := s.job
	s.mu.Unlock()
	select {
	case <-job.done:
	case <-ctx.Done():
		job.cancel()
		<-job.done
		s.mu.Lock()
		if s.job == job {
			s.job = nil
		}
		s.mu.Unlock()
		return contextwin.Checkpoint{}, fmt.Errorf("compact session %s: %w", s.ID(), ctx.Err())
	}
	if job.err != nil {
		s.applyJob(nil)
		return contextwin.Checkpoint{}, fmt.Errorf("compact session %s: %w", s.ID(), job.err)
	}
	s.mu.Lock()
	running := s.running
	s.mu.Unlock()
	if !running {
		s.applyJob(nil)
	}
	return job.checkpointFor(s), nil
}

// checkpointFor returns the checkpoint the job produced once installed, or a preview of it while a
// running turn has yet to install it.
func (j *compactionJob) checkpointFor(s *Session) contextwin.Checkpoint {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, cp := range slices.Backward(s.checkpoints) {
		if cp.Summary == contextwin.JoinSummaries(j.res.Blocks) && cp.To == j.res.Split {
			return cp
		}
	}
	return contextwin.Checkpoint{N: len(s.checkpoints) + 1, Title: j.res.Title, Summary: contextwin.JoinSummaries(j.res.Blocks), Trigger: j.trigger, From: 1, To: j.res.Split, Replaced: j.res.Replaced, Covered: j.res.Covered, TokensBefore: j.before}
}

// summarize is the Summarizer handed to contextwin: one unary model call. In context it carries
// the agent's own system instruction and tool declarations, function calling off, so that its
// prefix is the one the agent's calls cached. Its usage is billed to the session like any call.
func (s *Session) summarize(ctx context.Context, sr contextwin.SummaryRequest) (string, error) {
	req := &gemini.Request{System: contextwin.SummaryInstruction, Contents: sr.Contents, Thinking: s.thinking()}
	if sr.InContext {
		s.mu.Lock()
		req.System, req.Tools, req.NoFunctionCalls = s.prompt.text, s.prompt.decls, true
		s.mu.Unlock()
	}
	for ch, err := range s.opts.Model.Generate(ctx, req) {
		if err != nil {
			return "", err
		}
		if ch.Done == nil {
			continue
		}
		u := ch.Done.Usage
		cu := contextwin.CallUsage{Prompt: u.Prompt, Cached: u.Cached, Candidates: u.Candidates, Thoughts: u.Thoughts}
		s.mu.Lock()
		served := cmp.Or(ch.Done.ModelVersion, s.opts.ModelName)
		cost, priced := s.billLocked(served, cu)
		s.journal(session.Record{Kind: session.KindSummaryUsage, Usage: &cu, Cost: cost, Unpriced: !priced, Model: served, ModelStatus: ch.Done.ModelStatus})
		s.mu.Unlock()
		var b strings.Builder
		if ch.Done.Content != nil {
			for _, p := range ch.Done.Content.Parts {
				if !p.Thought {
					b.WriteString(p.Text)
				}
			}
		}
		return b.String(), nil
	}
	return "", errors.New("summarizer: no response")
}

// Close stops a running compaction and waits for it.
func (s *Session) Close() {
	if job := s.currentJob(); job != nil {
		job.cancel()
		<-job.done
	}
}
