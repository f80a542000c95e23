package agent

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/reprise-dev/reprise/agent/diff"
	"github.com/reprise-dev/reprise/agent/journal"
)

// Review by hunk: each change of a modified file (a run of removed and added lines, as
// diff.Blocks cuts it) has an id made of its file and its text, so it stays the same while other
// hunks of the file are kept or undone. Rejecting a hunk writes its old lines back in place of its
// new ones and leaves the rest of the file, the user's own edits included, as it is.

// ErrNoHunk is the reason a hunk id is refused or unknown: no change of the span has that id now.
var ErrNoHunk = errors.New("not among the agent's changes now")

// HunkReview is the review of the agent's changes hunk by hunk.
type HunkReview struct{ s *Session }

// HunkReview reviews the session's changes hunk by hunk.
func (s *Session) HunkReview() HunkReview { return HunkReview{s} }

// Changes is Tracker.Changes, of every file or only of the file only (workspace-relative) when it
// is not "", with what the user did with each hunk: kept ones marked, undone ones counted. A code
// action asks it for one file at each cursor move, and only that file is diffed.
func (r HunkReview) Changes(turn int, only string) ([]FileChange, error) {
	cs, err := r.s.files.changes(turn, only)
	if err != nil {
		return nil, err
	}
	kept, undone := r.s.conv.hunkReviews(turn)
	for i := range cs {
		for j := range cs[i].Hunks {
			cs[i].Hunks[j].Kept = kept[cs[i].Hunks[j].ID]
		}
		cs[i].HunksUndone = undone[cs[i].Path]
	}
	return cs, nil
}

// hunkReviews returns the hunks kept, and the number undone by file, in reviews of turns from
// turn on.
func (c *Conversation) hunkReviews(turn int) (kept map[string]bool, undone map[string]int) {
	kept, undone = map[string]bool{}, map[string]int{}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.transcript {
		r := e.Review
		if r == nil || len(r.Hunks) == 0 || r.Turn < turn || len(r.Paths) != 1 {
			continue
		}
		switch r.State {
		case journal.ReviewKept:
			for _, id := range r.Hunks {
				kept[id] = true
			}
		case journal.ReviewUndone:
			undone[r.Paths[0]] += len(r.Hunks)
		}
	}
	return kept, undone
}

// located is a file's changes from a turn on, to undo some of them.
type located struct {
	ops    []diff.Op
	blocks []diff.Block
	hunks  []Hunk
	old    []byte
}

// locate finds the file and the change of each id among the files changed from turn on.
func (r HunkReview) locate(root *os.Root, turn int, ids []string) (map[string]string, map[string]*located, error) {
	s := r.s
	first, paths, _, err := s.pointsFrom(turn)
	if err != nil {
		return nil, nil, err
	}
	where, files := map[string]string{}, map[string]*located{}
	for _, rel := range paths {
		p := first[rel]
		if !p.Existed || s.opts.Blobs == nil {
			continue // a created file is one change, reviewed whole
		}
		old, err := s.opts.Blobs.ReadBlob(p.Blob)
		if err != nil || len(old) > maxCompareBytes || binary(old) {
			continue
		}
		cur, exists, big, err := readBounded(root, rel, maxCompareBytes)
		if err != nil || !exists || big || binary(cur) {
			continue
		}
		ops := diff.Lines(diff.Split(string(old)), diff.Split(string(cur)))
		f := &located{ops: ops, blocks: diff.Blocks(ops), hunks: hunksOf(rel, ops), old: old}
		for _, h := range f.hunks {
			if slices.Contains(ids, h.ID) {
				where[h.ID], files[rel] = rel, f
			}
		}
	}
	return where, files, nil
}

