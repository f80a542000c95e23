package mcp

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
)

// Bounds on what a stdio server's stderr puts in the log.
const (
	maxStderrLines   = 500
	maxStderrLineLen = 1000
	stderrTailLines  = 5
)

// stderrLog logs a stdio server's stderr line by line, up to maxStderrLines, and keeps its last
// lines for the message shown when the server fails: a server that cannot start says why there.
type stderrLog struct {
	logger *slog.Logger
	server string

	mu      sync.Mutex // guards the fields below
	partial []byte     // a line not yet ended
	logged  int
	dropped int
	tail    []string
}

func (w *stderrLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		w.line(string(w.partial[:i]))
		w.partial = w.partial[i+1:]
	}
	if len(w.partial) > maxStderrLineLen {
		w.line(string(w.partial))
		w.partial = nil
	}
	return len(p), nil
}

// line takes one line; w.mu is held.
func (w *stderrLog) line(s string) {
	s = strings.TrimRight(s, "\r")
	if len(s) > maxStderrLineLen {
		s = s[:maxStderrLineLen] + "…"
	}
	if strings.TrimSpace(s) == "" {
		return
	}
	w.tail = append(w.tail, s)
	if len(w.tail) > stderrTailLines {
		w.tail = w.tail[1:]
	}
	switch {
	case w.logged < maxStderrLines:
		w.logged++
		w.logger.Info("MCP server stderr", "server", w.server, "line", s)
	case w.dropped == 0:
		w.dropped++
		w.logger.Info("MCP server stderr: further lines are not logged", "server", w.server)
	default:
		w.dropped++
	}
}

// lastLines is the end of what the server wrote, for an error message; "" if nothing.
func (w *stderrLog) lastLines() string {
	if w == nil {
		return ""
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	tail := w.tail
	if len(w.partial) > 0 {
		tail = append(tail[:len(tail):len(tail)], string(w.partial))
	}
	return strings.Join(tail, " | ")
}
