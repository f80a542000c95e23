package lsp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"go.lsp.dev/jsonrpc2"
)

// Defaults for streamOptions. A message limit of 64 MiB leaves room for the largest didOpen an
// editor sends (a generated file of tens of MiB) while bounding what one client message can cost.
const (
	defaultMaxMessageBytes = 64 << 20
	defaultMaxHeaderBytes  = 8 << 10
	// defaultMaxSkipBytes bounds the body skipped after a message over the limit: an editor that
	// sends a file somewhat too large keeps its connection, while a Content-Length of 10^17 (the
	// stream never finds the next message) ends it instead of reading forever.
	defaultMaxSkipBytes = 4 * defaultMaxMessageBytes
)

// ErrMessageTooLong ends the connection: a message announced a body too long to skip, so the
// stream cannot find where the next message starts.
var ErrMessageTooLong = errors.New("LSP message too long to skip")

// streamOptions bounds what a single client message may cost the server. The zero value is
// usable: every field has a default.
type streamOptions struct {
	// MaxMessageBytes caps a message body. A longer one is skipped without ever being held in
	// memory, and answered with InvalidRequest. Zero or less means defaultMaxMessageBytes.
	MaxMessageBytes int64
	// MaxHeaderBytes caps one header line; a whole header block may take four times as much.
	// Zero or less means defaultMaxHeaderBytes.
	MaxHeaderBytes int
	// MaxSkipBytes caps the body of a message over MaxMessageBytes that the stream reads and
	// drops to reach the next message. A longer one is answered, then Read returns
	// ErrMessageTooLong, which ends the connection. Zero or less means the larger of
	// defaultMaxSkipBytes and 4×MaxMessageBytes.
	MaxSkipBytes int64
	// Logger gets one record for every message the stream drops or answers itself, with the
	// reason and at most a short excerpt of the body. Nil discards them.
	Logger *slog.Logger
}

// newStream returns the LSP-framed stream the server runs jsonrpc2.NewConn on, instead of
// jsonrpc2.newStream. jsonrpc2.Conn closes the whole connection on any Read error, and the stock
// stream returns one for every malformed frame, reads header lines of any length and allocates
// whatever Content-Length claims (up to 2 GiB). This one returns only valid messages, io.EOF
// when the input ends between messages and io.ErrUnexpectedEOF when it ends inside one (or a
// transport error); everything else it handles itself and keeps reading:
//
//   - Headers: Content-Length (any case) is required; Content-Type and unknown headers are
//     ignored; lines may end in CRLF or a bare LF; blank lines between messages are skipped. A
//     block with a line longer than MaxHeaderBytes, more than 4×MaxHeaderBytes in all, a
//     malformed line or conflicting lengths is dropped; if its length is known the body is
//     skipped and answered with InvalidRequest.
//   - No usable Content-Length (missing, negative, not a number), or bytes where a header should
//     start: the block is dropped (logged as "broken header") and the stream resynchronises by
//     scanning, in bounded memory, for the next "Content-Length: N" line — wherever it starts,
//     since the lost body ends right before it with no line break. Best effort: a body that
//     itself contains such a line can cost the message after it too.
//   - Content-Length above MaxMessageBytes: the body is read and discarded in small chunks and
//     answered with InvalidRequest (id null). Above MaxSkipBytes it is answered the same way,
//     logged as an error, and Read returns ErrMessageTooLong: skipping would take as long as the
//     peer cares to send (a length of 10^17 swallowed every later message), so the connection
//     ends, visibly, instead of hanging.
//   - A body that is not JSON (an empty one included) gets ParseError (id null). A JSON body
//     that is not a JSON-RPC message gets InvalidRequest: arrays (batches, which LSP does not
//     use), non-objects, "jsonrpc" other than "2.0" (a missing one is tolerated, as
//     jsonrpc2.DecodeMessage does), a method that is not a non-empty string, an id that is not a
//     string or a 32-bit integer (jsonrpc2.ID cannot hold anything else), and objects with
//     neither method nor id. The answer carries the request's id when it is a string or a
//     number, null otherwise.
//   - A malformed response (no method, but result or error) is logged and dropped, never
//     answered: its id belongs to the server's requests, and answering error responses can
//     start an endless exchange with a peer that does the same.
//   - Not checked, so that the handlers can answer precisely: the shape of params, a response
//     carrying neither result nor error (passed on with a null result).
//
// Read checks ctx before each frame only: the underlying Read blocks and cannot be interrupted,
// so a caller that must stop closes the stream (jsonrpc2.Conn.Close does). Error answers are
// written from Read, under the same lock as Write, so frames never interleave; like any write
// they block while the peer is not reading.
func newStream(rwc io.ReadWriteCloser, opts streamOptions) jsonrpc2.Stream {
	s := &frameStream{
		rwc:        rwc,
		in:         bufio.NewReaderSize(rwc, 32<<10),
		maxMessage: opts.MaxMessageBytes,
		maxHeader:  opts.MaxHeaderBytes,
		maxSkip:    opts.MaxSkipBytes,
		log:        opts.Logger,
	}
	if s.maxMessage <= 0 {
		s.maxMessage = defaultMaxMessageBytes
	}
	// A body is one []byte: keep the limit representable on 32-bit platforms.
	s.maxMessage = min(s.maxMessage, math.MaxInt)
	if s.maxHeader <= 0 {
		s.maxHeader = defaultMaxHeaderBytes
	}
	if s.maxSkip <= 0 {
		s.maxSkip = max(defaultMaxSkipBytes, 4*min(s.maxMessage, math.MaxInt64/4))
	}
	s.maxSkip = max(s.maxSkip, s.maxMessage)
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	return s
}

