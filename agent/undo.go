package agent

import (
	"errors"
	"fmt"

	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/contextwin"
)

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
