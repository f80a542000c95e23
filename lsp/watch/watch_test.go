package watch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const (
	testDelay = 50 * time.Millisecond // long enough that one act lands in one batch under -race
	waitLimit = 10 * time.Second      // generous: only a broken watcher ever waits this long
	sentinel  = "zz-sentinel"         // written last; its arrival means everything before it arrived
)

// mk creates files (with content) and directories (ending in "/") under root.
func mk(t *testing.T, root string, paths ...string) {
	t.Helper()
	for _, p := range paths {
		abs := filepath.Join(root, filepath.FromSlash(p))
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(abs, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(abs, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// start runs a watcher of root until the test ends and returns it with its batches.
func start(t *testing.T, root string, opts Options) (*Watcher, <-chan []Change) {
	t.Helper()
	if opts.delay == 0 {
		opts.delay = testDelay
	}
	w, err := New(root, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	batches := make(chan []Change)
	errc := make(chan error, 1)
	// The Run goroutine is owned by the test: it ends when t.Context() is cancelled as the test
	// finishes, and the cleanup below waits for it.
	go func() {
		errc <- w.Run(ctx, func(c []Change) {
			select {
			case batches <- c:
			case <-ctx.Done():
			}
		})
	}()
	t.Cleanup(func() {
		select {
		case err := <-errc:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Run = %v, want context.Canceled", err)
			}
		case <-time.After(waitLimit):
			t.Errorf("Run did not return after the test's context ended")
		}
	})
	return w, batches
}

// until gathers batches until one holds path and returns all their changes.
func until(t *testing.T, batches <-chan []Change, path string) []Change {
	t.Helper()
	deadline := time.NewTimer(waitLimit)
	defer deadline.Stop()
	var got []Change
	for {
		select {
		case b := <-batches:
			got = append(got, b...)
			if slices.ContainsFunc(b, func(c Change) bool { return c.Path == path }) {
				return got
			}
		case <-deadline.C:
			t.Fatalf("no change to %s within %v; got %v", path, waitLimit, got)
		}
	}
}

func TestWatch(t *testing.T) {
	tests := []struct {
		name        string
		before      []string // made before the watcher starts
		act         func(t *testing.T, root string, seen func(path string))
		want        []Change // besides the sentinel
		wantWatches int
	}{
		{
			name:        "new file",
			act:         func(t *testing.T, root string, _ func(string)) { mk(t, root, "a.go") },
			want:        []Change{{"a.go", Created}},
			wantWatches: 1,
		},
		{
			name:        "existing file written",
			before:      []string{"a.go"},
			act:         func(t *testing.T, root string, _ func(string)) { mk(t, root, "a.go") },
			want:        []Change{{"a.go", Changed}},
			wantWatches: 1,
		},
		{
			name:   "several writes are one change",
			before: []string{"a.go"},
			act: func(t *testing.T, root string, _ func(string)) {
				for i := range 5 {
					if err := os.WriteFile(filepath.Join(root, "a.go"), []byte(strconv.Itoa(i)), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			},
			want:        []Change{{"a.go", Changed}},
			wantWatches: 1,
		},
		{
			name: "file in a new directory",
			act: func(t *testing.T, root string, _ func(string)) {
				mk(t, root, "sub/deep/a.go") // mkdir -p, then write at once
			},
			want:        []Change{{"sub", Created}, {"sub/deep", Created}, {"sub/deep/a.go", Created}},
			wantWatches: 3,
		},
		{
			name: "new directory stays watched",
			act: func(t *testing.T, root string, seen func(string)) {
				mk(t, root, "sub/")
				seen("sub") // sub is watched and scanned now, so b.go comes through sub's watch
				mk(t, root, "sub/b.go")
			},
			want:        []Change{{"sub", Created}, {"sub/b.go", Created}},
			wantWatches: 2,
		},
		{
			name:        "file removed",
			before:      []string{"a.go", "b.go"},
			act:         func(t *testing.T, root string, _ func(string)) { rm(t, root, "a.go") },
			want:        []Change{{"a.go", Removed}},
			wantWatches: 1,
		},
		{
			name:        "directory removed",
			before:      []string{"sub/a.go", "sub/deep/b.go"},
			act:         func(t *testing.T, root string, _ func(string)) { rm(t, root, "sub") },
			want:        []Change{{"sub", Removed}, {"sub/a.go", Removed}, {"sub/deep", Removed}, {"sub/deep/b.go", Removed}},
			wantWatches: 1,
		},
		{
			name:        "file renamed",
			before:      []string{"a.go"},
			act:         func(t *testing.T, root string, _ func(string)) { mv(t, root, "a.go", "b.go") },
			want:        []Change{{"a.go", Removed}, {"b.go", Created}},
			wantWatches: 1,
		},
		{
			name:   "directory renamed",
			before: []string{"d1/f.go", "d1/sub/g.go"},
			act: func(t *testing.T, root string, _ func(string)) {
				mv(t, root, "d1", "d2")
				mk(t, root, "d2/sub/h.go") // must be reported under its new name
			},
			want: []Change{
				{"d1", Removed},
				{"d2", Created}, {"d2/f.go", Created}, {"d2/sub", Created}, {"d2/sub/g.go", Created}, {"d2/sub/h.go", Created},
			},
			wantWatches: 3,
		},
		{
			name:   "ignored paths",
			before: []string{".git/HEAD", "node_modules/x/y.js"},
			act: func(t *testing.T, root string, _ func(string)) {
				mk(t, root, ".git/index", "node_modules/x/z.js", ".a.go.swp", "4913", "dist/out.js", "build/obj/o.o")
				rm(t, root, "4913")
			},
			wantWatches: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			mk(t, root, tt.before...)
			w, batches := start(t, root, Options{})
			var got []Change
			seen := func(path string) { got = append(got, until(t, batches, path)...) }
			tt.act(t, root, seen)
			mk(t, root, sentinel)
			seen(sentinel)
			sortByPath(got)
			want := append(tt.want, Change{sentinel, Created})
			if diff := cmp.Diff(got, want); diff != "" {
				t.Errorf("changes (-got +want):\n%s", diff)
			}
			if got := w.watches(); got != tt.wantWatches {
				t.Errorf("Watches() = %d, want %d", got, tt.wantWatches)
			}
		})
	}
}

// sortByPath sorts stably, so that a path reported in two batches still shows twice.
func sortByPath(c []Change) {
	slices.SortStableFunc(c, func(x, y Change) int { return strings.Compare(x.Path, y.Path) })
}

func rm(t *testing.T, root, rel string) {
	t.Helper()
	if err := os.RemoveAll(filepath.Join(root, rel)); err != nil {
		t.Fatal(err)
	}
}

func mv(t *testing.T, root, from, to string) {
	t.Helper()
	if err := os.Rename(filepath.Join(root, from), filepath.Join(root, to)); err != nil {
		t.Fatal(err)
	}
}

// logBuf collects log output written from the drain goroutine while the test reads it.
type logBuf struct {
	mu sync.Mutex // guards b
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestMaxWatches(t *testing.T) {
	root := t.TempDir()
	for i := range 20 {
		mk(t, root, fmt.Sprintf("d%02d/", i))
	}
	var logs logBuf
	opts := Options{maxWatches: 5, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	w, batches := start(t, root, opts)
	if got := w.watches(); got != 5 {
		t.Errorf("Watches() after New = %d, want 5", got)
	}

	// A directory made later is not watched either, and the limit is not logged again.
	mk(t, root, "late/a.go", sentinel)
	until(t, batches, sentinel)
	if got := w.watches(); got != 5 {
		t.Errorf("Watches() after a new directory = %d, want 5", got)
	}
	var lines []string
	for l := range strings.Lines(logs.String()) {
		if strings.Contains(l, "watch limit reached") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 || !strings.Contains(lines[0], "watched=5") {
		t.Errorf("limit log lines = %q, want one saying watched=5", lines)
	}
}

func TestRootRemoved(t *testing.T) {
	root := filepath.Join(t.TempDir(), "ws")
	mk(t, root, "a.go", "sub/b.go")
	w, batches := start(t, root, Options{})
	rm(t, root, ".")
	got := until(t, batches, ".")
	sortByPath(got)
	want := []Change{{".", Removed}, {"a.go", Removed}, {"sub", Removed}, {"sub/b.go", Removed}}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("changes (-got +want):\n%s", diff)
	}
	if got := w.watches(); got != 0 {
		t.Errorf("Watches() = %d, want 0", got)
	}
}

func TestRunStops(t *testing.T) {
	tests := []struct {
		name string
		stop func(w *Watcher, cancel context.CancelFunc)
		want error
	}{
		{"Close", func(w *Watcher, _ context.CancelFunc) { w.Close() }, nil},
		{"cancel", func(_ *Watcher, cancel context.CancelFunc) { cancel() }, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := New(t.TempDir(), Options{delay: testDelay})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			errc := make(chan error, 1)
			// Owned by the subtest: ends on the stop below, which the select waits for.
			go func() { errc <- w.Run(ctx, func([]Change) {}) }()
			tt.stop(w, cancel)
			select {
			case err := <-errc:
				if !errors.Is(err, tt.want) {
					t.Errorf("Run = %v, want %v", err, tt.want)
				}
			case <-time.After(waitLimit):
				t.Fatalf("Run did not return")
			}
			if err := w.Close(); err != nil {
				t.Errorf("second Close = %v, want nil", err)
			}
			if err := w.Run(t.Context(), func([]Change) {}); err == nil {
				t.Errorf("second Run = nil, want an error")
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	dir := t.TempDir()
	mk(t, dir, "file")
	for _, root := range []string{filepath.Join(dir, "missing"), filepath.Join(dir, "file")} {
		if w, err := New(root, Options{}); err == nil {
			w.Close()
			t.Errorf("New(%s) = nil error, want one", root)
		}
	}
}

// TestOverflow fills the kernel's event queue for real: nothing drains it until Run starts.
func TestOverflow(t *testing.T) {
	if testing.Short() {
		t.Skip("makes tens of thousands of events")
	}
	b, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events")
	if err != nil {
		t.Skip("not inotify:", err)
	}
	queue, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || queue > 1<<16 {
		t.Skipf("max_queued_events = %q: too many events to overflow it", b)
	}
	root := t.TempDir()
	w, err := New(root, Options{delay: testDelay})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	// Writes alternating between two files are events the kernel cannot merge. fsnotify holds
	// one read (up to 4096 events) outside the queue.
	var files [2]*os.File
	for i := range files {
		f, err := os.Create(filepath.Join(root, strconv.Itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		files[i] = f
	}
	for i := range queue + 4096 + 1000 {
		if _, err := files[i%2].Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
	}

	ctx := t.Context()
	batches := make(chan []Change)
	errc := make(chan error, 1)
	// Owned by the test: ends on the deferred Close below, which waits for it.
	go func() {
		errc <- w.Run(ctx, func(c []Change) {
			select {
			case batches <- c:
			case <-ctx.Done():
			}
		})
	}()
	defer func() { w.Close(); <-errc }()

	deadline := time.NewTimer(waitLimit)
	defer deadline.Stop()
	for {
		select {
		case b := <-batches:
			if !slices.Contains(b, rescanAll) {
				continue // changes seen before the overflow
			}
			if diff := cmp.Diff(b, []Change{rescanAll}); diff != "" {
				t.Errorf("overflow batch (-got +want):\n%s", diff)
			}
			return
		case <-deadline.C:
			t.Fatalf("no rescan batch within %v", waitLimit)
		}
	}
}

// watches is the number of directories watched now.
func (w *Watcher) watches() int { return int(w.count.Load()) }

// TestIgnoredNotWatched: directories git's rules ignore spend no watch and report nothing; once
// the rules change, the directory is watched.
func TestIgnoredNotWatched(t *testing.T) {
	root := t.TempDir()
	mk(t, root, ".gitignore", "gen/a/", "gen/b/", "src/")
	if err := os.WriteFile(filepath.Join(root, ".gitignore"), []byte("gen/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, batches := start(t, root, Options{})
	if got := w.watches(); got != 2 { // the root and src
		t.Errorf("watches = %d, want 2: gen/ is ignored", got)
	}
	mk(t, root, "gen/a/x.go", "src/"+sentinel)
	if got := until(t, batches, "src/"+sentinel); slices.ContainsFunc(got, func(c Change) bool { return strings.HasPrefix(c.Path, "gen/") }) {
		t.Errorf("a change in an ignored tree was reported: %v", got)
	}
	if err := os.WriteFile(filepath.Join(root, ".gitignore"), []byte("gen/b/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	until(t, batches, ".gitignore")
	// gen and gen/a now; gen/b too when a read of the rules caught the file half-written (the
	// write is two events): a directory newly ignored keeps its watch.
	if got := w.watches(); got < 4 {
		t.Errorf("watches after the rules changed = %d, want at least 4", got)
	}
	mk(t, root, "gen/a/y.go")
	until(t, batches, "gen/a/y.go")
}

// TestPollingPastTheLimit: once the watches run out, the files Poll names are polled, with one
// warning, and their changes reported like any other.
func TestPollingPastTheLimit(t *testing.T) {
	root := t.TempDir()
	mk(t, root, "a/", "b/", "deep/x/read.go", "deep/x/other.go")
	var logs logBuf
	opts := Options{maxWatches: 2, pollEvery: 20 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Poll: func() []string { return []string{"deep/x/read.go", "gone.go"} }}
	_, batches := start(t, root, opts) // the limit is reached in New, which takes note of the files
	if err := os.WriteFile(filepath.Join(root, "deep/x/read.go"), []byte("changed, and longer\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := until(t, batches, "deep/x/read.go")
	if !slices.Contains(got, Change{Path: "deep/x/read.go", Op: Changed}) {
		t.Errorf("got %v, want deep/x/read.go Changed", got)
	}
	mk(t, root, "gone.go")
	if got := until(t, batches, "gone.go"); !slices.Contains(got, Change{Path: "gone.go", Op: Created}) {
		t.Errorf("got %v, want gone.go Created", got)
	}
	if n := strings.Count(logs.String(), "the files the agent read are polled instead"); n != 1 {
		t.Errorf("%d polling warnings, want 1:\n%s", n, logs.String())
	}
}
