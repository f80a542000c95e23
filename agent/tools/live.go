package tools

import (
	"bytes"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Bounds of what a UI is shown of a running command: the end of its output, as a terminal's
// last screen would show it. A command that floods costs the same as one that prints a line.
const (
	LiveTailBytes = 4 << 10
	LiveTailLines = 40
)

// Live is the end of what a running command printed so far, for a UI to show while it runs. It
// is display-only: the model gets the Result, never this. It sees the output after secrets are
// redacted, as the capture stores it.
//
// The command's reader writes it and a watcher reads it, from two goroutines.
type Live struct {
	mu      sync.Mutex // guards the fields below
	ring    [LiveTailBytes]byte
	pos     int // where the next byte goes
	n       int // bytes held
	total   int64
	began   time.Time
	started bool
}

// NewLive returns an empty Live, for Call.Live.
func NewLive() *Live { return &Live{} }

// LiveSnapshot is a Live at one moment.
type LiveSnapshot struct {
	// Started is false until the command starts: approval and the sandbox's preparation are not
	// its running time. Began is when it started.
	Started bool
	Began   time.Time
	// Tail is the output's end: at most LiveTailBytes and LiveTailLines, valid UTF-8.
	Tail string
	// Bytes is how much it printed so far (after redaction); more than Tail holds when the start
	// is left out.
	Bytes int64
}

// start records that the command started. A nil Live ignores it, as it ignores writes.
func (l *Live) start() {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.began, l.started = time.Now(), true
	l.mu.Unlock()
}

func (l *Live) write(p []byte) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total += int64(len(p))
	if len(p) >= len(l.ring) {
		copy(l.ring[:], p[len(p)-len(l.ring):])
		l.pos, l.n = 0, len(l.ring)
		return
	}
	if k := copy(l.ring[l.pos:], p); k < len(p) {
		copy(l.ring[:], p[k:])
	}
	l.pos = (l.pos + len(p)) % len(l.ring)
	l.n = min(len(l.ring), l.n+len(p))
}

// Snapshot returns what the command printed so far, bounded.
func (l *Live) Snapshot() LiveSnapshot {
	l.mu.Lock()
	var b []byte
	if l.n < len(l.ring) {
		b = bytes.Clone(l.ring[:l.n])
	} else {
		b = append(bytes.Clone(l.ring[l.pos:]), l.ring[:l.pos]...)
	}
	s := LiveSnapshot{Started: l.started, Began: l.began, Bytes: l.total}
	l.mu.Unlock()
	s.Tail = tailText(b, s.Bytes > int64(len(b)))
	return s
}

// tailText is the last LiveTailLines lines of b as valid text; cut says b starts mid-stream, so
// its first bytes may be the end of a character.
func tailText(b []byte, cut bool) string {
	if cut {
		for i := 0; i < utf8.UTFMax && i < len(b) && !utf8.RuneStart(b[i]); i++ {
			b = b[1:]
		}
	}
	end := len(b)
	if end > 0 && b[end-1] == '\n' {
		end-- // a final newline ends the last line; it does not open another
	}
	at, lines := end, 0
	for at > 0 {
		i := bytes.LastIndexByte(b[:at], '\n')
		if lines++; lines == LiveTailLines || i < 0 {
			at = max(i+1, 0)
			break
		}
		at = i
	}
	return strings.ToValidUTF8(string(b[at:]), "\uFFFD")
}
