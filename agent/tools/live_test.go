package tools

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestLiveTail(t *testing.T) {
	lines := func(from, to int) string {
		var b strings.Builder
		for i := from; i <= to; i++ {
			b.WriteString("line " + strconv.Itoa(i) + "\n")
		}
		return b.String()
	}
	tests := []struct {
		name   string
		writes []string
		tail   string
	}{
		{"nothing", nil, ""},
		{"a partial line", []string{"tick-1"}, "tick-1"},
		{"lines in pieces", []string{"tick", "-1\ntick-2\n", "tick-"}, "tick-1\ntick-2\ntick-"},
		{"the last 40 lines", []string{lines(1, 100)}, lines(61, 100)},
		{"40 lines and a partial one", []string{lines(1, 100), "partial"}, lines(62, 100) + "partial"},
		{"an empty line counts", []string{"\n\n\n"}, "\n\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := NewLive()
			var total int
			for _, w := range tt.writes {
				l.write([]byte(w))
				total += len(w)
			}
			s := l.Snapshot()
			if diff := cmp.Diff(s.Tail, tt.tail); diff != "" {
				t.Errorf("tail (-got +want):\n%s", diff)
			}
			if s.Bytes != int64(total) || s.Started {
				t.Errorf("Bytes %d, Started %v; want %d, false", s.Bytes, s.Started, total)
			}
		})
	}
}

// TestLiveBounded: however the output comes (one huge write, many small ones, a line longer than
// the bound, characters cut by the bound), the tail is at most LiveTailBytes of valid text and
// LiveTailLines lines, and ends as the output does.
func TestLiveBounded(t *testing.T) {
	long := strings.Repeat("é", 3*LiveTailBytes) // 2 bytes each: the bound falls inside one, or not
	tests := []struct {
		name   string
		writes []string
		end    string
	}{
		{"one huge write", []string{strings.Repeat("0123456789abcdef\n", 1<<16)}, "0123456789abcdef\n"},
		{"a line longer than the bound", []string{"start\n", long}, "éé"},
		{"the bound inside a character", []string{"x", long}, "éé"},
		{"many small writes", repeat("y\n", 10000), "y\ny\n"},
		{"writes that wrap the ring", repeat(strings.Repeat("z", 1000)+"\n", 50), "zz\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := NewLive()
			for _, w := range tt.writes {
				l.write([]byte(w))
			}
			tail := l.Snapshot().Tail
			if len(tail) > LiveTailBytes || !utf8.ValidString(tail) || strings.Contains(tail, "\uFFFD") {
				t.Errorf("tail of %d bytes, valid %v: %q…", len(tail), utf8.ValidString(tail), tail[:min(len(tail), 20)])
			}
			if n := strings.Count(strings.TrimSuffix(tail, "\n"), "\n") + 1; n > LiveTailLines {
				t.Errorf("%d lines", n)
			}
			if !strings.HasSuffix(tail, tt.end) {
				t.Errorf("tail ends %q, want …%q", tail[max(0, len(tail)-10):], tt.end)
			}
		})
	}
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}
