package agent

import (
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
	trigger, focus, note string
	snapshot             int // history length when it started; only appends happen meanwhile
	before               int // tokens used when it started
	cancel               context.CancelFunc
	done                 chan struct{}
	res                  contextwin.Result
	err                  error
}

// canCompactLocked tells whether an automatic compaction is worth starting: not when the last
// attempt found nothing to compact and no model turn was added since.
func (s *Session) canCompactLocked() bool {
	return s.skipAt == 0 || len(s.history) > s.skipAt+1
}

// startJobLocked starts a compaction of the current history. It runs on its own context (a turn
// that ends does not stop it; a cancelled turn or Close does, through job.cancel).
func (s *Session) startJobLocked(ctx context.Context, trigger, focus, note string) {
	jctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	used, _ := s.ledger.Used()
	est := s.ledger.Estimator
	req := contextwin.Request{
		History:          slices.Clone(s.history),
		Task:             s.task,
		PreviousSummary:  s.summary,
		PreviousCount:    s.covered,
		PreviousRequests: s.requests,
		State:            s.stateLocked(),
		KeepRecentTurns:  s.opts.Policy.KeepRecentTurns,
		Focus:            focus,
		MaxInputTokens:   s.opts.InputTokenLimit * 3 / 4,
		Estimator:        &est,
	}
	if split, ok := contextwin.SplitPoint(req.History, req.KeepRecentTurns); ok && note != "" {
		note = fmt.Sprintf("%s: compacting %d messages", note, split-1)
	}
	job := &compactionJob{trigger: trigger, focus: focus, note: note, snapshot: len(req.History), before: used, cancel: cancel, done: make(chan struct{})}
	s.job = job
	go func() { // ends when Compact returns: on completion or when job.cancel is called
		defer close(job.done)
		defer cancel()
		job.res, job.err = contextwin.Compact(jctx, req, s.summarize)
	}()
}

// applyJob installs a finished compaction: the new head and kept messages, then whatever was
// appended while it ran. It returns a stop reason when the loop guard trips.
func (s *Session) applyJob(em *emitter) string {
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
	stop := ""
	switch {
	case errors.Is(job.err, contextwin.ErrNothingToCompact):
		ev.State = CompactionSkipped
		s.skipAt = len(s.history)
	case job.err != nil:
		ev.State = CompactionCancelled
	default:
		cp := s.installLocked(job)
		ev.State, ev.Checkpoint = CompactionDone, &cp
		if s.noProgress >= s.opts.Policy.MaxCompactionsWithoutProgress {
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
	res.History[0] = &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: contextwin.Head(s.task, res.Requests, res.Covered, res.Summary, s.stateLocked())}}}
	before := s.history
	undo := session.UndoFrame{Before: before, Summary: s.summary, Covered: s.covered, Requests: s.requests}
	s.requests = res.Requests
	h := session.Compact(s.history, res.History[0], res.Split)
	s.history = h
	undo.AfterLen = len(h)
	s.undo = append(s.undo, undo)
	s.ledger.Reset(h)
	s.summary, s.covered = res.Summary, res.Covered
	after, _ := s.ledger.Used()
	cp := contextwin.Checkpoint{
		N:            len(s.checkpoints) + 1,
		Title:        res.Title,
		Summary:      res.Summary,
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
		Head: h[0], Split: res.Split, Summary: res.Summary, Covered: res.Covered, Requests: res.Requests, Checkpoint: cp,
	}})
	if s.opts.Policy.Check(after, s.Window()) != contextwin.Below {
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
	p := s.opts.Policy
	return fmt.Sprintf("\n\nStopped: %d compactions in a row left the context above %g × %d tokens, so compacting again would not help. "+
		"The turns kept verbatim (keepRecentTurns = %d) are too large for the budget. Raise contextBudget, lower keepRecentTurns, "+
		"or start a new session from the latest checkpoint:\n\n%s\n", s.noProgress, p.CompactAt, s.Window(), p.KeepRecentTurns, s.summary)
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
	s.startJobLocked(ctx, "manual", focus, "")
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
		if cp.Summary == j.res.Summary && cp.To == j.res.Split {
			return cp
		}
	}
	return contextwin.Checkpoint{N: len(s.checkpoints) + 1, Title: j.res.Title, Summary: j.res.Summary, Trigger: j.trigger, From: 1, To: j.res.Split, Replaced: j.res.Replaced, Covered: j.res.Covered, TokensBefore: j.before}
}

// summarize is the Summarizer handed to contextwin: one unary model call without tools. Its usage
// is billed to the session like any call.
func (s *Session) summarize(ctx context.Context, prompt string) (string, error) {
	req := &gemini.Request{
		System:   contextwin.SummaryInstruction,
		Contents: []*genai.Content{{Role: genai.RoleUser, Parts: []*genai.Part{{Text: prompt}}}},
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
		s.totals.Add(cu, s.prices)
		s.journal(session.Record{Kind: session.KindSummaryUsage, Usage: &cu, Cost: cu.Cost(s.prices)})
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
