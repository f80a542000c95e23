package sandbox

import (
	"fmt"
	"os"
	"path"
	"slices"
	"time"
)

// A confined command cannot write the workspace's own version-control directories, but it can
// create new ones: a `git init` in a sub-directory with a core.fsmonitor, found by the editor's
// repository scan, would run outside the sandbox. So the directories where git, hg or svn keep
// their metadata are listed before an unasked command, and the new ones are moved aside after it.
//
// vcsScanDepth is how deep the scan looks: deeper than an editor's repository detection (VS Code
// scans one level by default) for a margin, shallow enough to be cheap on a large tree.
const vcsScanDepth = 3

// skipDirs are not entered by the scan: dependency and build trees, large and never a place where
// an editor looks for repositories.
var skipDirs = []string{"node_modules", "vendor", "target", "dist", "build", ".venv", "venv", "__pycache__"}

// VCSSnapshot lists the version-control entries (slash paths relative to the workspace) present
// now, to be compared after a command.
func (s *Sandbox) VCSSnapshot() map[string]bool {
	found := map[string]bool{}
	root, err := os.OpenRoot(s.cfg.Workspace)
	if err != nil {
		return found
	}
	defer root.Close()
	level := []string{"."}
	for depth := 0; depth <= vcsScanDepth && len(level) > 0; depth++ {
		var next []string
		for _, dir := range level {
			f, err := root.Open(dir)
			if err != nil {
				continue
			}
			entries, _ := f.ReadDir(-1)
			f.Close()
			for _, e := range entries {
				name := e.Name()
				rel := path.Join(dir, name)
				switch {
				case slices.Contains(VCSDirs, name):
					found[rel] = true
				case e.IsDir() && !slices.Contains(skipDirs, name):
					next = append(next, rel)
				}
			}
		}
		level = next
	}
	return found
}

// QuarantineNew moves aside the version-control entries that were not in before, renaming NAME to
// NAME.reprise-quarantine-TIME: nothing is lost, and no tool takes it for a repository. It
// returns what it moved, for the command's result.
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
	for rel := range after {
		if before[rel] {
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
