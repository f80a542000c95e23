package lsp

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"

	"go.lsp.dev/protocol"
)

// traceLevel is the client's $/setTrace value: off, messages or verbose.
type traceLevel struct{ v atomic.Value }

func (t *traceLevel) set(v string) { t.v.Store(v) }

func (t *traceLevel) get() string {
	v, _ := t.v.Load().(string)
	return v
}

// clientLogHandler logs to stderr and mirrors records to the client as window/logMessage:
// warnings and errors always, the rest when the client turned tracing on.
type clientLogHandler struct {
	next  slog.Handler
	srv   *server
	attrs []slog.Attr
}

func (h *clientLogHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l) || l >= slog.LevelWarn || h.srv.trace.get() == "verbose" || h.srv.trace.get() == "messages"
}

func (h *clientLogHandler) Handle(ctx context.Context, r slog.Record) error {
	var err error
	if h.next.Enabled(ctx, r.Level) {
		err = h.next.Handle(ctx, r)
	}
	trace := h.srv.trace.get()
	if r.Level < slog.LevelWarn && trace != "verbose" && !(trace == "messages" && r.Level >= slog.LevelInfo) {
		return err
	}
	var b strings.Builder
	b.WriteString(r.Message)
	for _, a := range h.attrs {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key != "stack" {
			fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		}
		return true
	})
	typ := protocol.MessageTypeLog
	switch {
	case r.Level >= slog.LevelError:
		typ = protocol.MessageTypeError
	case r.Level >= slog.LevelWarn:
		typ = protocol.MessageTypeWarning
	case r.Level >= slog.LevelInfo:
		typ = protocol.MessageTypeInfo
	}
	h.srv.notify("window/logMessage", protocol.LogMessageParams{Type: typ, Message: b.String()})
	return err
}

func (h *clientLogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &clientLogHandler{next: h.next.WithAttrs(attrs), srv: h.srv, attrs: append(append([]slog.Attr(nil), h.attrs...), attrs...)}
}

func (h *clientLogHandler) WithGroup(name string) slog.Handler {
	return &clientLogHandler{next: h.next.WithGroup(name), srv: h.srv, attrs: h.attrs}
}