// frameStream is the jsonrpc2.Stream newStream returns.
type frameStream struct {
	rwc        io.ReadWriteCloser
	maxMessage int64
	maxHeader  int
	maxSkip    int64
	log        *slog.Logger

	// Read state. jsonrpc2.Conn calls Read from a single goroutine, so these need no lock.
	in     *bufio.Reader
	line   []byte // the header line being read, at most maxHeader+2 bytes of it
	resync bool   // the last header block had no usable length: scan for the next one
	large  bool   // the last message returned was at least largeMessageBytes

	// writeMu guards writes to rwc and wbuf, so that a frame from Write and an error answer
	// from Read never interleave.
	writeMu sync.Mutex
	wbuf    []byte // the frame being written, reused while it stays small

	closeOnce sync.Once
	closeErr  error
}

// frameHeader is what a header block said.
type frameHeader struct {
	length  int64  // the Content-Length, -1 if there was no usable one
	problem string // why the message must be dropped; "" when the block is sound
}

// frameRejection is a message the stream drops instead of returning it.
type frameRejection struct {
	code   jsonrpc2.Code
	id     json.RawMessage // the request's id to answer with; nil for null
	reason string
	answer bool // whether to write an error response
}

// Read implements jsonrpc2.Stream; see newStream for what it accepts.
func (s *frameStream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	if s.large {
		// jsonrpc2.Conn reads the next message once the last one's handler returned: a large
		// message's copies (its body, its params, the text decoded from them) are garbage by now.
		// Without this the runtime keeps their pages for later, and three 50 MiB buffers (one kept)
		// left the process at 450 MB; with it, the process returns to what it holds.
		s.large = false
		debug.FreeOSMemory()
	}
	var total int64
	for {
		if err := ctx.Err(); err != nil {
			return nil, total, fmt.Errorf("read LSP message: %w", err)
		}
		h, n, err := s.readHeader()
		total += n
		if err != nil {
			return nil, total, err
		}
		switch {
		case h.problem != "" && h.length < 0:
			s.resync = true
			s.log.LogAttrs(ctx, slog.LevelWarn, "broken header: "+h.problem+"; skipping to the next Content-Length",
				slog.String("reason", h.problem), slog.Int64("bytes", n))
			continue
		case h.length > s.maxSkip:
			reason := fmt.Sprintf("message of %d bytes exceeds the limit of %d bytes and is too long to skip: closing the connection", h.length, s.maxMessage)
			s.reject(ctx, frameRejection{code: jsonrpc2.InvalidRequest, reason: reason, answer: true}, h.length, nil)
			s.log.LogAttrs(ctx, slog.LevelError, "LSP connection closed: "+reason, slog.Int64("bytes", h.length))
			return nil, total, fmt.Errorf("%w: %d bytes announced, at most %d skipped", ErrMessageTooLong, h.length, s.maxSkip)
		case h.problem != "" || h.length > s.maxMessage:
			n, err := s.discard(h.length)
			total += n
			if err != nil {
				return nil, total, err
			}
			rej := frameRejection{code: jsonrpc2.InvalidRequest, reason: h.problem, answer: true}
			if h.problem == "" {
				rej.reason = fmt.Sprintf("message of %d bytes exceeds the limit of %d bytes", h.length, s.maxMessage)
			}
			s.reject(ctx, rej, h.length, nil)
			continue
		}
		body, err := readBody(s.in, h.length)
		total += int64(len(body))
		if err != nil {
			return nil, total, fmt.Errorf("read %d-byte LSP message body: %w", h.length, unexpectedEOF(err))
		}
		msg, rej := decodeFrame(body)
		if rej == nil {
			s.large = h.length >= largeMessageBytes
			return msg, total, nil
		}
		s.reject(ctx, *rej, h.length, body)
	}
}

