package tools

import (
	"encoding/binary"
	"errors"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/reprise-dev/reprise/agent/secret"
	"github.com/reprise-dev/reprise/contextwin"
)

// readBufSize is the chunk read from a command's pipe: large enough that a flood costs few
// syscalls, small enough not to matter.
const readBufSize = 256 << 10

// capture is the sink of an output. It keeps, in memory bounded by MaxOutputChars and
// LargeOutputBytes whatever the output's size, what the model will see — the first and last
// characters contextwin.Truncate would keep — and tees the stream to a spill file once it grows
// past LargeOutputBytes. Its rendering equals contextwin.Truncate of the whole output whenever
// that output is valid UTF-8.
//
// Characters are runes. The head and tail are kept as bytes, UTFMax per character, so the cut
// can be made on rune boundaries when rendering; the character count comes from counting the
// bytes that start a rune, which does not care how the stream was split into writes.
type capture struct {
	maxChars  int
	headChars int
	tailChars int
	head      []byte // the stream's first headCap bytes
	headCap   int
	ring      []byte         // the last len(ring) bytes after head, from ringPos on
	ringLen   int            // bytes held in ring
	ringPos   int            // where the next byte goes
	total     int64          // bytes written
	cont      int64          // UTF-8 continuation bytes among them
	spill     *spill         // nil: the output is not saved
	redact    *secret.Writer // nil: nothing to redact; else Write goes through it to store
	live      *Live          // nil: nobody watches the output as it comes
}

func newCapture(maxChars int, sp *spill) *capture {
	head, tail := contextwin.Split(maxChars)
	return &capture{
		maxChars:  maxChars,
		headChars: head,
		tailChars: tail,
		headCap:   head * utf8.UTFMax,
		head:      make([]byte, 0, head*utf8.UTFMax),
		ring:      make([]byte, max(tail, 1)*utf8.UTFMax),
		spill:     sp,
	}
}

// redacting makes the capture replace the secrets r knows before anything is kept or saved.
func (c *capture) redacting(r *secret.Redactor) *capture {
	if !r.Empty() {
		c.redact = r.NewWriter(storer{c})
	}
	return c
}

// storer is the capture past its redaction.
type storer struct{ c *capture }

func (s storer) Write(p []byte) (int, error) { return s.c.store(p) }

// Write never fails: a spill error is reported when rendering.
func (c *capture) Write(p []byte) (int, error) {
	if c.redact != nil {
		return c.redact.Write(p)
	}
	return c.store(p)
}

// store keeps p: head, tail ring and spill file.
func (c *capture) store(p []byte) (int, error) {
	n := len(p)
	c.total += int64(n)
	c.live.write(p) // past the redaction, as everything stored
	c.cont += int64(countContinuation(p))
	if c.spill != nil {
		c.spill.write(p)
	}
	if room := c.headCap - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 {
		return n, nil
	}
	size := len(c.ring)
	if len(p) >= size {
		copy(c.ring, p[len(p)-size:])
		c.ringPos, c.ringLen = 0, size
		return n, nil
	}
	if k := copy(c.ring[c.ringPos:], p); k < len(p) {
		copy(c.ring, p[k:])
	}
	c.ringPos = (c.ringPos + len(p)) % size
	c.ringLen = min(size, c.ringLen+len(p))
	return n, nil
}

