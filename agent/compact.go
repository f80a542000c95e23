package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/contextwin"
)

// ErrNothingToCompact is returned by Compact when the history is no longer than the turns kept.
var ErrNothingToCompact = contextwin.ErrNothingToCompact

func (s *Session) planFacts() planFacts {
	f := planFacts{policy: s.policy(), state: s.memo.state(s.files.State())}
	f.prices, f.cached, f.cacheMin, f.inTime = s.bill.forPlan()
	f.summaryModel, f.cold, f.flexOK = s.bill.summaryTarget(f.policy)
	f.summary = s.bill.summaryPrices(f.summaryModel)
	return f
}

// applyJob installs a finished compaction: the new head and kept messages, then whatever was
// appended while it ran. It returns a stop reason when the loop guard trips.
func (s *Session) applyJob(em *emitter) StopReason {
	p := s.policy()
	// The head states the harness's state as it is now, not as it was when the summary began:
	// edits made while the summarizer ran are part of it.
	state := s.memo.state(s.files.State())
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
		cp, progress := s.conv.installLocked(job.res, contextwin.Checkpoint{Trigger: job.trigger, Focus: job.focus, TokensBefore: job.before}, p, state, pins)
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
	s.landing.Wait()
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

// landBetween installs job, a background compaction left running by the turn that just ended, as
// soon as it lands, and tells Between: the meter shows the room it freed before the user asks
// again. Not when a turn has begun since (its first call installs it and tells it), nor when
// the job was cancelled or failed (the next turn reports it).
func (s *Session) landBetween(job *compactionJob) {
	if s.opts.Between == nil {
		return
	}
	s.landing.Add(1)
	go func() { // ends when the job does: Close cancels it
		defer s.landing.Done()
		<-job.done
		if job.err != nil && !errors.Is(job.err, contextwin.ErrNothingToCompact) || s.loop.isRunning() {
			return
		}
		s.applyJob(&emitter{yield: func(ev Event, _ error) bool {
			s.opts.Between(ev)
			return true
		}})
	}()
}

// ErrCannotUndo explains why a compaction cannot be undone.
var ErrCannotUndo = errors.New("cannot undo the compaction")

// UndoCompaction brings back the history as it was before the last compaction (plus what came
// after it) when that fits the budget, and says why not otherwise. The log keeps everything, so
// nothing is lost either way.
func (s *Session) UndoCompaction() (contextwin.Checkpoint, error) {
	p := s.policy()
	running := s.loop.isRunning()
	k := &s.compactor
	k.mu.Lock() // no compaction may start until the history is back
	defer k.mu.Unlock()
	if running || k.job != nil {
		return contextwin.Checkpoint{}, fmt.Errorf("%w: a turn or a compaction is running", ErrCannotUndo)
	}
	c := &s.conv
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.undo) == 0 {
		return contextwin.Checkpoint{}, fmt.Errorf("%w: this session has no compaction to undo", ErrCannotUndo)
	}
	f := c.undo[len(c.undo)-1]
	h := journal.UndoHistory(f, c.history)
	var l contextwin.Ledger
	l.Estimator = c.ledger.Estimator
	l.SetFixed(c.prompt.estimate())
	l.Reset(h)
	used, _ := l.Used()
	window := s.opts.window(p)
	if limit := int(p.CompactAt * float64(window)); used > limit {
		return contextwin.Checkpoint{}, fmt.Errorf("%w: the history before it is about %d tokens, over compactAt × budget = %d; it would be compacted again at once (raise contextBudget to undo it)", ErrCannotUndo, used, limit)
	}
	cp := c.checkpoints[len(c.checkpoints)-1]
	c.undo = c.undo[:len(c.undo)-1]
	c.history = h
	c.ledger.Reset(h)
	c.blocks = f.Blocks
	c.checkpoints = c.checkpoints[:len(c.checkpoints)-1]
	s.opts.journal(journal.Record{Kind: journal.KindUndo})
	s.conv.repinLocked() // a pin the undone head alone held goes in again at the next call
	return cp, nil
}
