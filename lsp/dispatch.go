package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"

	"go.lsp.dev/jsonrpc2"
)

// handle is the connection's handler. jsonrpc2 calls it from its read loop, one message at a
// time, and closes the connection if it returns an error: so it never does, answers every call
// exactly once (a panic included), and runs calls in their own goroutines so that a long one
// (a compaction) never holds up the next message. Notifications are handled in order, inline:
// they are quick, and text synchronisation depends on their order.
//
// A call holds one of limits.MaxInflightCalls slots until its reply is written. With every slot
// taken, handle waits, and so does the read loop: the client's writes then block instead of the
// server piling up goroutines and replies it cannot deliver.
func (s *server) handle(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
	call, isCall := req.(*jsonrpc2.Call)
	r := replyOnce(reply, s)
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("handler panic", "method", req.Method(), "panic", p, "stack", string(debug.Stack()))
			if isCall {
				r(nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "internal error in %s: %v", req.Method(), p))
			}
		}
	}()
	method := req.Method()
	initialized, shutdown := s.life.state()
	switch {
	case method == "exit":
		s.life.exit()
		return nil
	case !initialized && method != "initialize":
		if isCall {
			r(nil, jsonrpc2.NewError(jsonrpc2.ServerNotInitialized, "the server is not initialized: send initialize first"))
		}
		return nil
	case shutdown:
		if isCall {
			r(nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, "the server is shutting down: only exit is accepted"))
		}
		return nil
	}
	if !isCall {
		s.notification(method, req.Params())
		return nil
	}
	if method == "initialize" { // inline: nothing may be handled before it is done
		r(s.initialize(req.Params()))
		return nil
	}
	if !s.calls.acquire(s.ctx) {
		return nil // the connection is ending: nobody will read an answer
	}
	key := idKey(call.ID())
	cctx, cancel := context.WithCancel(s.ctx)
	s.calls.add(key, cancel)
	spawned := s.spawn(func() { // ends when the call is answered
		defer s.calls.release()
		defer s.calls.remove(key)
		defer cancel()
		defer func() {
			if p := recover(); p != nil {
				s.log.Error("handler panic", "method", method, "panic", p, "stack", string(debug.Stack()))
				r(nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "internal error in %s: %v", method, p))
			}
		}()
		result, err := s.call(cctx, method, req.Params())
		if err != nil && cctx.Err() != nil && s.ctx.Err() == nil {
			err = jsonrpc2.NewError(CodeRequestCancelled, "request cancelled")
		}
		r(result, err)
	})
	if !spawned {
		s.calls.remove(key)
		cancel()
		s.calls.release()
	}
	return nil
}

// replyOnce wraps a replier so a second reply is dropped (and logged) instead of corrupting the
// stream, and every error goes out with a JSON-RPC code (a plain Go error would go out as 0).
func replyOnce(reply jsonrpc2.Replier, s *server) func(result any, err error) {
	var once sync.Once
	return func(result any, err error) {
		done := false
		once.Do(func() {
			done = true
			if err != nil {
				var rpcErr *jsonrpc2.Error
				if !errors.As(err, &rpcErr) {
					err = jsonrpc2.NewError(jsonrpc2.InternalError, err.Error())
				}
				result = nil
			}
			if werr := reply(s.ctx, result, err); werr != nil && s.ctx.Err() == nil {
				s.opts.Logger.Warn("reply failed", "error", werr)
			}
		})
		if !done {
			s.log.Error("second reply dropped", "error", err)
		}
	}
}

// testHookCall, when set by a test, runs first in every call (to make one panic).
var testHookCall func(method string)

// call answers one request.
func (s *server) call(ctx context.Context, method string, params json.RawMessage) (any, error) {
	if testHookCall != nil {
		testHookCall(method)
	}
	switch method {
	case "shutdown":
		return s.shutdown(), nil
	case "workspace/executeCommand":
		return s.executeCommand(ctx, params)
	case "textDocument/codeAction":
		return s.codeActions(ctx, params)
	}
	return nil, jsonrpc2.Errorf(jsonrpc2.MethodNotFound, "method not supported: %s", method)
}

// notification handles one notification, in arrival order.
func (s *server) notification(method string, params json.RawMessage) {
	var err error
	switch method {
	case "initialized":
		s.initialized()
	case "$/cancelRequest":
		var key string
		if key, err = parseCancelID(params); err == nil {
			s.calls.cancel(key)
		}
	case "$/setTrace":
		var p struct {
			Value string `json:"value"`
		}
		if err = json.Unmarshal(params, &p); err == nil {
			s.trace.set(p.Value)
		}
	case "textDocument/didOpen":
		err = s.docs.didOpen(params)
	case "textDocument/didChange":
		err = s.docs.didChange(params)
	case "textDocument/didClose":
		err = s.docs.didClose(params)
	case "textDocument/didSave":
	case "workspace/didChangeConfiguration":
		s.didChangeConfiguration(params)
	case MethodDidChangeUserSettings:
		s.didChangeUserSettings(params)
	case "window/workDoneProgress/cancel":
		var p struct {
			Token json.RawMessage `json:"token"`
		}
		if err = json.Unmarshal(params, &p); err == nil {
			s.progress.cancel(string(p.Token))
		}
	default:
		s.log.Debug("notification ignored", "method", method)
	}
	if err != nil {
		s.log.Warn("bad notification", "method", method, "error", err)
	}
}

// inflight tracks the calls being handled: their cancel functions by request id, and the slots
// that bound how many there are.
type inflight struct {
	// slots holds one token per call from the moment it is read until its reply is written; its
	// capacity is limits.MaxInflightCalls.
	slots chan struct{}
	// onWait, set by tests before the first message, is called when the reader waits for a slot.
	onWait func()

	mu sync.Mutex // guards m
	m  map[string]context.CancelFunc
}

func newInflight(limit int) *inflight {
	return &inflight{slots: make(chan struct{}, limit), m: map[string]context.CancelFunc{}}
}

// acquire takes a slot, waiting while all are taken; false if ctx ended first.
func (f *inflight) acquire(ctx context.Context) bool {
	select {
	case f.slots <- struct{}{}:
	default:
		if f.onWait != nil {
			f.onWait()
		}
		select {
		case f.slots <- struct{}{}:
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// release gives back a slot taken by acquire.
func (f *inflight) release() { <-f.slots }

// load is the number of calls in flight.
func (f *inflight) load() int { return len(f.slots) }

func (f *inflight) add(key string, cancel context.CancelFunc) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.m[key] = cancel
}

func (f *inflight) remove(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.m, key)
}

func (f *inflight) cancel(key string) {
	f.mu.Lock()
	cancel := f.m[key]
	f.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// invalidParams is the error for bad command arguments: it says what is wrong.
func invalidParams(format string, v ...any) error {
	return jsonrpc2.NewError(jsonrpc2.InvalidParams, fmt.Sprintf(format, v...))
}
