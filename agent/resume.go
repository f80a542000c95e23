package agent

import (
	"encoding/hex"
	"fmt"
	"slices"

	"github.com/reprise-dev/reprise/agent/session"
	"github.com/reprise-dev/reprise/contextwin"
)

// Resume rebuilds a saved session: its live history exactly as it was last sent (the compacted
// view), checkpoints, totals and the harness state. opts.Journal is the reopened log; a history
// left with unanswered calls by a crash gets the answers Replay made, saved to the log too.
func Resume(opts Options, snap *session.Snapshot) (*Session, error) {
	opts.ID = snap.Meta.ID
	if snap.Policy != nil && opts.Policy == (contextwin.Policy{}) {
		opts.Policy = *snap.Policy
	}
	s, err := New(opts)
	if err != nil {
		return nil, fmt.Errorf("resume session %s: %w", snap.Meta.ID, err)
	}
	h := snap.History
	s.history = slices.Clone(h)
	if a := snap.AnchorLen; a > 0 && a <= len(h) && snap.LastPrompt > 0 {
		s.ledger.Reset(h[:a])
		s.ledger.Observe(snap.LastPrompt)
		for _, c := range h[a:] {
			s.ledger.Append(c)
		}
	} else {
		s.ledger.Reset(h)
	}
	s.task, s.blocks = snap.Task, slices.Clone(snap.Blocks)
	s.checkpoints = slices.Clone(snap.Checkpoints)
	s.undo = slices.Clone(snap.Undo)
	s.totals, s.calls, s.turns, s.lastPrompt = snap.Totals, snap.Calls, snap.Turns, snap.LastPrompt
	s.verdict = snap.Verdict
	s.restorePoints = slices.Clone(snap.RestorePoints)
	s.modified = snap.ModifiedFiles()
	s.capped = s.totals.Capped(s.opts.Policy)
	if !snap.LastActivity.IsZero() {
		s.lastActivity = snap.LastActivity
	}
	s.seen = map[string]string{}
	for p, hash := range snap.Wrote {
		if b, err := hex.DecodeString(hash); err == nil {
			s.seen[p] = string(b)
		}
	}
	s.transcript = slices.Clone(snap.Transcript)
	if snap.Closed != nil {
		s.transcript = append(s.transcript, session.Entry{Content: snap.Closed, Turn: s.turns})
		s.journal(appendRecord(snap.Closed))
	}
	if snap.Interrupted {
		s.journal(session.Record{Kind: session.KindTurnEnd, StopReason: string(StopCancelled)})
		s.sync()
	}
	return s, nil
}