// Keep records that the user keeps these hunks of the changes from turn on, and returns the files
// they are in. An id that is not a change now fails the call, and nothing is recorded; one kept
// already is not recorded again.
func (r HunkReview) Keep(turn int, ids []string) ([]string, error) {
	s := r.s
	root, err := os.OpenRoot(s.opts.Workspace)
	if err != nil {
		return nil, fmt.Errorf("keep: %w", err)
	}
	defer root.Close()
	where, _, err := r.locate(root, turn, ids)
	if err != nil {
		return nil, err
	}
	byFile := map[string][]string{}
	for _, id := range ids {
		rel, ok := where[id]
		if !ok {
			return nil, fmt.Errorf("hunk %s: %w from turn %d on", id, ErrNoHunk, turn)
		}
		if !slices.Contains(byFile[rel], id) {
			byFile[rel] = append(byFile[rel], id)
		}
	}
	files := slices.Sorted(maps.Keys(byFile))
	kept, _ := s.conv.hunkReviews(1)
	for _, rel := range files {
		fresh := slices.DeleteFunc(byFile[rel], func(id string) bool { return kept[id] })
		if len(fresh) > 0 {
			s.conv.review(journal.Review{Turn: turn, Paths: []string{rel}, Hunks: fresh, State: journal.ReviewKept})
		}
	}
	return files, nil
}

// Restore puts back, of the changes from turn on, the hunks with these ids, each file written
// once, and leaves every other line as it is. A hunk no longer in its file (the user edited it, or
// it was undone already) or in a file no longer safe to write is refused with the reason, the
// others undone. The model is told the files changed, and reads them again before editing them.
func (r HunkReview) Restore(turn int, ids []string) (undone []string, refused []Refusal, err error) {
	s := r.s
	root, err := os.OpenRoot(s.opts.Workspace)
	if err != nil {
		return nil, nil, fmt.Errorf("restore: %w", err)
	}
	defer root.Close()
	where, files, err := r.locate(root, turn, ids)
	if err != nil {
		return nil, nil, err
	}
	byFile := map[string][]string{}
	for _, id := range ids {
		rel, ok := where[id]
		switch {
		case !ok:
			refused = append(refused, Refusal{Hunk: id, Reason: "this change is no longer in the file: it was edited or undone since"})
		case !slices.Contains(byFile[rel], id):
			byFile[rel] = append(byFile[rel], id)
		}
	}
	_, _, seen, _ := s.pointsFrom(turn)
	for _, rel := range slices.Sorted(maps.Keys(byFile)) {
		did, why := r.undo(root, turn, rel, files[rel], byFile[rel], seen[rel])
		if why != "" {
			for _, id := range byFile[rel] {
				refused = append(refused, Refusal{Path: rel, Hunk: id, Reason: why})
			}
			continue
		}
		undone = append(undone, did...)
	}
	return undone, refused, nil
}

// undoHunks writes rel with the hunks ids put back, and records it; the reason when it cannot.
func (r HunkReview) undo(root *os.Root, turn int, rel string, f *located, ids []string, seenHash string) ([]string, string) {
	s := r.s
	if why := swapped(root, rel); why != "" {
		return nil, fmt.Sprintf("%v: %s", ErrUnsafeRestore, why)
	}
	before, _ := hashFile(root, rel)
	agentsOwn := before == seenHash // no edit of the user's since the agent's last write
	content := diff.Revert(f.ops, f.blocks, func(i int) bool { return slices.Contains(ids, f.hunks[i].ID) })
	if err := writeBack(root, filepath.FromSlash(rel), []byte(content), s.settings.toolsEnv().Temps); err != nil {
		if escapes(err) {
			return nil, fmt.Sprintf("%v: it now leads outside the workspace", ErrUnsafeRestore)
		}
		return nil, err.Error()
	}
	s.conv.review(journal.Review{Turn: turn, Paths: []string{rel}, Hunks: ids, State: journal.ReviewUndone})
	switch {
	case content == string(f.old): // every change undone: as a whole file's undo
		s.forget(turn, []string{rel})
	case agentsOwn:
		s.files.saw(rel) // a later undo of the whole file is not refused for this write
	}
	s.files.markStale(rel)
	return ids, ""
}