// readHeader reads one header block, resynchronising first if the previous one was broken. A
// non-nil error ends the stream: io.EOF if the input ended before the block began.
func (s *frameStream) readHeader() (frameHeader, int64, error) {
	h := frameHeader{length: -1}
	var n int64
	started := false // a byte of the block was consumed: from now on an EOF is unexpected
	if s.resync {
		length, m, err := s.scanToContentLength()
		n += m
		if err != nil {
			// Nothing was in progress: the broken message was already dropped.
			return h, n, readError("resynchronise LSP stream", err)
		}
		s.resync = false
		h.length = length
		started = true
	}
	var block int64 // bytes of header lines, for the 4×MaxHeaderBytes limit
	for {
		if !started {
			p, err := s.in.Peek(1)
			if err != nil {
				return h, n, readError("read LSP header", err)
			}
			switch c := p[0]; {
			case c == '\r' || c == '\n' || c == ' ' || c == '\t':
				// Blank lines between messages: some clients end a body with a newline.
				_, _ = s.in.ReadByte() // cannot fail after a successful Peek
				n++
				continue
			case !isTokenByte(c):
				h.problem = fmt.Sprintf("byte %q where a header should start", c)
				return h, n, nil
			}
			started = true
		}
		line, long, m, err := s.readLine()
		n += m
		block += m
		if err != nil {
			return h, n, readError("read LSP header", unexpectedEOF(err))
		}
		if len(bytes.TrimSpace(line)) == 0 && !long {
			if h.length < 0 {
				h.fail("no Content-Length")
			}
			return h, n, nil
		}
		// Lines are still parsed after a problem, each bounded, so that a Content-Length after
		// a long line still tells how much body to skip.
		switch {
		case long:
			h.fail(fmt.Sprintf("header line longer than %d bytes", s.maxHeader))
		case block > 4*int64(s.maxHeader):
			h.fail(fmt.Sprintf("header block longer than %d bytes", 4*s.maxHeader))
			h.parseLine(line)
		default:
			h.parseLine(line)
		}
	}
}

// fail records the first problem of a header block.
func (h *frameHeader) fail(problem string) {
	if h.problem == "" {
		h.problem = problem
	}
}

