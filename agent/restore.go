package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/agent/tools"
)

// recordChange runs before the agent changes a file: the first time in a turn, the file's previous
// content (or its absence) is kept as a restore point. The files-modified list the harness states
// after a compaction comes from these records, not from the model.
func (s *Session) recordChange(rel string, prev []byte, existed bool) {
	turn := s.conv.turn()
	if s.files.modify(turn, rel) {
		return
	}
	rp := journal.RestorePoint{Turn: turn, Path: rel, Existed: existed}
	if existed && s.opts.Blobs != nil {
		name, err := s.opts.Blobs.SaveBlob(turn, rel, prev)
		if err != nil {
			s.opts.Logger.Warn("restore point not saved", "path", rel, "error", err)
			return
		}
		rp.Blob = name
	}
	s.files.addPoint(rp)
	s.opts.journal(journal.Record{Kind: journal.KindRestorePoint, Turn: turn, RestorePoint: &rp})
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
	first, paths, seen, err := s.pointsFrom(turn)
	if err != nil {
		return nil, err
	}
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
		if err := putBack(root, s.opts.Blobs, s.settings.toolsEnv().Temps, first[rel]); err != nil {
			if escapes(err) { // a symlink swapped in after the checks
				err = fmt.Errorf("%w: it now leads outside the workspace", ErrUnsafeRestore)
			}
			return nil, fmt.Errorf("restore %s: %w", rel, err)
		}
	}
	s.forget(turn, paths)
	return paths, nil
}

// pointsFrom returns the first restore point of each file changed from turn on (what restoring
// that turn puts back), the files sorted, and the hashes of what the agent last saw; ErrBusy while
// a turn runs.
func (s *Session) pointsFrom(turn int) (map[string]journal.RestorePoint, []string, map[string]string, error) {
	if s.loop.isRunning() {
		return nil, nil, nil, ErrBusy
	}
	first, paths, seen := s.files.pointsFrom(turn)
	return first, paths, seen, nil
}

// forget drops the restore points of paths from turn on once they are put back, and journals it.
func (s *Session) forget(turn int, paths []string) {
	s.files.forget(turn, paths)
	for _, rel := range paths {
		s.files.saw(rel)
	}
	r := &journal.Restored{Turn: turn, Paths: paths}
	s.conv.mu.Lock()
	s.conv.transcript = append(s.conv.transcript, journal.Entry{Restored: r, Turn: s.conv.turns})
	s.opts.journal(journal.Record{Kind: journal.KindRestore, Restored: r})
	s.conv.mu.Unlock()
	s.opts.sync()
}

// putBack restores one file through root from blobs, with the tools' atomic write (its temporary
// files recorded in temps): a symlink swapped in after the checks is replaced or refused by root,
// never followed out.
func putBack(root *os.Root, blobs Blobs, temps *tools.Temps, p journal.RestorePoint) error {
	rel := filepath.FromSlash(p.Path)
	if !p.Existed {
		if err := root.Remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	if blobs == nil {
		return errors.New("no restore point content")
	}
	data, err := blobs.ReadBlob(p.Blob)
	if err != nil {
		return err
	}
	return writeBack(root, rel, data, temps)
}

// Refusal is a file a partial restore left alone, and why.
type Refusal struct {
	Path   string
	Reason string
	Hunk   string // the hunk refused, when hunks were asked for
}

// RestorePaths puts back only the given files (workspace-relative or absolute) as they were before
// turn. Unlike RestoreFiles, a file changed since the agent's last write, or no longer safe to
// write, blocks only itself: it is refused with the reason and the others are restored, since the
// user asked for each file by name. A path outside the workspace or not changed by the agent from
// turn on fails the whole call before anything is touched (ErrOutside, ErrNotChanged).
func (s *Session) RestorePaths(turn int, paths []string) (restored []string, refused []Refusal, err error) {
	first, changed, seen, err := s.pointsFrom(turn)
	if err != nil {
		return nil, nil, err
	}
	var want []string
	for _, given := range paths {
		rel, err := s.opts.relPath(given)
		if err != nil {
			return nil, nil, err
		}
		if !slices.Contains(changed, rel) {
			return nil, nil, fmt.Errorf("%s: %w from turn %d on", given, ErrNotChanged, turn)
		}
		if !slices.Contains(want, rel) {
			want = append(want, rel)
		}
	}
	slices.Sort(want)
	root, err := os.OpenRoot(s.opts.Workspace)
	if err != nil {
		return nil, nil, fmt.Errorf("restore: %w", err)
	}
	defer root.Close()
	temps := s.settings.toolsEnv().Temps
	for _, rel := range want {
		if why := swapped(root, rel); why != "" {
			refused = append(refused, Refusal{Path: rel, Reason: fmt.Sprintf("%v: %s", ErrUnsafeRestore, why)})
			continue
		}
		h, err := hashFile(root, rel)
		if w, known := seen[rel]; known && (err == nil && h != w || err != nil && w != "") {
			refused = append(refused, Refusal{Path: rel, Reason: "changed since the agent last wrote it; not restored, so that edit is kept"})
			continue
		}
		if err := putBack(root, s.opts.Blobs, temps, first[rel]); err != nil {
			if escapes(err) {
				err = fmt.Errorf("%w: it now leads outside the workspace", ErrUnsafeRestore)
			}
			refused = append(refused, Refusal{Path: rel, Reason: err.Error()})
			continue
		}
		restored = append(restored, rel)
	}
	if len(restored) > 0 {
		s.forget(turn, restored)
	}
	for _, r := range refused { // the reason stays with the file's row in a reopened chat
		s.conv.review(journal.Review{Turn: turn, Paths: []string{r.Path}, State: journal.ReviewRefused, Reason: r.Reason})
	}
	return restored, refused, nil
}
