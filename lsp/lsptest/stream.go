package lsptest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"go.lsp.dev/jsonrpc2"
)

// maxMessage bounds the Content-Length the editor accepts, so a server that announces a huge frame
// fails the test with a message instead of allocating gigabytes.
const maxMessage = 64 << 20

// maxHeaderLine bounds one header line for the same reason.
const maxHeaderLine = 4096

// stream is the jsonrpc2.Stream under the editor's connection. It does its own LSP framing, rather
// than decorating jsonrpc2.NewStream, because it needs each message's raw bytes: it records what
// the server sends, in arrival order, before the connection sees it, and it keeps the responses
// jsonrpc2 would mishandle (id null makes its decoder fail and kill the connection; an unknown id
// is silently dropped) as orphans instead of passing them on.
type stream struct {
	rwc io.ReadWriteCloser
	in  *bufio.Reader // used only by Read, which the connection's read loop alone calls
	rec *recorder

	wmu sync.Mutex // guards writes to rwc, so WriteRaw does not interleave with framed messages

	pmu     sync.Mutex           // guards pending
	pending map[jsonrpc2.ID]bool // ids of calls sent and not answered; false once the caller gave up

	hmu       sync.Mutex    // guards held
	held      chan struct{} // non-nil while reads are held; closed to let them go
	closed    chan struct{} // closed by Close, so a held read ends with the connection
	closeOnce sync.Once
}

func newStream(rwc io.ReadWriteCloser, rec *recorder) *stream {
	return &stream{
		rwc:     rwc,
		in:      bufio.NewReaderSize(rwc, maxHeaderLine),
		rec:     rec,
		pending: make(map[jsonrpc2.ID]bool),
		closed:  make(chan struct{}),
	}
}

// hold stops Read before its next frame until the returned function is called.
func (s *stream) hold() (release func()) {
	s.hmu.Lock()
	defer s.hmu.Unlock()
	if s.held == nil {
		s.held = make(chan struct{})
	}
	held := s.held
	var once sync.Once
	return func() {
		once.Do(func() {
			s.hmu.Lock()
			defer s.hmu.Unlock()
			if s.held == held {
				s.held = nil
			}
			close(held)
		})
	}
}

// waitHeld returns once reads are not held, or io.ErrClosedPipe once the stream is closed.
func (s *stream) waitHeld() error {
	s.hmu.Lock()
	held := s.held
	s.hmu.Unlock()
	if held == nil {
		return nil
	}
	select {
	case <-held:
		return nil
	case <-s.closed:
		return io.ErrClosedPipe
	}
}

// Read returns the next message for the connection. Orphans and undecodable messages are recorded
// and skipped. When the stream fails, the recorder learns why, so waits end at once.
func (s *stream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	var total int64
	for {
		if err := s.waitHeld(); err != nil {
			s.rec.end(err)
			return nil, total, err
		}
		data, n, err := s.readFrame()
		total += n
		if err != nil {
			s.rec.end(err)
			return nil, total, err
		}
		if msg := s.accept(data); msg != nil {
			return msg, total, nil
		}
	}
}

// accept classifies one frame: requests and notifications are recorded and returned, responses
// to a waiting call are returned, everything else is recorded as an orphan and dropped (nil).
func (s *stream) accept(data []byte) jsonrpc2.Message {
	var env struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(data, &env); err != nil {
		s.rec.orphan(data)
		return nil
	}
	hasID := len(env.ID) > 0 && !bytes.Equal(env.ID, []byte("null"))
	if env.Method == "" && !hasID {
		s.rec.orphan(data)
		return nil
	}
	msg, err := jsonrpc2.DecodeMessage(data)
	if err != nil {
		s.rec.orphan(data)
		return nil
	}
	if resp, ok := msg.(*jsonrpc2.Response); ok {
		if !s.answered(resp.ID()) {
			s.rec.orphan(data)
			return nil
		}
		return resp
	}
	m := Message{Method: env.Method, Params: env.Params}
	if hasID {
		m.isRequest, m.ID = true, string(env.ID)
	}
	s.rec.message(m)
	return msg
}

// answered reports whether id belongs to a call still waiting, and forgets it.
func (s *stream) answered(id jsonrpc2.ID) bool {
	s.pmu.Lock()
	defer s.pmu.Unlock()
	waiting, ok := s.pending[id]
	delete(s.pending, id)
	return ok && waiting
}

// abandon marks a call whose caller stopped waiting: its late response becomes an orphan, where a
// test can see it (for instance the RequestCancelled error after $/cancelRequest). It reports
// whether the call had been sent and was still unanswered, i.e. whether cancelling means anything.
func (s *stream) abandon(id jsonrpc2.ID) bool {
	s.pmu.Lock()
	defer s.pmu.Unlock()
	waiting, ok := s.pending[id]
	if ok {
		s.pending[id] = false
	}
	return ok && waiting
}

func (s *stream) readFrame() ([]byte, int64, error) {
	var total, length int64
	for {
		line, err := s.in.ReadSlice('\n')
		total += int64(len(line))
		if err == bufio.ErrBufferFull {
			return nil, total, fmt.Errorf("read header: line longer than %d bytes", maxHeaderLine)
		}
		if err != nil {
			return nil, total, fmt.Errorf("read header: %w", err)
		}
		text := strings.TrimSpace(string(line))
		if text == "" {
			break
		}
		name, value, ok := strings.Cut(text, ":")
		if !ok {
			return nil, total, fmt.Errorf("read header: invalid line %q", text)
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			length, err = strconv.ParseInt(strings.TrimSpace(value), 10, 64)
			if err != nil || length <= 0 || length > maxMessage {
				return nil, total, fmt.Errorf("read header: bad Content-Length %q (limit %d)", value, maxMessage)
			}
		}
	}
	if length == 0 {
		return nil, total, fmt.Errorf("read header: no Content-Length")
	}
	data := make([]byte, length)
	n, err := io.ReadFull(s.in, data)
	total += int64(n)
	if err != nil {
		return nil, total, fmt.Errorf("read body: %w", err)
	}
	return data, total, nil
}

// Write frames msg. A call is registered as pending before its bytes leave, so its response cannot
// arrive first and be taken for an orphan.
func (s *stream) Write(ctx context.Context, msg jsonrpc2.Message) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	data, err := json.Marshal(msg)
	if err != nil {
		return 0, fmt.Errorf("marshal message: %w", err)
	}
	if call, ok := msg.(*jsonrpc2.Call); ok {
		s.pmu.Lock()
		s.pending[call.ID()] = true
		s.pmu.Unlock()
	}
	frame := make([]byte, 0, len(data)+32)
	frame = fmt.Appendf(frame, "Content-Length: %d\r\n\r\n", len(data))
	frame = append(frame, data...)
	n, err := s.writeRaw(frame)
	if err != nil {
		return int64(n), fmt.Errorf("write message: %w", err)
	}
	return int64(n), nil
}

func (s *stream) writeRaw(b []byte) (int, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.rwc.Write(b)
}

// Close closes the transport, which ends the read loop.
func (s *stream) Close() error {
	s.closeOnce.Do(func() { close(s.closed) })
	return s.rwc.Close()
}
