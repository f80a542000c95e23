// Package runner is what the front-ends (LSP, ACP, the CLI) share below their protocols. A
// Runner opens, resumes and hosts the sessions of a process by id: the session cap, one turn at
// a time, cancel, the MCP servers' lifetime and the session stores are written here once. The
// verbs a user applies to a session outside a turn are written here once too, each telling what
// it did as the agent's own events (a compaction's states, the usage after it), which every
// front-end renders as it renders a turn's: a front-end decodes its command into a Verb and
// renders; it never builds an agent.CompactionEvent or re-reads the usage after an operation.
package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/contextwin"
)

// Kind names a verb.
type Kind string

// The verbs.
const (
	// Compact compacts the session now, with Verb.Focus for the summary.
	Compact Kind = "compact"
	// UndoCompaction takes the last compaction back: the messages it replaced return.
	UndoCompaction Kind = "undoCompaction"
	// Pin pins Verb.Pin: a file or a text kept verbatim in every prompt.
	Pin Kind = "pin"
	// Unpin removes the pin Verb.PinID.
	Unpin Kind = "unpin"
	// Restore puts the files the agent changed from Verb.Turn on back as they were before it:
	// all of them, or Verb.Paths (each restored or refused on its own).
	Restore Kind = "restore"
	// Keep records Verb.Paths, changed in Verb.Turn, as kept by the user.
	Keep Kind = "keep"
	// Context reports the session's context: the window by category, the largest items, totals.
	Context Kind = "context"
	// Checkpoints lists the session's checkpoints.
	Checkpoints Kind = "checkpoints"
	// ForgetNote deletes the agent's note Verb.NoteKey (save_note's); the model is told at its
	// next call.
	ForgetNote Kind = "forgetNote"
)

// Verb is one operation on a session outside a turn.
type Verb struct {
	Kind  Kind
	Focus string           // Compact: what the summary must keep ("" for none)
	Pin   agent.PinRequest // Pin
	PinID string           // Unpin
	Turn  int              // Restore, Keep: a turn number, 1 or more
	Paths []string         // Restore (nil: every file), Keep: workspace-relative or absolute
	// Hunks, for Restore and Keep, are hunk ids of the changes from Turn on, in place of Paths.
	Hunks []string
	// NoteKey is the note ForgetNote deletes.
	NoteKey string
}

// Outcome is what a verb did, for the front-end's answer.
type Outcome struct {
	Checkpoint contextwin.Checkpoint // the checkpoint made (Compact) or undone (UndoCompaction)
	Before     int                   // tokens in the context before, and after
	After      int
	Pin        contextwin.PinInfo   // the pin made (Pin)
	Pins       []contextwin.PinInfo // all of them after (Pin, Unpin)
	Files      []string             // the files restored (Restore) or kept (Keep)
	Hunks      []string             // the hunks undone (Restore with Hunks)
	Refused    []agent.Refusal      // the paths (or hunks) Restore did not restore, and why
	Report     agent.Report         // Context
	// Checkpoints are the session's (Checkpoints).
	Checkpoints []contextwin.Checkpoint
	// Notes are the agent's notes left (ForgetNote).
	Notes []contextwin.Note
}

// ErrBadTurn is returned when a verb's turn is not a turn number.
var ErrBadTurn = errors.New("turn must be a turn number (1 or more)")

// ErrUnknownVerb is returned for a Kind the table does not hold.
var ErrUnknownVerb = errors.New("unknown verb")

// verbs is the table: one function per Kind.
var verbs = map[Kind]func(ctx context.Context, s *agent.Session, v Verb, emit func(agent.Event)) (Outcome, error){
	Compact:        compact,
	UndoCompaction: undoCompaction,
	Pin:            pin,
	Unpin:          unpin,
	Restore:        restore,
	Keep:           keep,
	Context: func(_ context.Context, s *agent.Session, _ Verb, _ func(agent.Event)) (Outcome, error) {
		return Outcome{Report: s.Context()}, nil
	},
	Checkpoints: func(_ context.Context, s *agent.Session, _ Verb, _ func(agent.Event)) (Outcome, error) {
		return Outcome{Checkpoints: s.Conversation().Checkpoints()}, nil
	},
	ForgetNote: func(_ context.Context, s *agent.Session, v Verb, _ func(agent.Event)) (Outcome, error) {
		if err := s.Memo().Forget(v.NoteKey); err != nil {
			return Outcome{}, err
		}
		return Outcome{Notes: s.Memo().Notes()}, nil
	},
}

// Do applies v to the hosted session l, as the package's Do, telling its events to emit.
func (r *Runner) Do(ctx context.Context, l *Live, v Verb, emit func(agent.Event)) (Outcome, error) {
	return Do(ctx, l.Session, v, func(ev agent.Event) {
		r.observeEvent(l, ev)
		if emit != nil {
			emit(ev)
		}
	})
}

