package agent

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/reprise-dev/reprise/agent/diff"
	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/agent/tools"
)

// Bounds of a change's diff: past them the change says so instead, with its counts when the
// files were small enough to compare. A review pane has no use for a 10,000-line diff, and the
// reply must stay well under the server's message limit.
const (
	MaxDiffLines = 400
	MaxDiffBytes = 64 << 10
	// maxCompareBytes bounds each side read to count lines: counts need the whole files.
	maxCompareBytes = 4 << 20
)

// ErrNotChanged is returned for a path the agent did not change in the turns asked about.
var ErrNotChanged = errors.New("not changed by the agent")

// ErrOutside is returned for a path outside the workspace.
var ErrOutside = errors.New("outside the workspace")

// Changes returns the files the agent changed from turn on (1: since the session began), each
// compared from before that turn to the disk now: the same span reprise.restore of that turn
// undoes, so what a reviewer sees is what an undo puts back. Files created and since removed are
// left out: there is nothing to show or to undo.
func (t *Tracker) Changes(turn int) ([]FileChange, error) {
	return t.changes(turn, "")
}

// changes is Changes of every file, or only of the file only when it is not "".
func (t *Tracker) changes(turn int, only string) ([]FileChange, error) {
	first, paths, seen := t.pointsFrom(turn)
	if only != "" {
		paths = slices.DeleteFunc(paths, func(p string) bool { return p != only })
	}
	root, err := os.OpenRoot(t.opts.Workspace)
	if err != nil {
		return nil, fmt.Errorf("changes: %w", err)
	}
	defer root.Close()
	out := []FileChange{}
	for _, rel := range paths {
		c, ok := t.opts.change(root, first[rel])
		if !ok {
			continue
		}
		h, err := hashFile(root, rel)
		if want, known := seen[rel]; known && (err == nil && h != want || err != nil && want != "") {
			c.UserChanged = true
		}
		out = append(out, c)
	}
	return out, nil
}

// change compares one restore point with the file now; false when neither exists.
func (o *Options) change(root *os.Root, p journal.RestorePoint) (FileChange, bool) {
	c := FileChange{Path: p.Path, Turn: p.Turn, State: ChangeModified}
	var old []byte
	oldBig := false
	if p.Existed {
		if o.Blobs == nil {
			c.Note = "the content before the change was not kept"
			return c, true
		}
		b, err := o.Blobs.ReadBlob(p.Blob)
		if err != nil {
			c.Note = fmt.Sprintf("the content before the change cannot be read: %v", err)
			return c, true
		}
		old, oldBig = b, len(b) > maxCompareBytes
	}
	cur, exists, curBig, err := readBounded(root, p.Path, maxCompareBytes)
	switch {
	case err != nil:
		c.Note = fmt.Sprintf("cannot read the file now: %v", err)
		return c, true
	case !p.Existed && !exists:
		return c, false
	case !p.Existed:
		c.State = ChangeCreated
	case !exists:
		c.State = ChangeDeleted
	}
	if oldBig || curBig {
		c.Note = fmt.Sprintf("too large to compare (over %d MiB)", maxCompareBytes>>20)
		return c, true
	}
	if binary(old) || binary(cur) {
		c.Binary, c.Note = true, "binary file"
		return c, true
	}
	ops := diff.Lines(diff.Split(string(old)), diff.Split(string(cur)))
	c.Added, c.Removed = diff.Count(ops)
	from, to := "a/"+p.Path, "b/"+p.Path
	if c.State == ChangeCreated {
		from = "/dev/null"
	} else if c.State == ChangeDeleted {
		to = "/dev/null"
	}
	u := diff.Unified(from, to, ops, 3)
	if n := strings.Count(u, "\n"); n > MaxDiffLines || len(u) > MaxDiffBytes {
		c.Note = fmt.Sprintf("diff too large to show: %d lines (+%d −%d), over the %d-line or %d KiB bound", n, c.Added, c.Removed, MaxDiffLines, MaxDiffBytes>>10)
		return c, true
	}
	c.Diff = u
	if c.State == ChangeModified {
		c.Hunks = hunksOf(p.Path, ops)
	}
	return c, true
}

// readBounded reads rel through root when it is a regular file of at most limit bytes; big says
// it is larger (and nothing is returned). A missing file is not an error.
func readBounded(root *os.Root, rel string, limit int64) (data []byte, exists, big bool, err error) {
	f, err := openRegular(root, rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, false, nil
	}
	if err != nil {
		return nil, false, false, err
	}
	defer f.Close()
	data, err = io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, true, false, err
	}
	if int64(len(data)) > limit {
		return nil, true, true, nil
	}
	return data, true, false, nil
}

// binary is git's test (a NUL in the first 8000 bytes), plus text that is not UTF-8: a diff of
// either would be noise to a reader.
func binary(b []byte) bool {
	return bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0 || !utf8.Valid(b)
}

// relPath turns a path given by an editor into the workspace-relative slash form restore points
// use.
func (o *Options) relPath(given string) (string, error) {
	p := filepath.FromSlash(given)
	if filepath.IsAbs(p) {
		r, err := filepath.Rel(o.Workspace, p)
		if err != nil {
			return "", fmt.Errorf("%s: %w", given, ErrOutside)
		}
		p = r
	}
	p = filepath.Clean(p)
	if p == "." || p == ".." || strings.HasPrefix(p, ".."+string(filepath.Separator)) || filepath.IsAbs(p) || filepath.VolumeName(p) != "" {
		return "", fmt.Errorf("%s: %w", given, ErrOutside)
	}
	return filepath.ToSlash(p), nil
}

// diffOf turns a tool's edit into the event's bounded diff, with secrets masked as in the rest of
// the event.
func (o *Options) diffOf(e *tools.Edit) *Diff {
	d := &Diff{Path: filepath.Join(o.Workspace, filepath.FromSlash(e.Path))}
	switch {
	case len(e.Old) > MaxEditDiffBytes || len(e.New) > MaxEditDiffBytes:
		d.Note = fmt.Sprintf("%s is over %d KiB: the diff is not sent with the edit (reprise.changes gives it, bounded)", e.Path, MaxEditDiffBytes>>10)
		return d
	case binary(e.Old) || binary(e.New):
		d.Note = e.Path + " is a binary file"
		return d
	}
	if e.Existed {
		old := o.Secrets.String(string(e.Old))
		d.OldText = &old
	}
	d.NewText = o.Secrets.String(string(e.New))
	return d
}

// hunksOf gives the changes of ops their ids: a hash of the path, the lines removed and added,
// and which of several identical changes of the file it is.
func hunksOf(path string, ops []diff.Op) []Hunk {
	var out []Hunk
	seen := map[string]int{}
	for _, b := range diff.Blocks(ops) {
		h := sha256.New()
		fmt.Fprintf(h, "%s\x00%s\x01%s", path, strings.Join(b.Lines(ops, true), ""), strings.Join(b.Lines(ops, false), ""))
		key := string(h.Sum(nil))
		fmt.Fprintf(h, "\x02%d", seen[key])
		seen[key]++
		out = append(out, Hunk{ID: "h" + hex.EncodeToString(h.Sum(nil))[:12], OldStart: b.OldStart, OldLines: b.OldLines,
			NewStart: b.NewStart, NewLines: b.NewLines})
	}
	return out
}
