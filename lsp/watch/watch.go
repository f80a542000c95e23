// Package watch reports file changes in a workspace to the editor backend, so that what the
// agent and the language features know follows edits made outside them (git checkout, a build,
// another editor).
//
// Like gopls's file watcher, it watches every non-ignored directory with fsnotify, drains the
// kernel's events as fast as they come (so its queue does not overflow while the consumer is
// busy) and hands them over in batches: a batch closes after a quiet period (Options.delay) or
// at the latest after Options.maxDelay, holds one net Change per path, and is sorted by path.
//
// Per path, within one batch (see Op for what each means to the consumer):
//
//	last event was a removal                  → Removed (even after a create: see Removed)
//	first event was a create, and it is there → Created (writes after the create add nothing)
//	otherwise (written, or removed and back)  → Changed
//
// A rename is Removed for the old path and Created for the new; a directory that appears
// (mkdir, or moved in) is scanned once, so files made in it before its watch existed are
// reported as Created too. Chmod-only events and ignored paths are dropped. When the kernel
// drops events the batch is just {".", Changed} (rescan everything); when the root itself goes,
// the batch holds {".", Removed} and nothing follows. Symbolic links are reported but not
// followed.
package watch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/reprise-dev/reprise/agent/ignore"
)

// Options tune a Watcher; the zero value is the production setting.
type Options struct {
	// Logger receives the watch-limit warning and fsnotify's errors; nil discards them.
	Logger *slog.Logger
	// Poll names the files (relative, slash-separated) that matter most, the ones the agent has
	// read: once the watches run out, they are polled instead, so what matters is still seen.
	Poll func() []string

	// The rest is set by this package's tests; zero takes the default.

	// delay is the quiet period that closes a batch; default 500ms. Long enough to fold an
	// editor's save (write temp, rename, chmod) or a git checkout into one batch.
	delay time.Duration
	// maxDelay bounds how long a batch stays open while events keep coming, so a long build
	// still reports; default 2s, and never less than delay.
	maxDelay time.Duration
	// maxWatches bounds the watched directories; default 8192. inotify watches are a per-user
	// kernel resource shared with every other watcher on the machine. Past the bound the rest of
	// the tree is not watched, and that is logged once.
	maxWatches int
	// ignore drops paths (relative, slash-separated) and, for directories, all below them;
	// nil means defaultIgnore and the workspace's git ignore rules.
	ignore func(rel string, isDir bool) bool
	// pollEvery is how often Poll's files are looked at once watches ran out; default 2s.
	pollEvery time.Duration
}

const (
	defaultDelay      = 500 * time.Millisecond
	defaultMaxDelay   = 2 * time.Second
	defaultMaxWatches = 8192
	defaultPollEvery  = 2 * time.Second
)

func (o Options) withDefaults() Options {
	if o.delay <= 0 {
		o.delay = defaultDelay
	}
	if o.maxDelay <= 0 {
		o.maxDelay = defaultMaxDelay
	}
	o.maxDelay = max(o.maxDelay, o.delay)
	if o.maxWatches <= 0 {
		o.maxWatches = defaultMaxWatches
	}
	if o.pollEvery <= 0 {
		o.pollEvery = defaultPollEvery
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Watcher watches one workspace tree. Create it with New, deliver with Run (once), and Close it
// to release the kernel watches.
type Watcher struct {
	root string // absolute and clean
	opts Options
	fsw  *fsnotify.Watcher

	// dirs is the set of watched directories (absolute paths). Only New and then the drain
	// goroutine touch it and limitLogged, one after the other, so they need no lock; count
	// mirrors len(dirs) for watches.
	dirs        map[string]struct{}
	limitLogged bool
	count       atomic.Int64
	// rules are the workspace's ignore rules (agent/ignore), rebuilt when a rule file changes;
	// drain goroutine only, like dirs. Unused when opts.ignore is set.
	rules *ignore.Matcher
	// polled is what Poll's files looked like at the last poll; polling starts with the limit.
	polled  map[string]fileState
	polling atomic.Bool

	mu    sync.Mutex // guards batch
	batch *batcher
	wake  chan struct{} // capacity 1: the batch went from empty to pending

	running   atomic.Bool // Run has been called
	closeOnce sync.Once
	closed    chan struct{} // closed by Close
	closeErr  error         // set once by Close
}

// New watches root and every non-ignored directory below it. Events start queueing at once and
// are delivered when Run is called.
func New(root string, opts Options) (*Watcher, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", root, err)
	}
	if fi, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("watch %s: %w", root, err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("watch %s: not a directory", root)
	}
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", root, err)
	}
	o := opts.withDefaults()
	w := &Watcher{
		polled: map[string]fileState{},
		root:   abs,
		opts:   o,
		fsw:    fsw,
		dirs:   make(map[string]struct{}),
		batch:  newBatcher(o.delay, o.maxDelay),
		wake:   make(chan struct{}, 1),
		closed: make(chan struct{}),
	}
	if w.opts.ignore == nil {
		w.loadRules()
		w.opts.ignore = w.ignored
	}
	if err := w.watchDir(abs); err != nil {
		fsw.Close()
		return nil, fmt.Errorf("watch %s: %w", root, err)
	}
	w.addTree(time.Time{}, abs, false)
	return w, nil
}

