package lsp

import (
	"context"
	"errors"
	"sync"

	"github.com/reprise-dev/reprise/agent"
)

// modelCache builds one client per model name, and one Models.Get, however many sessions ask for
// it at once: the first use builds it, the others wait for that build.
type modelCache struct {
	build  func(ctx context.Context, name string) (agent.Model, int, error)
	mu     sync.Mutex // guards byName
	byName map[string]*modelEntry
}

// modelEntry is one name's client, or its build in progress until done is closed. The fields are
// written before done closes and only read after.
type modelEntry struct {
	done  chan struct{}
	m     agent.Model
	limit int // the model's input token limit
	err   error
}

func newModelCache(build func(ctx context.Context, name string) (agent.Model, int, error)) *modelCache {
	return &modelCache{build: build, byName: map[string]*modelEntry{}}
}

// get returns the client for name and its input token limit. A failed build is not kept: the
// user may set the key and try again. Those who waited on it get its error, unless it failed
// only because the builder's request was cancelled: then one of them builds again.
func (c *modelCache) get(ctx context.Context, name string) (agent.Model, int, error) {
	for {
		c.mu.Lock()
		e, ok := c.byName[name]
		if !ok {
			e = &modelEntry{done: make(chan struct{})}
			c.byName[name] = e
		}
		c.mu.Unlock()
		if !ok {
			c.fill(ctx, name, e)
			return e.m, e.limit, e.err
		}
		select {
		case <-e.done:
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		}
		builderGone := errors.Is(e.err, context.Canceled) || errors.Is(e.err, context.DeadlineExceeded)
		if !builderGone || ctx.Err() != nil {
			return e.m, e.limit, e.err
		}
	}
}

// fill builds e. done closes whatever happens, a panic included (the request's handler recovers
// it), so no waiter is left hanging; a failure is forgotten.
func (c *modelCache) fill(ctx context.Context, name string, e *modelEntry) {
	defer func() {
		if e.err != nil {
			c.mu.Lock()
			delete(c.byName, name)
			c.mu.Unlock()
		}
		close(e.done)
	}()
	e.err = errBuildPanicked // until build returns
	e.m, e.limit, e.err = c.build(ctx, name)
}

var errBuildPanicked = errors.New("building the model client failed unexpectedly; see the server log")
