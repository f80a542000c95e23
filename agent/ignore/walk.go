package ignore

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"runtime"
	"sync"
	"sync/atomic"
)

// WalkOptions tune a walk.
type WalkOptions struct {
	Options // where the rules come from
	// IncludeIgnored walks ignored and hidden entries too (ripgrep's --no-ignore --hidden); .git
	// is skipped all the same.
	IncludeIgnored bool
	// Workers is how many goroutines read directories, and in WalkOrdered how many run work;
	// 0 means GOMAXPROCS.
	Workers int
	// Prune, when set, leaves out the directories whose name it accepts, as if ignored (not
	// with IncludeIgnored): trees that drown a listing even where no rule names them.
	Prune func(name string) bool
	// Excluded, when set, is called for each entry left out by the rules, by hiding or by Prune
	// (not .git), possibly from several goroutines at once: a tool can say that it left things
	// out, and how to see them.
	Excluded func(rel string, isDir bool)
}

// walker holds what the directory readers of one walk share; it is read-only once built.
type walker struct {
	fsys     fs.FS
	m        *Matcher // nil with IncludeIgnored
	prune    func(name string) bool
	excluded func(rel string, isDir bool)
	start    string
}

// kid is an entry a directory read keeps.
type kid struct {
	rel string // path in fsys
	d   fs.DirEntry
}

func newWalker(fsys fs.FS, start string, opts WalkOptions) (*walker, fs.DirEntry, error) {
	if !fs.ValidPath(start) {
		return nil, nil, &fs.PathError{Op: "walk", Path: start, Err: fs.ErrInvalid}
	}
	// Stat, not Lstat: a start given explicitly is walked even through a symbolic link.
	fi, err := fs.Stat(fsys, start)
	if err != nil {
		return nil, nil, err
	}
	w := &walker{fsys: fsys, start: start}
	if !opts.IncludeIgnored {
		w.m, w.prune, w.excluded = New(fsys, opts.Options), opts.Prune, opts.Excluded
	}
	return w, fs.FileInfoToDirEntry(fi), nil
}

// list reads the directory rel and returns the entries to walk, in lexical order, and the rules
// of the directory for its subdirectories; parent is the node of the directory rel is in. An
// unreadable directory is an error only at the start; elsewhere what was read is kept, as the
// tools leave out what they cannot read.
func (w *walker) list(rel string, parent *dirNode) ([]kid, *dirNode, error) {
	entries, err := fs.ReadDir(w.fsys, rel)
	if err != nil && rel == w.start {
		return nil, nil, err
	}
	var n *dirNode
	if w.m != nil {
		switch {
		case rel == ".":
			n = w.m.root
		case rel == w.start:
			n = w.m.newNode(w.m.chain(path.Dir(rel)), rel, presentIn(entries))
		default:
			n = w.m.newNode(parent, rel, presentIn(entries))
		}
	}
	dir := rel
	if dir == "." {
		dir = ""
	}
	kids := make([]kid, 0, len(entries))
	for _, e := range entries {
		name := e.Name()
		if name == ".git" {
			continue
		}
		child := join(dir, name)
		if w.m != nil && (name[0] == '.' || (w.prune != nil && e.IsDir() && w.prune(name)) ||
			w.m.excludes(n, child, name, e.IsDir())) {
			if w.excluded != nil {
				w.excluded(child, e.IsDir())
			}
			continue
		}
		kids = append(kids, kid{child, e})
	}
	return kids, n, nil
}

func workers(opts WalkOptions) int {
	if opts.Workers > 0 {
		return opts.Workers
	}
	return runtime.GOMAXPROCS(0)
}

// Walk calls fn for start and every entry below it that is not ignored, hidden or .git, like
// fs.WalkDir but with opts.Workers goroutines reading directories at once: fn is called
// concurrently and in no particular order, except that a directory comes before its entries.
// Symbolic links are passed to fn, not followed; start itself is never filtered, and the rules
// apply inside it even when it is ignored, as ripgrep searches a path given explicitly.
//
// fn returning fs.SkipDir for a directory skips it, for a file the rest of its directory;
// fs.SkipAll stops the walk, which returns nil; another error stops it and is returned. A
// cancelled ctx stops it with ctx's error. Calls to fn already under way on other goroutines
// still happen after a stop. Walk returns once every goroutine it started has.
func Walk(ctx context.Context, fsys fs.FS, start string, opts WalkOptions, fn func(rel string, d fs.DirEntry) error) error {
	w, d, err := newWalker(fsys, start, opts)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := fn(start, d); err != nil || !d.IsDir() {
		if errors.Is(err, fs.SkipDir) || errors.Is(err, fs.SkipAll) {
			return nil
		}
		return err
	}
	q := newQueue(job{rel: start})
	var wg sync.WaitGroup
	for range workers(opts) {
		wg.Go(func() {
			for j, ok := q.next(); ok; j, ok = q.next() {
				q.finish(w.walkDir(ctx, j, q, fn))
			}
		})
	}
	wg.Wait()
	q.stop(ctx.Err()) // unless stopped already
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.err
}

// walkDir calls fn on the entries of one directory and returns its subdirectories to walk.
func (w *walker) walkDir(ctx context.Context, j job, q *queue, fn func(string, fs.DirEntry) error) []job {
	if q.halted.Load() {
		return nil
	}
	kids, n, err := w.list(j.rel, j.parent)
	if err != nil {
		q.stop(err)
		return nil
	}
	var subs []job
	for _, k := range kids {
		if err := ctx.Err(); err != nil {
			q.stop(err)
			return nil
		}
		if q.halted.Load() {
			return nil
		}
		err := fn(k.rel, k.d)
		switch {
		case err == nil:
			if k.d.IsDir() {
				subs = append(subs, job{rel: k.rel, parent: n})
			}
		case errors.Is(err, fs.SkipDir):
			if !k.d.IsDir() {
				return subs
			}
		case errors.Is(err, fs.SkipAll):
			q.stop(nil)
			return nil
		default:
			q.stop(err)
			return nil
		}
	}
	return subs
}

// job is a directory to read.
type job struct {
	rel    string
	parent *dirNode // the rules of the directory holding it
}

// queue hands directories to Walk's goroutines; the walk ends when it is empty and no goroutine
// holds a directory that could add more, or when stopped.
type queue struct {
	mu     sync.Mutex // guards the fields below but halted
	cond   sync.Cond  // signalled when jobs grow, busy drops to 0, or the walk stops
	jobs   []job      // a stack: depth first keeps it short
	busy   int        // jobs taken and not finished
	done   bool
	err    error       // why the walk stopped; nil for the end or fs.SkipAll
	halted atomic.Bool // done, for a cheap check between entries
}

func newQueue(first job) *queue {
	q := &queue{jobs: []job{first}}
	q.cond.L = &q.mu
	return q
}

// next waits for a directory to read; false means the walk is over.
func (q *queue) next() (job, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.jobs) == 0 && q.busy > 0 && !q.done {
		q.cond.Wait()
	}
	if q.done || len(q.jobs) == 0 {
		return job{}, false
	}
	j := q.jobs[len(q.jobs)-1]
	q.jobs = q.jobs[:len(q.jobs)-1]
	q.busy++
	return j, true
}

func (q *queue) finish(subs []job) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.jobs = append(q.jobs, subs...)
	q.busy--
	if len(subs) > 0 || q.busy == 0 {
		q.cond.Broadcast()
	}
}

// stop ends the walk; the first reason is kept.
func (q *queue) stop(err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.done {
		q.done, q.err = true, err
		q.halted.Store(true)
	}
	q.cond.Broadcast()
}
