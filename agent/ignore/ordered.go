package ignore

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"strings"
	"sync"
	"sync/atomic"
)

// WalkOrdered calls emit for start and every entry below it that is not ignored, hidden or .git,
// in fs.WalkDir's order (depth first, lexical within a directory) on the calling goroutine,
// while directories are read ahead and work runs on up to opts.Workers entries at once: parallel
// reading, ordered output. Symbolic links are passed on, not followed; start itself is never
// filtered, and the rules apply inside it even when it is ignored, as ripgrep searches a path
// given explicitly. work (nil
// for none) gets every entry emit will see, concurrently; its result reaches emit with the
// entry. emit controls the walk as fs.WalkDir's fn does: fs.SkipDir skips a directory (or, for
// a file, the rest of its directory), fs.SkipAll stops with nil, another error stops and is
// returned. Entries read or worked on ahead of a stop are dropped unseen. A cancelled ctx stops
// the walk with ctx's error. WalkOrdered returns once every goroutine it started has.
func WalkOrdered[T any](ctx context.Context, fsys fs.FS, start string, opts WalkOptions,
	work func(rel string, d fs.DirEntry) T, emit func(rel string, d fs.DirEntry, v T) error) error {
	w, d, err := newWalker(fsys, start, opts)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	n := workers(opts)
	window := max(64, 16*n)
	p := &pipeline[T]{
		w:       w,
		reads:   make(chan *listing, 4*n),
		results: make(chan *item[T], window),
		tokens:  make(chan struct{}, window),
	}
	p.items = p.results
	var wg sync.WaitGroup
	if work != nil {
		p.items = make(chan *item[T], window)
		var workWG sync.WaitGroup
		for range n {
			workWG.Go(func() {
				for it := range p.items {
					if ctx.Err() == nil {
						it.v = work(it.rel, it.d)
					}
					p.results <- it // never blocks: at most window items are out
				}
			})
		}
		wg.Go(func() {
			workWG.Wait()
			close(p.results)
		})
	}
	for range n {
		wg.Go(func() {
			for l := range p.reads {
				if ctx.Err() == nil {
					l.kids, l.node, l.err = w.list(l.rel, l.parent)
				}
				close(l.done)
			}
		})
	}
	var produced error
	wg.Go(func() { produced = p.produce(ctx, d) })

	emitted := p.emitAll(ctx, emit)
	cancel() // the producer may still be reading ahead
	for range p.results {
		// Drained so that the workers end.
	}
	wg.Wait()
	switch {
	case errors.Is(emitted, fs.SkipAll):
		return nil
	case emitted != nil:
		return emitted
	case parent.Err() != nil:
		return parent.Err()
	}
	return produced // nil, or why the start could not be read
}

// maxAhead bounds the directory listings WalkOrdered reads ahead of where the walk is.
const maxAhead = 1024

// WalkSorted is WalkOrdered without work: fn sees the entries in fs.WalkDir's order, on the
// calling goroutine, while directories are read ahead in parallel.
func WalkSorted(ctx context.Context, fsys fs.FS, start string, opts WalkOptions, fn func(rel string, d fs.DirEntry) error) error {
	return WalkOrdered(ctx, fsys, start, opts, nil, func(rel string, d fs.DirEntry, _ struct{}) error { return fn(rel, d) })
}

// pipeline is one WalkOrdered: a producer goroutine walks the tree in order as the readers fill
// listings, numbers the entries and sends them to the workers (or straight on), and the caller's
// goroutine puts the results back in order for emit. tokens bound how far ahead of emit the
// producer runs, which bounds memory and keeps sequence numbers within the reorder ring.
type pipeline[T any] struct {
	w       *walker
	reads   chan *listing // producer → readers; closed by the producer
	items   chan *item[T] // producer → workers; results itself when there is no work
	results chan *item[T] // workers → emit; closed once the workers (or, without work, the producer) end
	tokens  chan struct{} // one per item between the producer and emit
	skips   skipList
}

// listing is a directory read ahead by the readers.
type listing struct {
	rel    string
	parent *dirNode
	done   chan struct{} // closed once the fields below are set
	kids   []kid
	node   *dirNode
	err    error
}

type item[T any] struct {
	seq int
	rel string
	d   fs.DirEntry
	v   T
}

// produce walks in order and sends every entry; it ends when the walk does, ctx is done or the
// start cannot be read, and closes the channels it feeds.
func (p *pipeline[T]) produce(ctx context.Context, d fs.DirEntry) error {
	defer close(p.reads)
	defer close(p.items)
	w := &producer[T]{p: p, ctx: ctx}
	if !w.send(p.w.start, d) {
		return ctx.Err()
	}
	if !d.IsDir() {
		return nil
	}
	root, ok := w.ask(p.w.start, nil)
	if !ok {
		return ctx.Err()
	}
	w.stack = []*frame{{l: root}}
	for len(w.stack) > 0 {
		if err := w.step(); err != nil {
			return err
		}
	}
	return nil
}

// producer is produce's state: the directories being walked, innermost last.
type producer[T any] struct {
	p     *pipeline[T]
	ctx   context.Context
	seq   int
	ahead int   // listings asked for ahead and not entered yet
	seen  int32 // skips already applied to the stack
	stack []*frame
}

// frame is one directory being walked.
type frame struct {
	l       *listing
	next    int
	entered bool
	ahead   []*listing // listings of l's subdirectories asked for ahead, by kid
}