// ReadFrom drains r with one large buffer; it is how a command's pipe is read.
func (c *capture) ReadFrom(r io.Reader) (int64, error) {
	buf := make([]byte, readBufSize)
	var n int64
	for {
		k, err := r.Read(buf)
		if k > 0 {
			c.Write(buf[:k])
			n += int64(k)
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// WriteString spares a copy for outputs built in memory.
func (c *capture) WriteString(s string) (int, error) {
	return c.Write([]byte(s))
}

// tailBytes returns the ring's content in stream order.
func (c *capture) tailBytes() []byte {
	if c.ringLen < len(c.ring) {
		return c.ring[:c.ringLen]
	}
	out := make([]byte, 0, len(c.ring))
	out = append(out, c.ring[c.ringPos:]...)
	return append(out, c.ring[:c.ringPos]...)
}

// render returns the bounded text, the output's length in characters and how many the text
// leaves out. Invalid UTF-8 is replaced, so the model always gets valid text.
func (c *capture) render() (text string, chars, omitted int) {
	if c.redact != nil {
		// The stream is over: what was held back in case a secret began there. Into the capture,
		// which never fails.
		_ = c.redact.Flush()
	}
	tail := c.tailBytes()
	if c.total <= int64(c.headCap+len(c.ring)) { // nothing was dropped
		whole := string(c.head) + string(tail)
		out, om := contextwin.Truncate(whole, c.maxChars)
		return strings.ToValidUTF8(out, "\uFFFD"), utf8.RuneCountInString(whole), om
	}
	h := prefixRunes(c.head, c.headChars)
	t := suffixRunes(tail, c.tailChars)
	chars = int(c.total - c.cont)
	omitted = chars - c.headChars - c.tailChars
	if omitted < 1 { // not UTF-8: count what is left out in bytes
		omitted = int(c.total) - len(h) - len(t)
		chars = int(c.total)
	}
	var b strings.Builder
	marker := contextwin.Marker(omitted)
	b.Grow(len(h) + len(marker) + len(t))
	b.Write(h)
	b.WriteString(marker)
	b.Write(t)
	return strings.ToValidUTF8(b.String(), "\uFFFD"), chars, omitted
}

// prefixRunes returns the first n runes of b.
func prefixRunes(b []byte, n int) []byte {
	i := 0
	for ; n > 0 && i < len(b); n-- {
		_, size := utf8.DecodeRune(b[i:])
		i += size
	}
	return b[:i]
}

// suffixRunes returns the last n runes of b.
func suffixRunes(b []byte, n int) []byte {
	i := len(b)
	for ; n > 0 && i > 0; n-- {
		_, size := utf8.DecodeLastRune(b[:i])
		i -= size
	}
	return b[i:]
}

// countContinuation counts the bytes 10xxxxxx in p, eight at a time: a byte is one when its top
// bit is set and the next is clear.
func countContinuation(p []byte) int {
	const top = 0x8080808080808080
	n := 0
	for len(p) >= 32 {
		w0 := binary.LittleEndian.Uint64(p)
		w1 := binary.LittleEndian.Uint64(p[8:])
		w2 := binary.LittleEndian.Uint64(p[16:])
		w3 := binary.LittleEndian.Uint64(p[24:])
		n += bits.OnesCount64(w0&^(w0<<1)&top) + bits.OnesCount64(w1&^(w1<<1)&top) +
			bits.OnesCount64(w2&^(w2<<1)&top) + bits.OnesCount64(w3&^(w3<<1)&top)
		p = p[32:]
	}
	for _, b := range p {
		if b&0xC0 == 0x80 {
			n++
		}
	}
	return n
}

// spill saves a whole output once it proves large: until then its first bytes wait in memory
// (at most the threshold), so small outputs never touch the disk.
type spill struct {
	dir, prefix string
	threshold   int
	max         int64
	pending     []byte
	f           *os.File
	saved       int64
	capped      bool
	err         error
}

// errStoreFull: the session's saved outputs reached Env.MaxStoreBytes.
var errStoreFull = errors.New("the session's saved outputs reached their bound; read_file or search one of the saved outputs, or narrow the command's output")

func newSpill(dir, prefix string, threshold int, maxBytes int64) *spill {
	if dir == "" {
		return nil
	}
	return &spill{dir: dir, prefix: prefix, threshold: threshold, max: maxBytes}
}

func (s *spill) write(p []byte) {
	if s.err != nil || s.capped {
		return
	}
	if s.f == nil {
		if len(s.pending)+len(p) <= s.threshold {
			s.pending = append(s.pending, p...)
			return
		}
		if s.max <= 0 {
			s.err = errStoreFull
			return
		}
		if err := os.MkdirAll(s.dir, 0o700); err != nil {
			s.err = err
			return
		}
		f, err := os.CreateTemp(s.dir, s.prefix+"-*.txt") // mode 0600
		if err != nil {
			s.err = err
			return
		}
		s.f = f
		pending := s.pending
		s.pending = nil
		s.put(pending)
	}
	s.put(p)
}

func (s *spill) put(p []byte) {
	if s.capped || s.err != nil {
		return
	}
	if room := s.max - s.saved; int64(len(p)) > room {
		p = p[:room]
		s.capped = true
	}
	n, err := s.f.Write(p)
	s.saved += int64(n)
	if err != nil {
		s.err = err
	}
}

// finish closes the saved file and returns its path, or "" when nothing was saved.
func (s *spill) finish() (path string, err error) {
	if s == nil || s.f == nil {
		if s != nil {
			return "", s.err
		}
		return "", nil
	}
	cerr := s.f.Close()
	if s.err == nil {
		s.err = cerr
	}
	if s.err != nil {
		os.Remove(s.f.Name())
		return "", s.err
	}
	return filepath.Clean(s.f.Name()), nil
}