// Do applies v to s. What happens is told to emit as it happens, in order, from the caller's
// goroutine (nil: not told); the error says why the verb did nothing (ErrBadTurn,
// contextwin.ErrNothingToCompact, ctx's error when it was cancelled, the agent's refusal).
func Do(ctx context.Context, s *agent.Session, v Verb, emit func(agent.Event)) (Outcome, error) {
	f, ok := verbs[v.Kind]
	if !ok {
		return Outcome{}, fmt.Errorf("%w %q", ErrUnknownVerb, v.Kind)
	}
	if emit == nil {
		emit = func(agent.Event) {}
	}
	return f(ctx, s, v, emit)
}

// compact runs a manual compaction: running, then done with its checkpoint and the usage after,
// or skipped (nothing to compact) or cancelled (abandoned or failed: the history is unchanged).
func compact(ctx context.Context, s *agent.Session, v Verb, emit func(agent.Event)) (Outcome, error) {
	state := func(st agent.CompactionState, note string, cp *contextwin.Checkpoint) {
		emit(agent.Event{Type: agent.EventCompaction, Compaction: &agent.CompactionEvent{
			State: st, Trigger: contextwin.TriggerManual, Note: note, Checkpoint: cp}})
	}
	before := s.Usage().Used
	state(agent.CompactionRunning, "", nil)
	cp, err := s.Compact(ctx, v.Focus)
	switch {
	case errors.Is(err, contextwin.ErrNothingToCompact):
		state(agent.CompactionSkipped, "nothing to compact yet", nil)
		return Outcome{Before: before, After: before}, err
	case err != nil && ctx.Err() != nil:
		state(agent.CompactionCancelled, "the history is unchanged", nil)
		return Outcome{Before: before, After: before}, ctx.Err()
	case err != nil:
		state(agent.CompactionCancelled, err.Error(), nil)
		return Outcome{Before: before, After: before}, err
	}
	state(agent.CompactionDone, "", &cp)
	after := s.Usage()
	emit(agent.Event{Type: agent.EventUsage, Usage: &after})
	return Outcome{Checkpoint: cp, Before: before, After: after.Used}, nil
}

// undoCompaction takes the last compaction back and tells the usage after.
func undoCompaction(_ context.Context, s *agent.Session, _ Verb, emit func(agent.Event)) (Outcome, error) {
	before := s.Usage().Used
	cp, err := s.UndoCompaction()
	if err != nil {
		return Outcome{Before: before, After: before}, err
	}
	after := s.Usage()
	emit(agent.Event{Type: agent.EventUsage, Usage: &after})
	return Outcome{Checkpoint: cp, Before: before, After: after.Used}, nil
}

// pin pins v.Pin (while a turn runs, it goes in at the next model call), then tells the pins and
// the usage after.
func pin(ctx context.Context, s *agent.Session, v Verb, emit func(agent.Event)) (Outcome, error) {
	before := s.Usage().Used
	p, err := s.Pin(ctx, v.Pin)
	if err != nil {
		return Outcome{Before: before, After: before}, err
	}
	out := pinsChanged(s, before, emit)
	out.Pin = p.Info()
	return out, nil
}

// unpin removes the pin v.PinID, then tells the pins and the usage after.
func unpin(_ context.Context, s *agent.Session, v Verb, emit func(agent.Event)) (Outcome, error) {
	before := s.Usage().Used
	if err := s.Conversation().Unpin(v.PinID); err != nil {
		return Outcome{Before: before, After: before}, err
	}
	return pinsChanged(s, before, emit), nil
}

// pinsChanged tells the session's pins and its usage.
func pinsChanged(s *agent.Session, before int, emit func(agent.Event)) Outcome {
	pins := contextwin.PinInfos(s.Conversation().Pins())
	emit(agent.Event{Type: agent.EventPins, Pins: pins})
	after := s.Usage()
	emit(agent.Event{Type: agent.EventUsage, Usage: &after})
	return Outcome{Before: before, After: after.Used, Pins: pins}
}

// restore puts the files back as they were before v.Turn: every file the agent changed from it
// on, or v.Paths, each restored or refused on its own. The conversation is unchanged.
func restore(_ context.Context, s *agent.Session, v Verb, _ func(agent.Event)) (Outcome, error) {
	if v.Turn < 1 {
		return Outcome{}, ErrBadTurn
	}
	if len(v.Hunks) > 0 {
		hunks, refused, err := s.HunkReview().Restore(v.Turn, v.Hunks)
		return Outcome{Hunks: hunks, Refused: refused}, err
	}
	if v.Paths == nil {
		files, err := s.RestoreFiles(v.Turn)
		return Outcome{Files: files}, err
	}
	files, refused, err := s.RestorePaths(v.Turn, v.Paths)
	return Outcome{Files: files, Refused: refused}, err
}

// keep records v.Paths as kept in v.Turn, for a chat reopened later.
func keep(_ context.Context, s *agent.Session, v Verb, _ func(agent.Event)) (Outcome, error) {
	if v.Turn < 1 {
		return Outcome{}, ErrBadTurn
	}
	if len(v.Hunks) > 0 {
		files, err := s.HunkReview().Keep(v.Turn, v.Hunks)
		return Outcome{Files: files}, err
	}
	files, err := s.Keep(v.Turn, v.Paths)
	return Outcome{Files: files}, err
}