// parseLine applies one header line to h.
func (h *frameHeader) parseLine(line []byte) {
	name, value, ok := bytes.Cut(line, []byte(":"))
	name = bytes.TrimSpace(name)
	if !ok || len(name) == 0 || !isToken(name) {
		h.fail(fmt.Sprintf("malformed header line %q", excerpt(line, 40)))
		return
	}
	if !bytes.EqualFold(name, []byte("Content-Length")) {
		return // Content-Type (always UTF-8 JSON in practice) and unknown headers
	}
	length, ok := parseLength(bytes.TrimSpace(value))
	switch {
	case !ok:
		h.fail(fmt.Sprintf("invalid Content-Length %q", excerpt(bytes.TrimSpace(value), 40)))
	case h.length >= 0 && h.length != length:
		h.fail(fmt.Sprintf("conflicting Content-Length headers %d and %d", h.length, length))
	default:
		h.length = length
	}
}

// readLine consumes one line and returns it without its line ending, keeping at most
// maxHeader+2 bytes of it: long reports that the line was longer than maxHeader and was cut.
// The rest of a long line is read and dropped, never buffered.
func (s *frameStream) readLine() (line []byte, long bool, n int64, err error) {
	s.line = s.line[:0]
	var last byte // the byte before the current fragment, to find a CR split from its LF
	for {
		frag, err := s.in.ReadSlice('\n')
		n += int64(len(frag))
		if room := s.maxHeader + 2 - len(s.line); room > 0 {
			s.line = append(s.line, frag[:min(room, len(frag))]...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			last = frag[len(frag)-1]
			continue
		}
		if err != nil {
			return nil, false, n, err
		}
		content := n - 1 // without the LF
		if len(frag) >= 2 && frag[len(frag)-2] == '\r' || len(frag) == 1 && last == '\r' {
			content--
		}
		if content > int64(s.maxHeader) {
			return nil, true, n, nil
		}
		return s.line[:content], false, n, nil
	}
}

// scanToContentLength skips input until a "Content-Length: N" line and returns N. The name is
// matched case-insensitively wherever it starts; a match not followed by a valid value (the
// words inside a JSON string) is skipped, and only the bytes that matched are consumed.
func (s *frameStream) scanToContentLength() (length int64, n int64, err error) {
	const name = "content-length:"
	matched := 0
	for {
		b, err := s.in.ReadByte()
		if err != nil {
			return -1, n, err
		}
		n++
		// No proper prefix of name recurs inside it, so a mismatch restarts from its first byte.
		switch c := lowerASCII(b); {
		case c == name[matched]:
			matched++
		case c == name[0]:
			matched = 1
		default:
			matched = 0
		}
		if matched < len(name) {
			continue
		}
		matched = 0
		length, m, err := s.scanLengthValue()
		n += m
		if err != nil {
			return -1, n, err
		}
		if length >= 0 {
			return length, n, nil
		}
	}
}

// scanLengthValue reads the " 123\r\n" that follows a Content-Length name found by
// scanToContentLength, or returns -1 leaving the first byte that does not fit unread.
func (s *frameStream) scanLengthValue() (length int64, n int64, err error) {
	const (
		leading = iota
		digits
		trailing
		cr
	)
	state, count := leading, 0
	for {
		b, err := s.in.ReadByte()
		if err != nil {
			return -1, n, err
		}
		n++
		switch {
		case (b == ' ' || b == '\t') && state != cr:
			if state == digits {
				state = trailing
			}
			continue
		case b >= '0' && b <= '9' && state <= digits && count < maxLengthDigits:
			state, count = digits, count+1
			length = length*10 + int64(b-'0')
			continue
		case b == '\r' && (state == digits || state == trailing):
			state = cr
			continue
		case b == '\n' && state != leading:
			return length, n, nil
		}
		_ = s.in.UnreadByte() // cannot fail right after ReadByte
		return -1, n - 1, nil
	}
}

// maxLengthDigits keeps a Content-Length below math.MaxInt64 without overflow checks.
const maxLengthDigits = 18

// parseLength parses a Content-Length value: decimal digits only, no sign.
func parseLength(v []byte) (int64, bool) {
	if len(v) == 0 || len(v) > maxLengthDigits {
		return 0, false
	}
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// discard skips an n-byte body in small chunks: io.Discard reads through a pooled 8 KiB buffer,
// so a body that claims gigabytes costs nothing but the time to read it.
func (s *frameStream) discard(n int64) (int64, error) {
	if n <= 0 {
		return 0, nil
	}
	m, err := io.CopyN(io.Discard, s.in, n)
	if err != nil {
		return m, fmt.Errorf("skip %d-byte LSP message body: %w", n, unexpectedEOF(err))
	}
	return m, nil
}

// bodyChunk is the largest body allocated at once before its bytes arrive.
const bodyChunk = 1 << 20

// readBody reads an n-byte body into a fresh slice (jsonrpc2.DecodeMessage keeps references into
// it, so it is never reused). Past bodyChunk the slice grows with what actually arrives, so a
// peer that announces 60 MiB and stalls or hangs up holds no more memory than it sent.
func readBody(r io.Reader, n int64) ([]byte, error) {
	buf := make([]byte, 0, min(n, bodyChunk))
	for int64(len(buf)) < n {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, int(min(n-int64(len(buf)), int64(cap(buf)))))
		}
		end := int(min(int64(cap(buf)), n))
		m, err := io.ReadFull(r, buf[len(buf):end])
		buf = buf[:len(buf)+m]
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// frameProbe is a lenient view of a message that jsonrpc2.DecodeMessage refused, to tell what is
// wrong with it and which id to answer with.
type frameProbe struct {
	JSONRPC json.RawMessage `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  json.RawMessage `json:"method"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// decodeFrame turns a body into a message, or says why it is not one.
func decodeFrame(body []byte) (jsonrpc2.Message, *frameRejection) {
	if !json.Valid(body) {
		return nil, &frameRejection{code: jsonrpc2.ParseError, reason: "parse error: " + syntaxReason(body), answer: true}
	}
	switch bytes.TrimLeft(body, " \t\r\n")[0] {
	case '{':
	case '[':
		return nil, &frameRejection{code: jsonrpc2.InvalidRequest, reason: "batches are not supported: send one JSON object per message", answer: true}
	default:
		return nil, &frameRejection{code: jsonrpc2.InvalidRequest, reason: "a message must be a JSON object", answer: true}
	}
	msg, err := jsonrpc2.DecodeMessage(body)
	var p frameProbe
	if err == nil {
		if _, ok := msg.(*jsonrpc2.Response); !ok {
			return msg, nil
		}
		// DecodeMessage takes any message without a method for a response, "method": "" too.
		if json.Unmarshal(body, &p) != nil || p.Method == nil {
			return msg, nil
		}
		err = errors.New("empty method")
	} else if uerr := json.Unmarshal(body, &p); uerr != nil {
		// Cannot happen for a valid JSON object: every field is a RawMessage.
		return nil, &frameRejection{code: jsonrpc2.InvalidRequest, reason: "invalid message: " + uerr.Error(), answer: true}
	}
	reason := probeReason(p, err)
	switch {
	case p.Method != nil:
		return nil, &frameRejection{code: jsonrpc2.InvalidRequest, id: answerID(p.ID), reason: reason, answer: true}
	case p.Result != nil || p.Error != nil:
		return nil, &frameRejection{code: jsonrpc2.InvalidRequest, id: answerID(p.ID), reason: "invalid response: " + reason}
	}
	return nil, &frameRejection{code: jsonrpc2.InvalidRequest, reason: reason, answer: true}
}

// probeReason says, for the client's benefit, why a message was refused; err is
// jsonrpc2.DecodeMessage's own, less readable, verdict.
func probeReason(p frameProbe, err error) string {
	var version, method string
	switch {
	case p.JSONRPC != nil && (json.Unmarshal(p.JSONRPC, &version) != nil || version != jsonrpc2.Version):
		return `"jsonrpc" must be "2.0"`
	case p.Method != nil && (json.Unmarshal(p.Method, &method) != nil || method == ""):
		return `"method" must be a non-empty string`
	case p.ID != nil && string(p.ID) != "null" && !validID(p.ID):
		return `"id" must be a string or a 32-bit integer`
	case p.Method == nil && (p.ID == nil || string(p.ID) == "null"):
		if p.Result != nil || p.Error != nil {
			return "a response needs an id"
		}
		return "a message needs a method (request) or an id (response)"
	}
	return "invalid message: " + truncate(err.Error(), 120)
}

// validID reports whether jsonrpc2.ID can hold raw: a string or an integer that fits in int32.
func validID(raw json.RawMessage) bool {
	if raw[0] == '"' {
		return true
	}
	_, err := strconv.ParseInt(string(raw), 10, 32)
	return err == nil
}

// answerID is the id to echo in an error answer: the request's own if it is a string or a number
// of reasonable size, so the client can fail that request instead of waiting forever.
func answerID(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || len(raw) > 256 {
		return nil
	}
	if c := raw[0]; c == '"' || c == '-' || c >= '0' && c <= '9' {
		return raw
	}
	return nil
}

// syntaxReason describes why body is not JSON. Only called on bodies json.Valid refused, for
// which json.Unmarshal stops at its validity scan and allocates nothing in proportion to body.
func syntaxReason(body []byte) string {
	if len(bytes.TrimSpace(body)) == 0 {
		return "empty body"
	}
	var v json.RawMessage
	err := json.Unmarshal(body, &v)
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return truncate(fmt.Sprintf("%s (at byte %d)", se, se.Offset), 120)
	}
	if err != nil {
		return truncate(err.Error(), 120)
	}
	return "invalid JSON"
}

// reject logs a dropped message and, when the client may be waiting on it, answers it.
func (s *frameStream) reject(ctx context.Context, rej frameRejection, size int64, body []byte) {
	attrs := []slog.Attr{
		slog.String("reason", rej.reason),
		slog.Int64("bytes", size),
		slog.Bool("answered", rej.answer),
	}
	if rej.id != nil {
		attrs = append(attrs, slog.String("id", string(rej.id)))
	}
	if body != nil {
		attrs = append(attrs, slog.String("excerpt", excerpt(body, 200)))
	}
	s.log.LogAttrs(ctx, slog.LevelWarn, "rejected LSP message", attrs...)
	if !rej.answer {
		return
	}
	id := rej.id
	if id == nil {
		id = json.RawMessage("null")
	}
	resp, err := json.Marshal(frameErrorResponse{
		JSONRPC: jsonrpc2.Version,
		ID:      id,
		Error:   &jsonrpc2.Error{Code: rej.code, Message: rej.reason},
	})
	if err == nil {
		_, err = s.writeFrame(resp)
	}
	if err != nil {
		s.log.LogAttrs(ctx, slog.LevelWarn, "could not answer rejected LSP message", slog.String("error", err.Error()))
	}
}

// frameErrorResponse is an error answer written by the stream itself; jsonrpc2.Response cannot
// carry a null id or one jsonrpc2.ID cannot hold.
type frameErrorResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   *jsonrpc2.Error `json:"error"`
}

// Write implements jsonrpc2.Stream: the header and the body go out in one write call.
func (s *frameStream) Write(ctx context.Context, msg jsonrpc2.Message) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("write LSP message: %w", err)
	}
	var body []byte
	var err error
	if m, ok := msg.(json.Marshaler); ok {
		// Every jsonrpc2 message marshals itself (validating what it embeds); going through
		// json.Marshal would check and compact the result a second time.
		body, err = m.MarshalJSON()
	} else {
		body, err = json.Marshal(msg)
	}
	if err != nil {
		return 0, fmt.Errorf("marshal %T: %w", msg, err)
	}
	return s.writeFrame(body)
}

