package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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
	return tools.WriteAtomic(root, rel, data, mode, temps)
}
