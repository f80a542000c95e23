package watch

import (
	"os"
	"path"
	"path/filepath"
	"time"

	"github.com/reprise-dev/reprise/agent/ignore"
)

// isRuleFile reports whether rel holds ignore rules: a change to it changes what is watched.
func isRuleFile(rel string) bool {
	base := path.Base(rel)
	return base == ignore.GitIgnore || base == ignore.RepriseIgnore
}

// loadRules reads the workspace's ignore rules afresh (the matcher caches what it read).
func (w *Watcher) loadRules() {
	w.rules = ignore.New(os.DirFS(w.root), ignore.Options{})
}

// ignored is the default filter: the churning directories and scratch files of defaultIgnore,
// and what git's rules and .repriseignore exclude, so an ignored build tree spends no watch.
// Hidden files are watched: .github holds custom instructions.
func (w *Watcher) ignored(rel string, isDir bool) bool {
	return defaultIgnore(rel, isDir) || (rel != "." && w.rules.Ignored(rel, isDir))
}

// fileState is what a poll compares: a change of either is a change of content, for polling's
// purpose (an edit that keeps both is missed, as by any mtime-based tool).
type fileState struct {
	size, mtime int64
	exists      bool
}

// poll looks at Poll's files and records those that changed since the last poll, the first
// poll only taking note. It runs on the drain goroutine, once watches have run out.
func (w *Watcher) poll(now time.Time) {
	for _, rel := range w.opts.Poll() {
		var st fileState
		if fi, err := os.Stat(filepath.Join(w.root, filepath.FromSlash(rel))); err == nil {
			st = fileState{fi.Size(), fi.ModTime().UnixNano(), true}
		}
		old, known := w.polled[rel]
		w.polled[rel] = st
		switch {
		case !known || old == st:
		case !st.exists:
			w.record(now, rel, Removed)
		case !old.exists:
			w.record(now, rel, Created)
		default:
			w.record(now, rel, Changed)
		}
	}
}
