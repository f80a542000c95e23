package watch

import (
	"slices"
	"strings"
	"time"
)

// Op is what happened to a path during a batch, as the consumer should act on it.
type Op int

const (
	// Created: the path exists now and did not (as far as the watcher saw) when the batch began.
	// A rename over an existing file also arrives as Created, so treat it as "read it afresh".
	Created Op = iota + 1
	// Changed: the path existed before the batch and still does, with different content
	// (including a delete-and-recreate). A Changed with Path "." means events were lost: rescan
	// the whole workspace.
	Changed
	// Removed: the path, and everything below it if it was a directory, is gone. It may name a
	// path the consumer never saw (created and removed within one batch); ignore those.
	Removed
)

// String keeps logs and test diffs readable.
func (o Op) String() string {
	switch o {
	case Created:
		return "created"
	case Changed:
		return "changed"
	case Removed:
		return "removed"
	}
	return "op(?)"
}

// Change is one path's net change over a batch.
type Change struct {
	Path string // workspace-relative, slash-separated; "." is the workspace root
	Op   Op
}

// rescanAll is the whole batch delivered when the kernel dropped events (queue overflow): the
// consumer cannot know what changed and must rescan the workspace.
var rescanAll = Change{Path: ".", Op: Changed}

// seen is what a batch knows about one path: its first and last raw operation. The first says
// whether the path existed when the batch began, the last whether it exists now.
type seen struct{ first, last Op }

// net folds a path's history into the one Op the consumer acts on. A Removed last always wins,
// even after Created: the Created may have been a rename over a file the consumer knows, so
// dropping the pair could leave it believing in a deleted file, while a Removed for a path it
// never saw costs nothing.
func (s seen) net() Op {
	switch {
	case s.last == Removed:
		return Removed
	case s.first == Created:
		return Created
	default:
		return Changed
	}
}

// batcher collects changes and decides when they are due, without clocks or fsnotify of its
// own, so that the dedup and timing rules can be tested and benchmarked on synthetic events.
// It is not safe for concurrent use; Watcher guards it.
type batcher struct {
	delay    time.Duration // quiet period that closes a batch
	maxDelay time.Duration // bound on how long a batch stays open under a steady stream
	paths    map[string]seen
	lost     bool      // events were dropped: the batch is rescanAll alone
	start    time.Time // first event of the open batch
	last     time.Time // latest event of the open batch
}

func newBatcher(delay, maxDelay time.Duration) *batcher {
	return &batcher{delay: delay, maxDelay: maxDelay, paths: make(map[string]seen)}
}

func (b *batcher) empty() bool { return len(b.paths) == 0 && !b.lost }

func (b *batcher) touch(now time.Time) {
	if b.empty() {
		b.start = now
	}
	b.last = now
}

// add records that op happened to path at now.
func (b *batcher) add(now time.Time, path string, op Op) {
	b.touch(now)
	if b.lost {
		return // the batch is already rescanAll; nothing else in it matters
	}
	s, ok := b.paths[path]
	if !ok {
		s.first = op
	}
	s.last = op
	b.paths[path] = s
}

// overflow records that events were lost at now.
func (b *batcher) overflow(now time.Time) {
	b.touch(now)
	b.lost = true
	clear(b.paths)
}

// due reports when the open batch should be delivered: after a quiet period, or at the latest
// maxDelay after it opened. ok is false when there is nothing to deliver.
func (b *batcher) due() (at time.Time, ok bool) {
	if b.empty() {
		return time.Time{}, false
	}
	quiet, latest := b.last.Add(b.delay), b.start.Add(b.maxDelay)
	if latest.Before(quiet) {
		return latest, true
	}
	return quiet, true
}

// takeDue closes and returns the batch if it is due at now, sorted by path; nil otherwise.
func (b *batcher) takeDue(now time.Time) []Change {
	at, ok := b.due()
	if !ok || now.Before(at) {
		return nil
	}
	return b.take()
}

// take closes and returns the open batch regardless of time.
func (b *batcher) take() []Change {
	if b.lost {
		b.lost = false
		return []Change{rescanAll}
	}
	changes := make([]Change, 0, len(b.paths))
	for p, s := range b.paths {
		changes = append(changes, Change{Path: p, Op: s.net()})
	}
	clear(b.paths)
	slices.SortFunc(changes, func(x, y Change) int { return strings.Compare(x.Path, y.Path) })
	return changes
}