// writeFrame writes one framed body under writeMu.
func (s *frameStream) writeFrame(body []byte) (int64, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.wbuf = append(s.wbuf[:0], "Content-Length: "...)
	s.wbuf = strconv.AppendInt(s.wbuf, int64(len(body)), 10)
	s.wbuf = append(s.wbuf, "\r\n\r\n"...)
	s.wbuf = append(s.wbuf, body...)
	n, err := s.rwc.Write(s.wbuf)
	if cap(s.wbuf) > bodyChunk {
		s.wbuf = nil // do not pin the memory of one large message
	}
	if err != nil {
		return int64(n), fmt.Errorf("write LSP frame: %w", err)
	}
	return int64(n), nil
}

// Close implements jsonrpc2.Stream. It closes rwc once; later calls return the same result.
func (s *frameStream) Close() error {
	s.closeOnce.Do(func() {
		if err := s.rwc.Close(); err != nil {
			s.closeErr = fmt.Errorf("close LSP stream: %w", err)
		}
	})
	return s.closeErr
}

// idKey is a map key for a request id, for the dispatcher's table of requests in flight:
// jsonrpc2.ID hides its fields, and numeric and string ids must stay distinct ("n:5" and
// "s:5"). jsonrpc2 itself decodes the string id "" as the number 0, so it gets "n:0".
func idKey(id jsonrpc2.ID) string {
	// With the q verb, ID formats a number as #5 and a string Go-quoted, which unquotes exactly.
	q := fmt.Sprintf("%q", id)
	if rest, ok := strings.CutPrefix(q, "#"); ok {
		return "n:" + rest
	}
	name, err := strconv.Unquote(q)
	if err != nil {
		return "s:" + q // cannot happen: fmt's %q output always unquotes
	}
	return "s:" + name
}