// send numbers an entry and hands it on, once emit has room for it.
func (w *producer[T]) send(rel string, d fs.DirEntry) bool {
	if w.ctx.Err() != nil {
		return false // select alone may pick a ready token over Done
	}
	select {
	case w.p.tokens <- struct{}{}:
	case <-w.ctx.Done():
		return false
	}
	w.p.items <- &item[T]{seq: w.seq, rel: rel, d: d} // never blocks: tokens bound the items out
	w.seq++
	return true
}

// ask has the readers list a directory.
func (w *producer[T]) ask(rel string, parent *dirNode) (*listing, bool) {
	l := &listing{rel: rel, parent: parent, done: make(chan struct{})}
	select {
	case w.p.reads <- l:
		return l, true
	case <-w.ctx.Done():
		return nil, false
	}
}

// step advances the walk by one: it enters the innermost directory, leaves the ones emit
// skipped, or sends the next entry.
func (w *producer[T]) step() error {
	f := w.stack[len(w.stack)-1]
	if !f.entered {
		if err := w.enter(f); err != nil {
			return err
		}
	}
	if n := w.p.skips.n.Load(); n != w.seen {
		w.seen = n
		w.leaveSkipped()
		return nil
	}
	if f.next == len(f.l.kids) {
		w.stack = w.stack[:len(w.stack)-1]
		return nil
	}
	i, k := f.next, f.l.kids[f.next]
	f.next++
	if !w.send(k.rel, k.d) {
		return w.ctx.Err()
	}
	if !k.d.IsDir() {
		return nil
	}
	sub := f.aheadOf(i)
	if sub != nil {
		w.ahead--
	} else {
		var ok bool
		if sub, ok = w.ask(k.rel, f.l.node); !ok {
			return w.ctx.Err()
		}
	}
	if w.seen == 0 || !w.p.skips.has(k.rel) {
		w.stack = append(w.stack, &frame{l: sub})
	}
	return nil
}

func (f *frame) aheadOf(i int) *listing {
	if f.ahead == nil {
		return nil
	}
	return f.ahead[i]
}

// enter waits for f's listing, then asks for its subdirectories so that the readers work ahead
// of the walk; up to maxAhead listings wait in memory, and the others are read when reached.
func (w *producer[T]) enter(f *frame) error {
	select {
	case <-f.l.done:
	case <-w.ctx.Done():
		return w.ctx.Err()
	}
	if f.l.err != nil {
		return f.l.err
	}
	f.entered = true
	for i, k := range f.l.kids {
		if !k.d.IsDir() || w.ahead >= maxAhead {
			continue
		}
		if f.ahead == nil {
			f.ahead = make([]*listing, len(f.l.kids))
		}
		var ok bool
		if f.ahead[i], ok = w.ask(k.rel, f.l.node); !ok {
			return w.ctx.Err()
		}
		w.ahead++
	}
	return nil
}

// leaveSkipped leaves the directory emit skipped, if the walk is in it, and forgets the
// listings asked for ahead under it.
func (w *producer[T]) leaveSkipped() {
	for i, g := range w.stack {
		if w.p.skips.has(g.l.rel) {
			for _, f := range w.stack[i:] {
				for _, l := range f.ahead[min(f.next, len(f.ahead)):] {
					if l != nil {
						w.ahead--
					}
				}
			}
			w.stack = w.stack[:i]
			return
		}
	}
}

// emitAll receives the results, restores their order and calls emit, until the results end, ctx
// is done or emit stops the walk; it returns emit's error (fs.SkipAll included) or ctx's.
func (p *pipeline[T]) emitAll(ctx context.Context, emit func(string, fs.DirEntry, T) error) error {
	ring := make([]*item[T], cap(p.tokens))
	next := 0
	skip, skipping := "", false // the directory whose remaining entries are dropped
	for it := range p.results {
		ring[it.seq%len(ring)] = it
		for {
			it := ring[next%len(ring)]
			if it == nil || it.seq != next {
				break
			}
			ring[next%len(ring)] = nil
			next++
			<-p.tokens
			if skipping && within(it.rel, skip) {
				continue
			}
			skipping = false
			if err := ctx.Err(); err != nil {
				return err // it.v may not have been worked out
			}
			err := emit(it.rel, it.d, it.v)
			switch {
			case err == nil:
			case errors.Is(err, fs.SkipDir):
				skip, skipping = it.rel, true
				if !it.d.IsDir() {
					skip = path.Dir(it.rel)
				}
				p.skips.add(skip)
			default:
				return err
			}
		}
	}
	return nil
}

// within reports whether rel is below dir; everything is below ".".
func within(rel, dir string) bool {
	return dir == "." || len(rel) > len(dir) && rel[len(dir)] == '/' && strings.HasPrefix(rel, dir)
}

// skipList tells the producer which directories emit skipped, so that it stops reading them.
type skipList struct {
	mu   sync.Mutex // guards dirs
	dirs []string
	n    atomic.Int32 // len(dirs), read without the lock
}

func (s *skipList) add(dir string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dirs = append(s.dirs, dir)
	s.n.Store(int32(len(s.dirs)))
}

// has reports whether rel is a skipped directory or lies below one.
func (s *skipList) has(rel string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range s.dirs {
		if rel == d || within(rel, d) {
			return true
		}
	}
	return false
}
