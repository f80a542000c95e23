package lsp

import (
	"path"
	"slices"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/lsp/watch"
)

// watch follows the workspace on disk: a file the agent read that changes behind it becomes stale
// (the next model call is told), and a change to a custom-instructions file reloads it. Runs
// until the connection ends.
func (s *server) watch() {
	w, err := watch.New(s.root, watch.Options{Logger: s.opts.Logger, Poll: s.polledFiles})
	if err != nil {
		s.log.Warn("workspace watcher unavailable: changes on disk will not be noticed", "error", err)
		return
	}
	defer w.Close()
	if err := w.Run(s.ctx, s.filesChanged); err != nil && s.ctx.Err() == nil {
		s.log.Warn("workspace watcher stopped", "error", err)
	}
}

// polledFiles are the files watched by polling once the watches run out: the custom
// instructions and every file a live session has read.
func (s *server) polledFiles() []string {
	files := slices.Clone(agent.InstructionFiles)
	for _, l := range s.sessions.all() {
		files = append(files, l.Files().SeenFiles()...)
	}
	slices.Sort(files)
	return slices.Compact(files)
}

// filesChanged handles one batch of changes.
func (s *server) filesChanged(changes []watch.Change) {
	paths := make([]string, 0, len(changes))
	rescan := false
	for _, c := range changes {
		if c.Path == "." {
			rescan = true
			continue
		}
		paths = append(paths, c.Path)
	}
	instructions := rescan || slices.ContainsFunc(paths, func(p string) bool {
		return slices.Contains(agent.InstructionFiles, path.Clean(p))
	})
	s.sessions.runner.FilesChanged(paths, instructions)
}
