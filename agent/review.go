package agent

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/reprise-dev/reprise/agent/journal"
)

// The review of a turn's changes: the files it changed are saved with its end, what the user did
// with them (kept, undone, an undo refused) is saved as it happens, and Transcript folds both into
// the list an editor shows under the turn. A chat reopened after a restart shows the list the live
// one did.

// ReviewState is what became of a file a turn changed. The values are the agent's own: lsp maps
// each to its wire name.
type ReviewState string

// Review states.
const (
	ReviewPending ReviewState = "pending" // nothing yet
	ReviewKept    ReviewState = "kept"
	ReviewUndone  ReviewState = "undone"
	ReviewRefused ReviewState = "refused" // an undo was refused; Reason says why
)

// ChangeRow is one file of a turn's changes with what became of it. Its Diff is empty:
// Changes gives it, bounded, when the user opens it.
type ChangeRow struct {
	FileChange
	Review ReviewState
	Reason string
	// HunksKept counts the file's hunks kept one by one (FileChange.HunksUndone those undone).
	HunksKept int
}

// Keep records that the user keeps the agent's changes to paths (workspace-relative or absolute)
// made in turn, and returns them workspace-relative: a reopened chat lists them kept. A path
// outside the workspace (ErrOutside) or that the turn did not change (ErrNotChanged) records
// nothing.
func (s *Session) Keep(turn int, paths []string) ([]string, error) {
	var rels []string
	for _, given := range paths {
		rel, err := s.opts.relPath(given)
		if err != nil {
			return nil, err
		}
		if !s.files.hasPoint(turn, rel) {
			return nil, fmt.Errorf("%s: %w in turn %d", given, ErrNotChanged, turn)
		}
		if !slices.Contains(rels, rel) {
			rels = append(rels, rel)
		}
	}
	slices.Sort(rels)
	if len(rels) > 0 {
		s.conv.review(journal.Review{Turn: turn, Paths: rels, State: journal.ReviewKept})
	}
	return rels, nil
}

// review saves what became of files a turn changed, in the journal and the transcript.
func (c *Conversation) review(r journal.Review) {
	c.mu.Lock()
	c.transcript = append(c.transcript, journal.Entry{Review: &r, Turn: c.turns})
	c.opts.journal(journal.Record{Kind: journal.KindReview, Review: &r})
	c.mu.Unlock()
	c.opts.sync()
}

// endTurn saves the end of the turn with the files it changed, in the journal and the transcript,
// and returns those files. errText is masked as everything else the editor and the disk get.
func (s *Session) endTurn(reason StopReason, errText string, calls int) []FileChange {
	turn := s.conv.turn()
	changes := s.files.turnChanges(turn)
	saved := make([]journal.ChangedFile, 0, len(changes))
	for _, c := range changes {
		saved = append(saved, journal.ChangedFile{Path: c.Path, State: string(c.State), Added: c.Added, Removed: c.Removed, Binary: c.Binary, Note: c.Note, UserChanged: c.UserChanged})
	}
	end := &journal.TurnEnd{StopReason: string(reason), Error: errText, Calls: calls, Changes: saved}
	s.conv.mu.Lock()
	s.conv.transcript = append(s.conv.transcript, journal.Entry{End: end, Turn: s.conv.turns})
	s.opts.journal(journal.Record{Kind: journal.KindTurnEnd, StopReason: end.StopReason, Error: errText, Changes: saved})
	s.conv.mu.Unlock()
	return changes
}

// turnChanges are the files turn changed, compared from before it to now, without their diffs.
func (t *Tracker) turnChanges(turn int) []FileChange {
	cs, err := t.Changes(turn)
	if err != nil {
		t.opts.Logger.Warn("the turn's changes are not listed", "session", t.opts.ID, "error", err)
		return nil
	}
	out := []FileChange{}
	for _, c := range cs {
		if c.Turn == turn {
			c.Diff, c.Hunks = "", nil
			out = append(out, c)
		}
	}
	return out
}

// keepEdit saves the texts of an edit's diff as blobs (inline when the session keeps none), for
// Transcript to give the diff back.
func (o *Options) keepEdit(rel string, d *Diff) *journal.Edit {
	e := &journal.Edit{Path: rel, Note: d.Note}
	switch {
	case d.Note != "":
		return e
	case o.Blobs == nil:
		text := d.NewText
		e.OldText, e.NewText = d.OldText, &text
		return e
	}
	var err error
	if d.OldText != nil {
		e.Old, err = o.Blobs.SaveText([]byte(*d.OldText))
	}
	if err == nil {
		e.New, err = o.Blobs.SaveText([]byte(d.NewText))
	}
	if err != nil {
		o.Logger.Warn("an edit's texts were not saved", "path", rel, "error", err)
		return &journal.Edit{Path: rel, Note: fmt.Sprintf("the diff of %s was not saved: %v", rel, err)}
	}
	return e
}

// editDiff is the diff an edit showed, from what keepEdit saved.
func (o *Options) editDiff(e *journal.Edit) *Diff {
	d := &Diff{Path: filepath.Join(o.Workspace, filepath.FromSlash(e.Path)), Note: e.Note}
	switch {
	case e.Note != "":
		return d
	case e.NewText != nil:
		d.OldText, d.NewText = e.OldText, *e.NewText
		return d
	case o.Blobs == nil:
		d.Note = "the diff of " + e.Path + " was not kept"
		return d
	}
	read := func(name string) (string, error) {
		b, err := o.Blobs.ReadBlob(name)
		return string(b), err
	}
	text, err := read(e.New)
	if err == nil && e.Old != "" {
		var old string
		old, err = read(e.Old)
		d.OldText = &old
	}
	if err != nil {
		return &Diff{Path: d.Path, Note: fmt.Sprintf("the diff of %s cannot be read: %v", e.Path, err)}
	}
	d.NewText = text
	return d
}
