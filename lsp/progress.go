package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Work-done progress the server starts (window/workDoneProgress/create, then $/progress). The
// value structs are the server's own: go.lsp.dev's WorkDoneProgressBegin drops a 0 % percentage
// (uint32 with omitempty), and a meter at 0 % must still say 0 %.

type progressBegin struct {
	Kind        string  `json:"kind"` // "begin"
	Title       string  `json:"title"`
	Cancellable bool    `json:"cancellable"`
	Message     string  `json:"message,omitempty"`
	Percentage  *uint32 `json:"percentage,omitempty"`
}

type progressReport struct {
	Kind       string  `json:"kind"` // "report"
	Message    string  `json:"message,omitempty"`
	Percentage *uint32 `json:"percentage,omitempty"`
}

type progressEnd struct {
	Kind    string `json:"kind"` // "end"
	Message string `json:"message,omitempty"`
}

type progressParams struct {
	Token string `json:"token"`
	Value any    `json:"value"`
}

// progressToken is one progress the server started.
type progressToken struct {
	srv   *server
	token string
	ended atomic.Bool
}

// progressTokens maps tokens to the cancel functions of cancellable work.
type progressTokens struct {
	seq atomic.Int64
	mu  sync.Mutex // guards cancels
	// cancels is keyed by the token's JSON form, as window/workDoneProgress/cancel carries it.
	cancels map[string]context.CancelFunc
}

func newProgressTokens() *progressTokens {
	return &progressTokens{cancels: map[string]context.CancelFunc{}}
}

func (p *progressTokens) cancel(tokenJSON string) {
	p.mu.Lock()
	c := p.cancels[tokenJSON]
	p.mu.Unlock()
	if c != nil {
		c()
	}
}

// createProgress asks the client for a progress token and begins it; nil when the client does not
// support work-done progress or refused. cancel, if set, is called when the user cancels it.
func (s *server) createProgress(title, message string, percent uint32, cancellable bool, cancel context.CancelFunc) *progressToken {
	if !s.client.progress {
		return nil
	}
	token := fmt.Sprintf("reprise-%d", s.progress.seq.Add(1))
	// A client that never answers must not hold up the work: the meter is optional.
	ctx, cancelCreate := context.WithTimeout(s.ctx, 5*time.Second)
	defer cancelCreate()
	if _, err := s.conn.Call(ctx, "window/workDoneProgress/create", map[string]string{"token": token}, nil); err != nil {
		s.opts.Logger.Debug("progress refused", "error", err)
		return nil
	}
	if cancel != nil {
		key, _ := json.Marshal(token)
		s.progress.mu.Lock()
		s.progress.cancels[string(key)] = cancel
		s.progress.mu.Unlock()
	}
	s.notify("$/progress", progressParams{Token: token, Value: progressBegin{Kind: "begin", Title: title, Cancellable: cancellable, Message: message, Percentage: &percent}})
	return &progressToken{srv: s, token: token}
}

func (t *progressToken) report(message string, percent uint32) {
	if t == nil || t.ended.Load() {
		return
	}
	t.srv.notify("$/progress", progressParams{Token: t.token, Value: progressReport{Kind: "report", Message: message, Percentage: &percent}})
}

func (t *progressToken) end(message string) {
	if t == nil || t.ended.Swap(true) {
		return
	}
	key, _ := json.Marshal(t.token)
	t.srv.progress.mu.Lock()
	delete(t.srv.progress.cancels, string(key))
	t.srv.progress.mu.Unlock()
	t.srv.notify("$/progress", progressParams{Token: t.token, Value: progressEnd{Kind: "end", Message: message}})
}
