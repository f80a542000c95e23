package journal

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// ForkPoint is where a fork starts: right after checkpoint Checkpoint was made, or, with Turn,
// just before the user message that began turn Turn (a rewind that keeps the original); neither:
// the session as it is now. Both may not be set.
type ForkPoint struct {
	Checkpoint int
	Turn       int
}

// String names the point as a person reads it: "checkpoint 2", "turn 3".
func (p ForkPoint) String() string {
	switch {
	case p.Turn > 0:
		return fmt.Sprintf("turn %d", p.Turn)
	case p.Checkpoint > 0:
		return fmt.Sprintf("checkpoint %d", p.Checkpoint)
	}
	return "its last step"
}

// ForkError is a fork refused: no such checkpoint or turn in the parent, or no point given.
type ForkError struct{ Msg string }

func (e *ForkError) Error() string { return e.Msg }

// Fork saves session m.ID as session parent was at point at: the parent's records up to there,
// replayed as any log is, so the fork resumes with the conversation, pins, plan, notes, restore
// points and totals of that moment. Its meta is m (Parent and From set here, the workspace and
// model the parent's when m has none); the parent's
// explicit caches are left out (the parent deletes them: the fork must not count on them). The
// restore points and edit texts the records name are copied. The parent's log is only read:
// a session open in this process or another, even mid-turn, can be forked.
func (st *Store) Fork(parent string, at ForkPoint, m Meta) error {
	if at.Checkpoint < 0 || at.Turn < 0 || at.Checkpoint > 0 && at.Turn > 0 {
		return &ForkError{Msg: "fork: give a checkpoint or a turn (1 or more), not both"}
	}
	if err := CheckID(parent); err != nil {
		return fmt.Errorf("fork: %w: %w", ErrNotFound, err)
	}
	if !validID(m.ID) || m.ID == parent {
		return fmt.Errorf("fork: bad id %q", m.ID)
	}
	recs, _, _, err := readRecords(filepath.Join(st.Dir(parent), "events.jsonl"))
	if err != nil {
		return fmt.Errorf("fork session %s: %w", parent, err)
	}
	cut, err := forkCut(recs, at)
	if err != nil {
		return &ForkError{Msg: fmt.Sprintf("fork session %s: %v", parent, err)}
	}
	m.Parent, m.From = parent, at.String()
	for _, r := range recs {
		if r.Kind == KindMeta && r.Meta != nil {
			m.Workspace, m.Model = cmp.Or(m.Workspace, r.Meta.Workspace), cmp.Or(m.Model, r.Meta.Model)
			break
		}
	}
	if m.Created.IsZero() {
		m.Created = time.Now()
	}
	l, err := st.Create(m)
	if err != nil {
		return err
	}
	for _, r := range recs[:cut] {
		if r.Kind == KindMeta || r.Kind == KindCache {
			continue
		}
		if err == nil {
			err = l.Append(r)
		}
	}
	if err == nil {
		err = l.Append(Record{Time: m.Created, Kind: KindFork, Text: fmt.Sprintf("forked from session %s at %s", parent, at)})
	}
	err = errors.Join(err, copyDir(filepath.Join(st.Dir(parent), "restore"), filepath.Join(st.Dir(m.ID), "restore")), l.Close())
	if err != nil {
		_ = os.RemoveAll(st.Dir(m.ID))
		return fmt.Errorf("fork session %s: %w", parent, err)
	}
	return nil
}

// forkCut is how many of recs the fork keeps. After a checkpoint: through its compaction record
// and what the harness recorded with it (its pins read again, settings, notes) up to the next
// step of the conversation; the last such record counts, a compaction undone and made again
// having the same number. Before a turn: every record before its start.
func forkCut(recs []Record, at ForkPoint) (int, error) {
	if at.Turn == 0 && at.Checkpoint == 0 {
		return len(recs), nil
	}
	if at.Turn > 0 {
		turns := 0
		for i, r := range recs {
			if r.Kind == KindTurnStart {
				if r.Turn == at.Turn {
					return i, nil
				}
				turns = max(turns, r.Turn)
			}
		}
		return 0, fmt.Errorf("no turn %d (it has %d)", at.Turn, turns)
	}
	at0, made := -1, 0
	for i, r := range recs {
		if r.Kind == KindCompaction && r.Compaction != nil {
			made = max(made, r.Compaction.Checkpoint.N)
			if r.Compaction.Checkpoint.N == at.Checkpoint {
				at0 = i
			}
		}
	}
	if at0 < 0 {
		return 0, fmt.Errorf("no checkpoint %d (it has %d)", at.Checkpoint, made)
	}
	for j := at0 + 1; j < len(recs); j++ {
		switch recs[j].Kind {
		case KindAppend, KindAmend, KindUsage, KindTurnStart, KindTurnEnd, KindTool, KindCompaction, KindUndo,
			KindRestorePoint, KindRestore, KindWrote, KindReview:
			return j, nil
		}
	}
	return len(recs), nil
}

// copyDir copies the regular files of src into dst (made 0700), each 0600; a missing src copies
// nothing.
func copyDir(src, dst string) error {
	entries, err := os.ReadDir(src)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o700); err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		if err := copyFile(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	return errors.Join(err, out.Close())
}
