package acp

import (
	"encoding/json"
	"io"
	"sync"

	sdk "github.com/coder/acp-go-sdk"
)

// wire is the connection's one writer: the SDK writes every message through it, one Write per
// message, and the updates of a session the client does not know yet wait in it.
//
// A client learns a new session's id from the session/new response, and drops updates for an id
// it does not know. The SDK writes that response only after the handler returns, so the handler
// cannot send the session's first updates (its slash commands, its usage) itself: it marks the
// session pending, and wire writes what comes for it right after the response that names it.
// The order comes from the connection, not from a timer.
type wire struct {
	mu      sync.Mutex          // guards w (one message at a time) and pending
	w       io.Writer           // the client's input
	pending map[string][][]byte // session id → its session/update messages, until the response naming it is written
}

func newWire(w io.Writer) *wire {
	return &wire{w: w, pending: map[string][][]byte{}}
}

// expect makes id pending: its updates wait for the response that names it.
func (w *wire) expect(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pending[id] = nil
}

// forget drops id and what waits for it: the session was not made.
func (w *wire) forget(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.pending, id)
}

// hold keeps n for later when its session is pending, and reports whether it did.
func (w *wire) hold(n sdk.SessionNotification) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	queue, ok := w.pending[string(n.SessionId)]
	if !ok {
		return false
	}
	b, err := json.Marshal(struct {
		JSONRPC string                  `json:"jsonrpc"`
		Method  string                  `json:"method"`
		Params  sdk.SessionNotification `json:"params"`
	}{"2.0", sdk.ClientMethodSessionUpdate, n})
	if err != nil {
		return true // as the SDK does with a notification it cannot encode: not sent
	}
	w.pending[string(n.SessionId)] = append(queue, append(b, '\n'))
	return true
}

// Write writes one message, and after a response that names a pending session, that session's
// updates. A client gone is seen by the SDK through the response's error.
func (w *wire) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.w.Write(p)
	if err != nil || len(w.pending) == 0 {
		return n, err
	}
	id, ok := namedSession(p)
	if !ok {
		return n, nil
	}
	queue, ok := w.pending[id]
	if !ok {
		return n, nil
	}
	delete(w.pending, id)
	for _, m := range queue {
		if _, err := w.w.Write(m); err != nil {
			break
		}
	}
	return n, nil
}

// namedSession returns the session id of a response whose result carries one (session/new's).
func namedSession(msg []byte) (string, bool) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
	}
	if json.Unmarshal(msg, &m) != nil || m.ID == nil || m.Method != "" || len(m.Result) == 0 {
		return "", false
	}
	var r struct {
		SessionID string `json:"sessionId"`
	}
	if json.Unmarshal(m.Result, &r) != nil || r.SessionID == "" {
		return "", false
	}
	return r.SessionID, true
}