// parseCancelID decodes $/cancelRequest params into the idKey of the request to cancel. It
// exists because jsonrpc2.CancelHandler decodes the id as a float64 and so never matches the
// numeric ids VS Code, Neovim and LSP4J send. 5, 5.0 and 5e0 all give "n:5"; "5" gives "s:5".
func parseCancelID(params json.RawMessage) (key string, err error) {
	var p struct {
		ID json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return "", fmt.Errorf("decode $/cancelRequest params: %w", err)
	}
	id, err := parseRequestID(p.ID)
	if err != nil {
		return "", fmt.Errorf("decode $/cancelRequest params: %w", err)
	}
	return idKey(id), nil
}

// parseRequestID decodes a JSON id into the jsonrpc2.ID a request with that id was given.
func parseRequestID(raw json.RawMessage) (jsonrpc2.ID, error) {
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return jsonrpc2.ID{}, errors.New("no id")
	case raw[0] == '"':
		var name string
		if err := json.Unmarshal(raw, &name); err != nil {
			return jsonrpc2.ID{}, fmt.Errorf("id %s: %w", excerpt(raw, 40), err)
		}
		return jsonrpc2.NewStringID(name), nil
	case raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9':
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil || f != math.Trunc(f) || f < math.MinInt32 || f > math.MaxInt32 {
			return jsonrpc2.ID{}, fmt.Errorf("id %s is not a 32-bit integer", excerpt(raw, 40))
		}
		return jsonrpc2.NewNumberID(int32(f)), nil
	}
	return jsonrpc2.ID{}, fmt.Errorf("id %s is neither a number nor a string", excerpt(raw, 40))
}

// readError passes io.EOF through unwrapped (callers compare with ==) and wraps anything else.
func readError(doing string, err error) error {
	if err == io.EOF {
		return io.EOF
	}
	return fmt.Errorf("%s: %w", doing, err)
}

// unexpectedEOF turns io.EOF into io.ErrUnexpectedEOF, for reads inside a message.
func unexpectedEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// excerpt is at most limit bytes of b for a log record, cut on a rune boundary.
func excerpt(b []byte, limit int) string {
	if len(b) <= limit {
		return strings.ToValidUTF8(string(b), "\uFFFD")
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return strings.ToValidUTF8(string(b[:cut]), "\uFFFD") + "…"
}

// truncate shortens s for an error message.
func truncate(s string, limit int) string {
	return excerpt([]byte(s), limit)
}

// isToken reports whether b is an HTTP header name (RFC 9110 token).
func isToken(b []byte) bool {
	for _, c := range b {
		if !isTokenByte(c) {
			return false
		}
	}
	return true
}

// isTokenByte reports whether c may appear in an HTTP header name.
func isTokenByte(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// lowerASCII lowers an ASCII letter.
func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
