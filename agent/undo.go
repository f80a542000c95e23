package agent

import (
	"errors"
	"fmt"

	"github.com/reprise-dev/reprise/agent/session"
	"github.com/reprise-dev/reprise/contextwin"
)

// ErrCannotUndo explains why a compaction cannot be undone.
var ErrCannotUndo = errors.New("cannot undo the compaction")

// UndoCompaction brings back the history as it was before the last compaction (plus what came
// after it) when that fits the budget, and says why not otherwise. The log keeps everything, so
// nothing is lost either way.
func (s *Session) UndoCompaction() (contextwin.Checkpoint, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running || s.job != nil {
		return contextwin.Checkpoint{}, fmt.Errorf("%w: a turn or a compaction is running", ErrCannotUndo)
	}
	if len(s.undo) == 0 {
		return contextwin.Checkpoint{}, fmt.Errorf("%w: this session has no compaction to undo", ErrCannotUndo)
	}
	f := s.undo[len(s.undo)-1]
	h := session.UndoHistory(f, s.history)
	var l contextwin.Ledger
	l.Estimator = s.ledger.Estimator
	l.SetFixed(s.prompt.estimate())
	l.Reset(h)
	used, _ := l.Used()
	window := s.Window()
	if limit := int(s.opts.ContextPolicy.CompactAt * float64(window)); used > limit {
		return contextwin.Checkpoint{}, fmt.Errorf("%w: the history before it is about %d tokens, over compactAt × budget = %d; it would be compacted again at once (raise contextBudget to undo it)", ErrCannotUndo, used, limit)
	}
	cp := s.checkpoints[len(s.checkpoints)-1]
	s.undo = s.undo[:len(s.undo)-1]
	s.history = h
	s.ledger.Reset(h)
	s.blocks = f.Blocks
	s.checkpoints = s.checkpoints[:len(s.checkpoints)-1]
	s.journal(session.Record{Kind: session.KindUndo})
	return cp, nil
}
