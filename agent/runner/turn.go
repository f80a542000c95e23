package runner

import (
	"context"
	"iter"
	"sync"

	"github.com/reprise-dev/reprise/agent"
)

// Turn is a session's turn slot, held from Start to End: one at a time per session. What holds
// it is a model turn (Run) or a verb the front-end runs as one (ACP's slash commands).
type Turn struct {
	r      *Runner
	l      *Live
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

// Start takes l's turn slot, with a context that Cancel, Stop and the parent ctx end. A turn
// running makes it fail with ErrBusy; with wait, it waits instead for that turn to have wholly
// ended (a prompt the client replaced is being cancelled), or for ctx.
func (r *Runner) Start(ctx context.Context, l *Live, wait bool) (*Turn, error) {
	ls := &r.live
	for {
		ls.mu.Lock()
		done := l.done
		if l.cancel == nil && (!wait || done == nil || closed(done)) {
			break
		}
		ls.mu.Unlock()
		if !wait {
			return nil, ErrBusy
		}
		select {
		case <-done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	defer ls.mu.Unlock()
	tctx, cancel := context.WithCancel(ctx)
	t := &Turn{r: r, l: l, ctx: tctx, cancel: cancel, done: make(chan struct{})}
	l.cancel, l.done = cancel, t.done
	return t, nil
}

func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// Context is the turn's: cancelled by Cancel, Stop, End or the context Start was given.
func (t *Turn) Context() context.Context { return t.ctx }

// Run runs text as the session's turn; the caller then calls End. The session is idle again
// when its turn_end is yielded, so that a front-end that hears of it can start the next turn at
// once. A session without a title takes text's first line as it.
func (t *Turn) Run(text string) iter.Seq2[agent.Event, error] {
	ls := &t.r.live
	ls.mu.Lock()
	if t.l.title == "" {
		t.l.title = titleOf(text)
	}
	ls.mu.Unlock()
	return func(yield func(agent.Event, error) bool) {
		for ev, err := range t.l.Session.Run(t.ctx, text) {
			if err == nil && ev.Type == agent.EventTurnEnd {
				t.idle()
			}
			if err == nil {
				t.r.observeEvent(t.l, ev)
			}
			if !yield(ev, err) {
				return
			}
		}
	}
}

// End frees the slot; the turn's context is cancelled. It may be called more than once.
func (t *Turn) End() {
	t.once.Do(func() {
		t.cancel()
		t.idle()
		close(t.done)
	})
}

// idle marks the session as running no turn, unless another turn has begun since.
func (t *Turn) idle() {
	ls := &t.r.live
	ls.mu.Lock()
	if t.l.done == t.done {
		t.l.cancel = nil
	}
	ls.mu.Unlock()
}

// Run runs text as a turn of l, through the runner: it yields ErrBusy, and no turn runs, when
// one runs already. It hides the agent's Run, which knows nothing of the runner.
func (l *Live) Run(ctx context.Context, text string) iter.Seq2[agent.Event, error] {
	return func(yield func(agent.Event, error) bool) {
		t, err := l.r.Start(ctx, l, false)
		if err != nil {
			yield(agent.Event{}, err)
			return
		}
		defer t.End()
		for ev, err := range t.Run(text) {
			if !yield(ev, err) {
				return
			}
		}
	}
}

// Cancel cancels l's running turn without waiting for it; false if none runs.
func (r *Runner) Cancel(l *Live) bool {
	r.live.mu.Lock()
	cancel := l.cancel
	r.live.mu.Unlock()
	if cancel == nil {
		return false
	}
	cancel()
	return true
}

// Stop cancels l's running turn and waits for its end (a turn past its turn_end too), or for
// ctx; false if none ran.
func (r *Runner) Stop(ctx context.Context, l *Live) bool {
	r.live.mu.Lock()
	cancel, done := l.cancel, l.done
	r.live.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	if done != nil {
		select {
		case <-done:
		case <-ctx.Done():
		}
	}
	return cancel != nil
}

// CancelAll cancels every running turn (shutdown), without waiting.
func (r *Runner) CancelAll() {
	for _, l := range r.List() {
		r.Cancel(l)
	}
}
