package watch

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
)

// errLimit stops adding watches: maxWatches or the kernel's own limit was reached.
var errLimit = errors.New("watch limit reached")

// handle turns one fsnotify event into watched-set updates and a change in the open batch. It
// runs on the drain goroutine.
func (w *Watcher) handle(now time.Time, ev fsnotify.Event) {
	abs := filepath.Clean(ev.Name)
	if abs != w.root {
		// Events only come from watched directories, except stale ones from a subtree that was
		// just moved away (its watches still carry the old path until removed): drop those.
		if _, ok := w.dirs[filepath.Dir(abs)]; !ok {
			return
		}
	}
	rel := w.rel(abs)
	if w.rules != nil && isRuleFile(rel) {
		// New rules: directories they no longer ignore get their watches now; those they now
		// ignore keep theirs until they go (events there are dropped from now on).
		w.loadRules()
		defer w.addTree(now, w.root, false)
	}
	switch {
	case ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename):
		_, isDir := w.dirs[abs]
		if abs != w.root && w.opts.ignore(rel, isDir) {
			return
		}
		// Drop the watches now, before any later Create reuses the inode (a rename within the
		// tree): inotify would hand back the old watch under the old name.
		w.unwatchTree(abs)
		w.record(now, rel, Removed)
	case ev.Has(fsnotify.Create):
		fi, err := os.Lstat(abs)
		if err != nil {
			return // already gone; its Remove event follows
		}
		if w.opts.ignore(rel, fi.IsDir()) {
			return
		}
		if fi.IsDir() {
			// Watch and scan first: once a batch names the directory, it is watched.
			w.addTree(now, abs, true)
		}
		w.record(now, rel, Created)
	case ev.Has(fsnotify.Write):
		if !w.opts.ignore(rel, false) {
			w.record(now, rel, Changed)
		}
	}
	// Chmod alone says nothing about content: dropped.
}

// handleError logs fsnotify's errors; on overflow it also re-syncs the watched set with the
// disk (directories may have come and gone unseen) and turns the batch into rescanAll.
func (w *Watcher) handleError(now time.Time, err error) {
	if !errors.Is(err, fsnotify.ErrEventOverflow) {
		w.opts.Logger.Warn("file watcher error", "root", w.root, "err", err)
		return
	}
	w.opts.Logger.Warn("file watcher lost events; asking for a rescan", "root", w.root, "err", err)
	for d := range w.dirs {
		if fi, err := os.Lstat(d); err != nil || !fi.IsDir() {
			w.unwatchTree(d)
		}
	}
	w.addTree(now, w.root, false)
	w.mu.Lock()
	wasEmpty := w.batch.empty()
	w.batch.overflow(now)
	w.mu.Unlock()
	if wasEmpty {
		w.poke()
	}
}

// addTree watches dir and every non-ignored directory below it that is not watched yet. With
// report, everything found below dir is recorded as Created: it was made before its
// directory's watch existed, so no event will tell of it. Each watch is added before its
// directory is read, so an entry made in between shows up in the listing, as an event, or both.
func (w *Watcher) addTree(now time.Time, dir string, report bool) {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if d != nil && d.IsDir() && p != dir && !errors.Is(err, fs.ErrNotExist) {
				w.opts.Logger.Debug("file watcher cannot read directory", "dir", p, "err", err)
			}
			return nil // vanished or unreadable: skip it, keep the rest
		}
		if p == dir {
			return w.watchOrSkip(p)
		}
		rel := w.rel(p)
		if w.opts.ignore(rel, d.IsDir()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if report {
			w.record(now, rel, Created)
		}
		if d.IsDir() {
			return w.watchOrSkip(p)
		}
		return nil
	})
}

// watchOrSkip watches dir and tells WalkDir whether to go on: not into a directory that cannot
// be watched, and nowhere once the limit is reached.
func (w *Watcher) watchOrSkip(dir string) error {
	switch err := w.watchDir(dir); {
	case err == nil:
		return nil
	case errors.Is(err, errLimit):
		return filepath.SkipAll
	default:
		if !errors.Is(err, fs.ErrNotExist) {
			w.opts.Logger.Debug("file watcher cannot watch directory", "dir", dir, "err", err)
		}
		return filepath.SkipDir
	}
}

// watchDir adds one directory's watch, within maxWatches. Reaching the limit (ours or the
// kernel's) is logged once: the tree past it goes unwatched, which the user should know.
func (w *Watcher) watchDir(dir string) error {
	if _, ok := w.dirs[dir]; ok {
		return nil
	}
	if len(w.dirs) >= w.opts.maxWatches {
		w.logLimit(dir, "MaxWatches")
		return errLimit
	}
	if err := w.fsw.Add(dir); err != nil {
		if errors.Is(err, syscall.ENOSPC) {
			w.logLimit(dir, "the kernel's inotify limit (fs.inotify.max_user_watches)")
			return errLimit
		}
		return err
	}
	w.dirs[dir] = struct{}{}
	w.count.Store(int64(len(w.dirs)))
	return nil
}

func (w *Watcher) logLimit(dir, which string) {
	if w.limitLogged {
		return
	}
	w.limitLogged = true
	msg := "file watch limit reached: the rest of the tree is not watched, changes there go unseen"
	if w.opts.Poll != nil {
		msg = "file watch limit reached: the rest of the tree is not watched; the files the agent read are polled instead"
		w.poll(time.Now()) // the first look takes note of the files as they are now
		w.polling.Store(true)
	}
	w.opts.Logger.Warn(msg, "root", w.root, "limit", which, "maxWatches", w.opts.maxWatches,
		"watched", len(w.dirs), "firstUnwatched", w.rel(dir))
}

// unwatchTree drops the watches of dir and of every watched directory below it: they are gone
// or moved, and their count is freed for new ones.
func (w *Watcher) unwatchTree(dir string) {
	if _, ok := w.dirs[dir]; !ok {
		return // a file, or an unwatched directory: nothing below it is watched either
	}
	prefix := dir
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	for d := range w.dirs {
		if d == dir || strings.HasPrefix(d, prefix) {
			// Already gone when the kernel removed the watch with its directory: that is fine.
			_ = w.fsw.Remove(d)
			delete(w.dirs, d)
		}
	}
	w.count.Store(int64(len(w.dirs)))
}

// rel is abs relative to the root, slash-separated; "." for the root itself.
func (w *Watcher) rel(abs string) string {
	r, err := filepath.Rel(w.root, abs)
	if err != nil {
		return filepath.ToSlash(abs) // not below the root; cannot happen for watched paths
	}
	return filepath.ToSlash(r)
}
