package lsptest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Message is one request or notification the server sent, kept so tests can assert on what the
// editor saw rather than on timing.
type Message struct {
	Method    string
	Params    json.RawMessage
	isRequest bool   // a server→client request (the editor answered it), not a notification
	ID        string // the request id as JSON text (1 or "abc"); empty for notifications
}

// recorder keeps everything the server sent and wakes waiters after each arrival.
type recorder struct {
	mu      sync.Mutex        // guards the fields below
	msgs    []Message         // append-only, so snapshots msgs[:n:n] stay valid without copying
	orphans []json.RawMessage // append-only, same reason
	changed chan struct{}     // closed and replaced on every arrival and when the stream ends
	ended   bool
	endErr  error // why the stream ended, once ended
}

func newRecorder() *recorder {
	return &recorder{changed: make(chan struct{})}
}

func (r *recorder) message(m Message) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, m)
	r.wakeLocked()
}

func (r *recorder) orphan(raw []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.orphans = append(r.orphans, json.RawMessage(raw))
	r.wakeLocked()
}

// end records that nothing more will arrive; waits still unsatisfied then fail at once.
func (r *recorder) end(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended {
		return
	}
	r.ended, r.endErr = true, err
	r.wakeLocked()
}

func (r *recorder) wakeLocked() {
	close(r.changed)
	r.changed = make(chan struct{})
}

// snapshot returns the state seen by one evaluation of a condition. The slices are capped so a
// condition appending to them cannot write into the recorder's arrays.
func (r *recorder) snapshot() (msgs []Message, orphans []json.RawMessage, changed <-chan struct{}, ended bool, endErr error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.msgs[:len(r.msgs):len(r.msgs)], r.orphans[:len(r.orphans):len(r.orphans)], r.changed, r.ended, r.endErr
}

// wait evaluates check now and after every arrival, without holding the lock (check may call back
// into the editor), until it holds, ctx ends or the stream ends.
func (r *recorder) wait(ctx context.Context, what string, check func(msgs []Message, orphans []json.RawMessage) bool) error {
	for {
		msgs, orphans, changed, ended, endErr := r.snapshot()
		if check(msgs, orphans) {
			return nil
		}
		if ended {
			return fmt.Errorf("await %s: connection ended first (%v); %s", what, endErr, lastMethods(msgs))
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("await %s: %w; %s", what, context.Cause(ctx), lastMethods(msgs))
		}
	}
}

// lastMethods summarizes the end of the traffic, which is usually enough to see why a wait failed.
func lastMethods(msgs []Message) string {
	const n = 8
	if len(msgs) == 0 {
		return "nothing received from the server"
	}
	var names []string
	for _, m := range msgs[max(0, len(msgs)-n):] {
		names = append(names, m.Method)
	}
	return fmt.Sprintf("last of %d messages received: %s", len(msgs), strings.Join(names, ", "))
}

// Messages returns what the server has sent so far, requests and notifications, in arrival order.
func (e *Editor) Messages() []Message {
	msgs, _, _, _, _ := e.rec.snapshot()
	return slices.Clone(msgs)
}

// Notifications returns the params of every notification of method received so far, oldest first.
func (e *Editor) Notifications(method string) []json.RawMessage {
	msgs, _, _, _, _ := e.rec.snapshot()
	var out []json.RawMessage
	for _, m := range msgs {
		if !m.isRequest && m.Method == method {
			out = append(out, m.Params)
		}
	}
	return out
}

// orphans returns the raw messages no call could take: responses with id null (how a server
// answers a frame it could not parse), responses to unknown ids or to calls whose ctx ended (such
// as the RequestCancelled answer after $/cancelRequest), and messages that were not JSON-RPC.
// jsonrpc2 would drop these silently, or die on id null; tests of server robustness need them.
func (e *Editor) orphans() []json.RawMessage {
	_, orphans, _, _, _ := e.rec.snapshot()
	return slices.Clone(orphans)
}

// Await returns once cond holds for the messages received so far. cond is evaluated now and again
// after each message, so a test states what it waits for instead of sleeping. It fails when ctx
// ends or the connection ends first, naming what and the last methods seen; pass a ctx with a
// deadline. cond must not modify msgs.
func (e *Editor) Await(ctx context.Context, what string, cond func(msgs []Message) bool) error {
	return e.rec.wait(ctx, what, func(msgs []Message, _ []json.RawMessage) bool { return cond(msgs) })
}

// AwaitNotification returns the params of the first notification of method, already received or
// still to come, for which match returns true (a nil match accepts any).
func (e *Editor) AwaitNotification(ctx context.Context, method string, match func(params json.RawMessage) bool) (json.RawMessage, error) {
	var found json.RawMessage
	next := 0 // messages before next were already rejected; the slice only grows
	err := e.rec.wait(ctx, method, func(msgs []Message, _ []json.RawMessage) bool {
		for ; next < len(msgs); next++ {
			m := msgs[next]
			if !m.isRequest && m.Method == method && (match == nil || match(m.Params)) {
				found = m.Params
				return true
			}
		}
		return false
	})
	return found, err
}

// AwaitOrphan returns the first orphan (see orphans), already received or still to come, for
// which match returns true (a nil match accepts any): how a test waits for the server's answer to
// a garbage frame sent with WriteRaw.
func (e *Editor) AwaitOrphan(ctx context.Context, match func(raw json.RawMessage) bool) (json.RawMessage, error) {
	var found json.RawMessage
	next := 0
	err := e.rec.wait(ctx, "orphan response", func(_ []Message, orphans []json.RawMessage) bool {
		for ; next < len(orphans); next++ {
			if match == nil || match(orphans[next]) {
				found = orphans[next]
				return true
			}
		}
		return false
	})
	return found, err
}
