package sandbox

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// A confined command cannot write the workspace's version-control directories, but it can
// create new ones: a `git init` in a sub-directory with a core.fsmonitor, found by the editor's
// repository scan or entered by the user's shell, would run outside the sandbox. So the
// directories where git, hg or svn keep their metadata are listed before an unasked command, at
// any depth and under dependency trees too (a nested repository there is one `cd` away), and the
// new ones are moved aside after it; so are the other protected paths (ProtectedPaths: editors'
// and hook managers' files, each repository's hooks directory and included configuration) that
// were not there.
//
// The walk reads directories only (no stat per file) and does not enter the metadata directories
// themselves: BenchmarkVCSSnapshot measures it.

// VCSSnapshot lists the version-control entries (slash paths relative to the workspace) present
// now, with the other protected paths, to be compared after a command.
func (s *Sandbox) VCSSnapshot() map[string]bool {
	found := map[string]bool{}
	root, err := os.OpenRoot(s.cfg.Workspace)
	if err != nil {
		return found
	}
	defer root.Close()
	// The walk opens directories by path rather than through root: it runs when no command of
	// the sandbox does (before one starts, after all it left is killed), so nothing swaps a
	// directory for a symlink meanwhile, and os.Root's checks per component would triple its cost.
	level := []string{"."}
	for len(level) > 0 {
		var next []string
		for _, dir := range level {
			f, err := os.Open(filepath.Join(s.cfg.Workspace, filepath.FromSlash(dir)))
			if err != nil {
				continue
			}
			entries, _ := f.ReadDir(-1) // unsorted, no stat: the types come with the names
			f.Close()
			for _, e := range entries {
				name := e.Name()
				rel := path.Join(dir, name)
				switch {
				case slices.Contains(VCSDirs, name):
					found[rel] = true
				case e.IsDir(): // a symlink is not followed: it is not a directory here
					next = append(next, rel)
				}
			}
		}
		level = next
	}
	repos := []string{"."}
	for rel := range found {
		if dir, ok := repoOf(rel); ok && dir != "." {
			repos = append(repos, dir)
		}
	}
	for _, g := range ProtectedPaths(s.cfg.Workspace, repos) {
		if _, err := root.Lstat(g.Rel); err == nil {
			found[g.Rel] = true
		}
	}
	return found
}

// QuarantineNew moves aside the version-control entries and other protected paths that were not
// in before, renaming NAME to NAME.reprise-quarantine-TIME: nothing is lost, and no tool takes it for
// a repository or a setting. It returns what it moved, for the command's result.
func (s *Sandbox) QuarantineNew(before map[string]bool) []string {
	var moved []string
	after := s.VCSSnapshot()
	if len(after) == 0 {
		return nil
	}
	root, err := os.OpenRoot(s.cfg.Workspace)
	if err != nil {
		return nil
	}
	defer root.Close()
	stamp := time.Now().UTC().Format("20060102T150405")
	var added []string
	for rel := range after {
		if !before[rel] {
			added = append(added, rel)
		}
	}
	slices.Sort(added) // a directory before what it holds: once it is moved, they are too
	for _, rel := range added {
		if slices.ContainsFunc(moved, func(m string) bool { return strings.HasPrefix(rel, m+"/") }) {
			continue
		}
		to := fmt.Sprintf("%s.reprise-quarantine-%s", rel, stamp)
		if err := root.Rename(rel, to); err == nil {
			moved = append(moved, rel)
		}
	}
	slices.Sort(moved)
	return moved
}
