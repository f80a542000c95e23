package lsp

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// TestModelCacheBuildsOnce: N first uses at once build one client, and all get it. The build
// holds until every caller has started, so with a check-then-build cache most of them would build.
func TestModelCacheBuildsOnce(t *testing.T) {
	const n = 16
	var builds atomic.Int32
	var started sync.WaitGroup
	started.Add(n)
	model := &chunkModel{}
	c := newModelCache(func(ctx context.Context, name string) (agent.Model, int, error) {
		builds.Add(1)
		started.Wait()
		return model, 1000, nil
	})
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			started.Done()
			m, limit, err := c.get(t.Context(), "gemini-2.5-flash")
			if err != nil || m != model || limit != 1000 {
				t.Errorf("get = %v, %d, %v; want the one client", m, limit, err)
			}
		})
	}
	wg.Wait()
	if got := builds.Load(); got != 1 {
		t.Errorf("%d clients built for one model name, want 1", got)
	}
	if _, _, err := c.get(t.Context(), "gemini-2.5-pro"); err != nil || builds.Load() != 2 {
		t.Errorf("another name: %v, %d builds; want a second build", err, builds.Load())
	}
}

// TestModelCacheForgetsFailures: a failed build is not kept (the user may set the key), and a
// build that failed only because its caller went away is done again for those still waiting.
func TestModelCacheForgetsFailures(t *testing.T) {
	errNoKey := errors.New("GEMINI_API_KEY is not set")
	var builds atomic.Int32
	fail := errNoKey
	c := newModelCache(func(ctx context.Context, name string) (agent.Model, int, error) {
		builds.Add(1)
		if fail != nil {
			return nil, 0, fail
		}
		return &chunkModel{}, 1, nil
	})
	if _, _, err := c.get(t.Context(), "m"); !errors.Is(err, errNoKey) {
		t.Fatalf("first get: %v, want the build's error", err)
	}
	fail = nil
	if _, _, err := c.get(t.Context(), "m"); err != nil || builds.Load() != 2 {
		t.Fatalf("after a failure: %v, %d builds; want a new build", err, builds.Load())
	}

	// The builder's request is cancelled while another waits: the waiter builds.
	entered, release := make(chan struct{}), make(chan struct{})
	var calls atomic.Int32
	c = newModelCache(func(ctx context.Context, name string) (agent.Model, int, error) {
		if calls.Add(1) == 1 {
			close(entered)
			<-release
			return nil, 0, ctx.Err()
		}
		return &chunkModel{}, 1, nil
	})
	cctx, cancel := context.WithCancel(t.Context())
	first := make(chan error, 1)
	go func() { // ends when its build returns, once release is closed
		_, _, err := c.get(cctx, "m")
		first <- err
	}()
	<-entered
	waiter := make(chan error, 1)
	go func() { // ends when the build it waits for, or its own, returns
		_, _, err := c.get(t.Context(), "m")
		waiter <- err
	}()
	cancel()
	close(release)
	if err := <-first; !errors.Is(err, context.Canceled) {
		t.Errorf("the cancelled builder got %v", err)
	}
	if err := <-waiter; err != nil {
		t.Errorf("the waiter got %v, want a client built for it", err)
	}
}

// TestModelCacheBuildPanics: a build that panics (the request's handler recovers it) releases
// those waiting for it.
func TestModelCacheBuildPanics(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	var calls atomic.Int32
	c := newModelCache(func(ctx context.Context, name string) (agent.Model, int, error) {
		if calls.Add(1) == 1 {
			close(entered)
			<-release
			panic("broken client")
		}
		return &chunkModel{}, 1, nil
	})
	panicked := make(chan any, 1)
	go func() { // ends when its build panics, once release is closed
		defer func() { panicked <- recover() }()
		_, _, _ = c.get(t.Context(), "m")
	}()
	<-entered
	waiter := make(chan error, 1)
	go func() { // ends when the build it waits for, or its own, returns
		_, _, err := c.get(t.Context(), "m")
		waiter <- err
	}()
	close(release)
	if p := <-panicked; p == nil {
		t.Error("the build's panic did not reach its caller")
	}
	if err := <-waiter; err != nil && !errors.Is(err, errBuildPanicked) {
		t.Errorf("the waiter got %v", err)
	}
}

// TestConcurrentSessionsShareOneClient: sessions created at once on a fresh server share one
// client per model, theirs and their subagents' (the server goes through the cache;
// TestModelCacheBuildsOnce holds the race).
func TestConcurrentSessionsShareOneClient(t *testing.T) {
	const n = 8
	var mu sync.Mutex
	builds := map[string]int{}
	model := &chunkModel{chunks: make(chan string)}
	e := newEnv(t, envOpts{newModel: func(_ context.Context, name string) (agent.Model, int, error) {
		mu.Lock()
		builds[name]++
		mu.Unlock()
		return model, 1 << 20, nil
	}})
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if err := e.ed.Execute(e.ctx, CommandNewSession, nil, nil); err != nil {
				t.Errorf("reprise.newSession: %v", err)
			}
		})
	}
	wg.Wait()
	sub, _ := catalog.Builtin().SubagentModel()
	if len(builds) != 2 || builds[sub] != 1 || builds[catalog.Builtin().DefaultModel()] != 1 {
		t.Errorf("model clients built for %d sessions of one model: %v, want one for it and one for its subagents", n, builds)
	}
}
