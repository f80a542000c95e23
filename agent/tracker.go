package agent

import (
	"maps"
	"slices"
	"sync"

	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/contextwin"
)

// Tracker is what the harness holds of the workspace, apart from the model: the files the agent
// changed and their restore points, the files it read and what they held, those changed on disk
// since, and the last test verdict. Its methods take mu and no other lock.
type Tracker struct {
	opts *Options // the session's, read-only

	mu            sync.Mutex // guards everything below
	modified      []string   // sorted
	verdict       string
	readPaths     map[string]int    // path → compactions seen when it was last read
	seen          map[string]string // path → hash of the content the agent last read or wrote
	stale         map[string]bool   // files changed on disk since the agent saw them
	unannounced   []string          // stale files the model has not been told about
	rereads       int               // files read again after a compaction
	restorePoints []journal.RestorePoint
}

// State is what the harness holds as a compaction's head states it: the files modified, the
// last test verdict.
func (t *Tracker) State() contextwin.State {
	t.mu.Lock()
	defer t.mu.Unlock()
	return contextwin.State{FilesModified: slices.Clone(t.modified), LastVerdict: t.verdict}
}

// rereadCount is how many files were read again after a compaction.
func (t *Tracker) rereadCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.rereads
}

// setVerdict records the last test verdict.
func (t *Tracker) setVerdict(v string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.verdict = v
}

// noteRead records that the agent read path when the history held compactions compactions, and
// counts a re-read of a file last read before one.
func (t *Tracker) noteRead(path string, compactions int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if prev, ok := t.readPaths[path]; ok && prev < compactions {
		t.rereads++
	}
	t.readPaths[path] = compactions
}

// rememberLocked records what the agent now knows of rel.
func (t *Tracker) rememberLocked(rel, hash string) {
	if t.seen == nil {
		t.seen = map[string]string{}
	}
	t.seen[rel] = hash
	delete(t.stale, rel)
	t.unannounced = slices.DeleteFunc(t.unannounced, func(p string) bool { return p == rel })
}

// remember records the hash of rel as the agent just read or wrote it.
func (t *Tracker) remember(rel, hash string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.rememberLocked(rel, hash)
}

// modify adds rel to the files modified and tells whether it already has a restore point for turn.
func (t *Tracker) modify(turn int, rel string) (hasPoint bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !slices.Contains(t.modified, rel) {
		t.modified = append(t.modified, rel)
		slices.Sort(t.modified)
	}
	return slices.ContainsFunc(t.restorePoints, func(p journal.RestorePoint) bool { return p.Turn == turn && p.Path == rel })
}

// addPoint keeps a restore point.
func (t *Tracker) addPoint(rp journal.RestorePoint) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.restorePoints = append(t.restorePoints, rp)
}

// hasPoint tells whether rel has a restore point from turn.
func (t *Tracker) hasPoint(turn int, rel string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.ContainsFunc(t.restorePoints, func(p journal.RestorePoint) bool { return p.Turn == turn && p.Path == rel })
}

// inTurn tells whether some file has a restore point from turn.
func (t *Tracker) inTurn(turn int) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.ContainsFunc(t.restorePoints, func(p journal.RestorePoint) bool { return p.Turn == turn })
}

// ChangedPaths returns, sorted, the files the agent changed from turn on, without reading them:
// what an editor asks on every code action request. A file created and since removed is still
// listed, unlike in Changes.
func (t *Tracker) ChangedPaths(turn int) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var paths []string
	for _, p := range t.restorePoints {
		if p.Turn >= turn && !slices.Contains(paths, p.Path) {
			paths = append(paths, p.Path)
		}
	}
	slices.Sort(paths)
	return paths
}

// pointsFrom returns the first restore point of each file changed from turn on (what restoring
// that turn puts back), the files sorted, and the hashes of what the agent last saw of them.
func (t *Tracker) pointsFrom(turn int) (map[string]journal.RestorePoint, []string, map[string]string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	first := map[string]journal.RestorePoint{}
	var paths []string
	for _, p := range t.restorePoints {
		if p.Turn < turn {
			continue
		}
		if _, ok := first[p.Path]; !ok {
			first[p.Path] = p
			paths = append(paths, p.Path)
		}
	}
	slices.Sort(paths)
	seen := make(map[string]string, len(paths))
	for _, p := range paths {
		if h, ok := t.seen[p]; ok {
			seen[p] = h
		}
	}
	return first, paths, seen
}

// forget drops the restore points of paths from turn on, once they are put back.
func (t *Tracker) forget(turn int, paths []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.restorePoints = slices.DeleteFunc(t.restorePoints, func(p journal.RestorePoint) bool {
		return p.Turn >= turn && slices.Contains(paths, p.Path)
	})
	t.modified = nil
	for _, p := range t.restorePoints {
		if !slices.Contains(t.modified, p.Path) {
			t.modified = append(t.modified, p.Path)
		}
	}
	slices.Sort(t.modified)
}

// seenHashes returns, of paths, those the agent has seen, with the hash of what it saw.
func (t *Tracker) seenHashes(paths []string) map[string]string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := map[string]string{}
	for _, p := range paths {
		if h, ok := t.seen[p]; ok {
			out[p] = h
		}
	}
	return out
}

// markStale records that rel changed on disk since the agent saw it.
func (t *Tracker) markStale(rel string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stale == nil {
		t.stale = map[string]bool{}
	}
	if !t.stale[rel] {
		t.stale[rel] = true
		t.unannounced = append(t.unannounced, rel)
	}
}

// Stale reports whether rel changed on disk since the agent read it.
func (t *Tracker) Stale(rel string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.stale[rel]
}

// toAnnounce returns, sorted, the stale files the model has not been told about.
func (t *Tracker) toAnnounce() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Sorted(slices.Values(t.unannounced))
}

// announced records that the model was told about paths.
func (t *Tracker) announced(paths []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.unannounced = slices.DeleteFunc(t.unannounced, func(p string) bool { return slices.Contains(paths, p) })
}

// SeenFiles are the workspace-relative files the agent has read or written, sorted: the ones
// whose changes on disk matter to it.
func (t *Tracker) SeenFiles() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Sorted(maps.Keys(t.seen))
}