// Run delivers batches to onBatch, from Run's own goroutine, until ctx is done (returning
// ctx.Err()) or Close is called (returning nil). A batch still open then is dropped: the caller
// is shutting down. Run closes the Watcher when it returns, and may be called only once.
//
// A slow onBatch does not lose events: a separate goroutine keeps draining the kernel's queue
// into the next batch meanwhile.
func (w *Watcher) Run(ctx context.Context, onBatch func([]Change)) error {
	if !w.running.CompareAndSwap(false, true) {
		return errors.New("watch: Run called twice")
	}
	defer w.Close()

	drainCtx, stopDrain := context.WithCancel(ctx)
	drained := make(chan struct{})
	// The drain goroutine is owned by Run. It ends when drainCtx is cancelled (on every return
	// below), when Close is called, or when fsnotify closes its channels; Run waits for it.
	go func() {
		defer close(drained)
		w.drain(drainCtx)
	}()
	defer func() {
		stopDrain()
		<-drained
	}()

	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		w.mu.Lock()
		at, pending := w.batch.due()
		w.mu.Unlock()
		var fire <-chan time.Time
		if pending {
			// The deadline only moves later as events arrive, so waking at the old one and
			// looking again is enough; no reset per event.
			timer.Reset(time.Until(at))
			fire = timer.C
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-w.closed:
			return nil
		case <-drained:
			// The drain ends on ctx (which this select may not have picked yet) or on Close.
			return ctx.Err()
		case <-w.wake:
		case now := <-fire:
			w.mu.Lock()
			changes := w.batch.takeDue(now)
			w.mu.Unlock()
			if len(changes) > 0 {
				onBatch(changes)
			}
		}
	}
}

// Close releases the kernel watches and makes Run return. It is safe to call more than once and
// from any goroutine; later calls return the first call's result.
func (w *Watcher) Close() error {
	w.closeOnce.Do(func() {
		close(w.closed)
		if err := w.fsw.Close(); err != nil {
			w.closeErr = fmt.Errorf("close watcher of %s: %w", w.root, err)
		}
	})
	return w.closeErr
}

// drain moves fsnotify's events into the batch as they come. It returns when ctx is done, the
// Watcher is closed, or fsnotify's channels close.
func (w *Watcher) drain(ctx context.Context) {
	poll := time.NewTicker(w.opts.pollEvery)
	defer poll.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.closed:
			return
		case now := <-poll.C:
			if w.polling.Load() {
				w.poll(now)
			}
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return
			}
			w.handle(time.Now(), ev)
		case err, ok := <-w.fsw.Errors:
			if !ok {
				return
			}
			w.handleError(time.Now(), err)
		}
	}
}

// record adds one change to the open batch and wakes Run if the batch was empty, since only
// then does Run have no deadline to wait for.
func (w *Watcher) record(now time.Time, rel string, op Op) {
	w.mu.Lock()
	wasEmpty := w.batch.empty()
	w.batch.add(now, rel, op)
	w.mu.Unlock()
	if wasEmpty {
		w.poke()
	}
}

func (w *Watcher) poke() {
	select {
	case w.wake <- struct{}{}:
	default: // a wake-up is already pending
	}
}
