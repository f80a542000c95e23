package agent

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent/session"
	"github.com/reprise-dev/reprise/agent/tools"
	"github.com/reprise-dev/reprise/contextwin"
)

// Journal saves what happens to a session (session.Log implements it). Without one, nothing is
// saved and restore points are not kept.
type Journal interface {
	Append(r session.Record) error
	Sync() error
}

// Blobs keeps restore points' file contents (session.Log implements it).
type Blobs interface {
	SaveBlob(turn int, rel string, data []byte) (string, error)
	ReadBlob(name string) ([]byte, error)
}

// journal appends a record; a failure to save is logged, never fatal to the turn.
func (s *Session) journal(r session.Record) {
	if s.opts.Journal == nil {
		return
	}
	if r.Time.IsZero() {
		r.Time = s.opts.Now()
	}
	if err := s.opts.Journal.Append(r); err != nil {
		s.opts.Logger.Warn("session not saved", "session", s.opts.ID, "error", err)
	}
}

func (s *Session) sync() {
	if s.opts.Journal == nil {
		return
	}
	if err := s.opts.Journal.Sync(); err != nil {
		s.opts.Logger.Warn("session not synced", "session", s.opts.ID, "error", err)
	}
}

// recordChange runs before the agent changes a file: the first time in a turn, the file's previous
// content (or its absence) is kept as a restore point. The files-modified list the harness states
// after a compaction comes from these records, not from the model.
func (s *Session) recordChange(rel string, prev []byte, existed bool) {
	s.mu.Lock()
	turn := s.turns
	seen := slices.ContainsFunc(s.restorePoints, func(p session.RestorePoint) bool { return p.Turn == turn && p.Path == rel })
	if !slices.Contains(s.modified, rel) {
		s.modified = append(s.modified, rel)
		slices.Sort(s.modified)
	}
	s.mu.Unlock()
	if seen {
		return
	}
	rp := session.RestorePoint{Turn: turn, Path: rel, Existed: existed}
	if existed && s.opts.Blobs != nil {
		name, err := s.opts.Blobs.SaveBlob(turn, rel, prev)
		if err != nil {
			s.opts.Logger.Warn("restore point not saved", "path", rel, "error", err)
			return
		}
		rp.Blob = name
	}
	s.mu.Lock()
	s.restorePoints = append(s.restorePoints, rp)
	s.mu.Unlock()
	s.journal(session.Record{Kind: session.KindRestorePoint, Turn: turn, RestorePoint: &rp})
}

// ErrUserChanged is returned by RestoreFiles when files changed since the agent last wrote them.
var ErrUserChanged = errors.New("files changed since the agent last wrote them")

// ErrUnsafeRestore is returned by RestoreFiles when a path now goes through a symlink or ends on
// something other than a regular file: restoring it could write or delete outside the workspace.
var ErrUnsafeRestore = errors.New("cannot restore safely")

// RestoreFiles puts the workspace files the agent changed back as they were before turn. Files
// changed since the agent's last write (by the user, or a build) are not touched: if there are
// any, nothing is restored and the error lists them, so the user decides. Every check, write and
// delete goes through an os.Root on the workspace, so nothing outside it is touched.
func (s *Session) RestoreFiles(turn int) ([]string, error) {
	s.mu.Lock()
	if s.running {
		s.mu.Unlock()
		return nil, ErrBusy
	}
	first := map[string]session.RestorePoint{}
	var paths []string
	for _, p := range s.restorePoints {
		if p.Turn < turn {
			continue
		}
		if _, ok := first[p.Path]; !ok {
			first[p.Path] = p
			paths = append(paths, p.Path)
		}
	}
	seen := maps.Clone(s.seen)
	s.mu.Unlock()
	slices.Sort(paths)
	if len(paths) == 0 {
		return nil, fmt.Errorf("no file was changed by the agent from turn %d on", turn)
	}
	root, err := os.OpenRoot(s.opts.Workspace)
	if err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	defer root.Close()
	var unsafe, changed []string
	for _, rel := range paths {
		if why := swapped(root, rel); why != "" {
			unsafe = append(unsafe, fmt.Sprintf("%s (%s)", rel, why))
			continue
		}
		h, err := hashFile(root, rel)
		ok := err == nil
		if want, known := seen[rel]; known && (ok && h != want || !ok && want != "") {
			changed = append(changed, rel)
		}
	}
	if len(unsafe) > 0 {
		return nil, fmt.Errorf("%w: %s (nothing was restored)", ErrUnsafeRestore, strings.Join(unsafe, ", "))
	}
	if len(changed) > 0 {
		return nil, fmt.Errorf("%w: %s (nothing was restored)", ErrUserChanged, strings.Join(changed, ", "))
	}
	for _, rel := range paths {
		if err := s.putBack(root, first[rel]); err != nil {
			if escapes(err) { // a symlink swapped in after the checks
				err = fmt.Errorf("%w: it now leads outside the workspace", ErrUnsafeRestore)
			}
			return nil, fmt.Errorf("restore %s: %w", rel, err)
		}
	}
	s.mu.Lock()
	s.restorePoints = slices.DeleteFunc(s.restorePoints, func(p session.RestorePoint) bool { return p.Turn >= turn })
	s.modified = nil
	for _, p := range s.restorePoints {
		if !slices.Contains(s.modified, p.Path) {
			s.modified = append(s.modified, p.Path)
		}
	}
	slices.Sort(s.modified)
	s.mu.Unlock()
	for _, rel := range paths {
		s.remember(rel)
	}
	s.journal(session.Record{Kind: session.KindRestore, Restored: &session.Restored{Turn: turn, Paths: paths}})
	s.sync()
	return paths, nil
}

// putBack restores one file through root, with the tools' atomic write: a symlink swapped in
// after the checks is replaced or refused by root, never followed out.
func (s *Session) putBack(root *os.Root, p session.RestorePoint) error {
	rel := filepath.FromSlash(p.Path)
	if !p.Existed {
		if err := root.Remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	if s.opts.Blobs == nil {
		return errors.New("no restore point content")
	}
	data, err := s.opts.Blobs.ReadBlob(p.Blob)
	if err != nil {
		return err
	}
	if dir := filepath.Dir(rel); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	// Restore points do not keep the mode: the file's current one, else a new file's.
	mode := fs.FileMode(0o644)
	if fi, err := root.Lstat(rel); err == nil && fi.Mode().IsRegular() {
		mode = fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	}
	return tools.WriteAtomic(root, rel, data, mode, s.env.Temps)
}

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
	if limit := int(s.opts.Policy.CompactAt * float64(window)); used > limit {
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

// appendRecord is the journal entry for a message appended to the history.
func appendRecord(c *genai.Content) session.Record {
	return session.Record{Kind: session.KindAppend, Content: c}
}

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
