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
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.lsp.dev/jsonrpc2"
)

// frameOf frames body the way every LSP client does.
func frameOf(body string) string {
	return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)
}

const (
	frameNote     = `{"jsonrpc":"2.0","method":"initialized","params":{}}`
	frameNoteWant = `notification {"jsonrpc":"2.0","method":"initialized","params":{}}`
	frameCall     = `{"jsonrpc":"2.0","id":1,"method":"shutdown"}`
	frameCallWant = `call {"jsonrpc":"2.0","method":"shutdown","params":null,"id":1}`
)

// frameErr is the error answer the stream writes.
func frameErr(id string, code int, message string) string {
	b, err := json.Marshal(message)
	if err != nil {
		panic(err)
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}`, id, code, b)
}

// describeMessage renders a message for comparison: its kind, then its JSON.
func describeMessage(t testing.TB, msg jsonrpc2.Message) string {
	t.Helper()
	b, err := json.Marshal(msg)
	if err != nil {
		t.Fatalf("marshal %T: %v", msg, err)
	}
	kind := fmt.Sprintf("%T", msg)
	switch msg.(type) {
	case *jsonrpc2.Call:
		kind = "call"
	case *jsonrpc2.Notification:
		kind = "notification"
	case *jsonrpc2.Response:
		kind = "response"
	}
	return kind + " " + string(b)
}

// readTestFrame reads one frame exactly as frameStream writes it. It is deliberately separate
// from the code under test, and strict: anything else is an error.
func readTestFrame(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	v, ok := strings.CutPrefix(line, "Content-Length: ")
	if !ok || !strings.HasSuffix(v, "\r\n") {
		return nil, fmt.Errorf("bad header line %q", line)
	}
	n, err := strconv.Atoi(strings.TrimSuffix(v, "\r\n"))
	if err != nil {
		return nil, fmt.Errorf("bad header line %q: %w", line, err)
	}
	if blank, err := r.ReadString('\n'); err != nil || blank != "\r\n" {
		return nil, fmt.Errorf("header not ended by a blank line: %q, %v", blank, err)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, fmt.Errorf("read %d-byte body: %w", n, err)
	}
	if !json.Valid(body) {
		return nil, fmt.Errorf("body is not JSON: %q", body)
	}
	return body, nil
}

// parseTestFrames splits everything the stream wrote into bodies.
func parseTestFrames(t testing.TB, b []byte) []string {
	t.Helper()
	var bodies []string
	r := bufio.NewReader(bytes.NewReader(b))
	for {
		body, err := readTestFrame(r)
		if err == io.EOF {
			return bodies
		}
		if err != nil {
			t.Fatalf("stream wrote a malformed frame after %q: %v", bodies, err)
		}
		bodies = append(bodies, string(body))
	}
}

// lockedBuffer collects what a stream writes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *lockedBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}

// scriptedRWC is the server's end of a scripted client: reads come from r, writes go to w.
type scriptedRWC struct {
	r      io.Reader
	w      io.Writer
	closes atomic.Int32
}

func (c *scriptedRWC) Read(p []byte) (int, error)  { return c.r.Read(p) }
func (c *scriptedRWC) Write(p []byte) (int, error) { return c.w.Write(p) }
func (c *scriptedRWC) Close() error {
	c.closes.Add(1)
	return nil
}

// streamRun is what a stream made of one scripted input.
type streamRun struct {
	msgs    []string // describeMessage of each message Read returned
	err     error    // the error that ended reading
	replies []string // bodies the stream wrote back
	logs    string
}

// errTestDone ends the client goroutine of runStream when the stream stopped reading early.
var errTestDone = errors.New("test done")

// runStream writes chunks, one pipe write each, to a newStream and reads until an error.
func runStream(t *testing.T, opts streamOptions, chunks [][]byte) streamRun {
	t.Helper()
	pr, pw := io.Pipe()
	written := make(chan error, 1)
	go func() { // the client; ends after its last chunk, or when the test closes pr
		for _, c := range chunks {
			if _, err := pw.Write(c); err != nil {
				written <- err
				return
			}
		}
		written <- pw.Close()
	}()
	var out, logs lockedBuffer
	opts.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	s := newStream(&scriptedRWC{r: pr, w: &out}, opts)
	var run streamRun
	for {
		msg, _, err := s.Read(t.Context())
		if err != nil {
			run.err = err
			break
		}
		run.msgs = append(run.msgs, describeMessage(t, msg))
		if len(run.msgs) > 100 {
			t.Fatal("more than 100 messages: the stream does not end")
		}
	}
	pr.CloseWithError(errTestDone)
	if err := <-written; err != nil && !errors.Is(err, errTestDone) {
		t.Errorf("client write: %v", err)
	}
	run.replies = parseTestFrames(t, out.Bytes())
	run.logs = logs.String()
	return run
}

// splitInput cuts s into writes of size bytes; 0 means one write.
func splitInput(s string, size int) [][]byte {
	if size == 0 {
		return [][]byte{[]byte(s)}
	}
	var chunks [][]byte
	for len(s) > 0 {
		n := min(size, len(s))
		chunks = append(chunks, []byte(s[:n]))
		s = s[n:]
	}
	return chunks
}

func TestStreamRead(t *testing.T) {
	longLine := "X-Junk: " + strings.Repeat("a", 1<<20) + "\r\n"
	tests := []struct {
		name        string
		opts        streamOptions
		input       string
		big         bool // too large to replay in tiny writes
		wantMsgs    []string
		wantErr     error
		wantReplies []string
		wantLog     string // a substring of the logs
	}{
		{
			name:     "one notification",
			input:    frameOf(frameNote),
			wantMsgs: []string{frameNoteWant},
			wantErr:  io.EOF,
		},
		{
			name:     "messages back to back",
			input:    frameOf(frameCall) + frameOf(frameNote) + frameOf(frameCall),
			wantMsgs: []string{frameCallWant, frameNoteWant, frameCallWant},
			wantErr:  io.EOF,
		},
		{
			name: "Content-Type before and after Content-Length",
			input: fmt.Sprintf("Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: %d\r\n\r\n%s", len(frameNote), frameNote) +
				fmt.Sprintf("Content-Length: %d\r\nContent-Type: application/vscode-jsonrpc; charset=utf8\r\n\r\n%s", len(frameCall), frameCall),
			wantMsgs: []string{frameNoteWant, frameCallWant},
			wantErr:  io.EOF,
		},
		{
			name:     "lowercase and spaced header names, unknown header",
			input:    fmt.Sprintf("content-length:%d\r\nX-Trace: on\r\n\r\n%sCONTENT-LENGTH :  %d \r\n\r\n%s", len(frameNote), frameNote, len(frameCall), frameCall),
			wantMsgs: []string{frameNoteWant, frameCallWant},
			wantErr:  io.EOF,
		},
		{
			name:     "bare LF line endings and blank lines between messages",
			input:    fmt.Sprintf("Content-Length: %d\n\n%s\r\n\n", len(frameNote), frameNote) + frameOf(frameCall) + "\r\n",
			wantMsgs: []string{frameNoteWant, frameCallWant},
			wantErr:  io.EOF,
		},
		{
			name:     "response from the client",
			input:    frameOf(`{"jsonrpc":"2.0","id":3,"result":{"title":"Allow once"}}`) + frameOf(`{"jsonrpc":"2.0","id":"s4","result":null}`),
			wantMsgs: []string{`response {"jsonrpc":"2.0","result":{"title":"Allow once"},"id":3}`, `response {"jsonrpc":"2.0","result":null,"id":"s4"}`},
			wantErr:  io.EOF,
		},
		{
			name:     "error response from the client",
			input:    frameOf(`{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"no"}}`),
			wantMsgs: []string{`response {"jsonrpc":"2.0","error":{"code":-32601,"message":"no"},"id":2}`},
			wantErr:  io.EOF,
		},
		{
			name:     "missing Content-Length: resync to the next message",
			input:    "Content-Type: application/json\r\n\r\n" + frameCall + frameOf(frameNote),
			wantMsgs: []string{frameNoteWant},
			wantErr:  io.EOF,
			wantLog:  "broken header: no Content-Length",
		},
		{
			name:     "Content-Length not a number",
			input:    "Content-Length: twelve\r\n\r\n" + frameCall + frameOf(frameNote),
			wantMsgs: []string{frameNoteWant},
			wantErr:  io.EOF,
			wantLog:  `broken header: invalid Content-Length \"twelve\"`,
		},
		{
			name:     "negative Content-Length",
			input:    "Content-Length: -5\r\n\r\n" + frameCall + frameOf(frameNote),
			wantMsgs: []string{frameNoteWant},
			wantErr:  io.EOF,
			wantLog:  `broken header: invalid Content-Length \"-5\"`,
		},
		{
			name:     "body without a header",
			input:    frameCall + frameOf(frameNote),
			wantMsgs: []string{frameNoteWant},
			wantErr:  io.EOF,
			wantLog:  `broken header: byte '{' where a header should start`,
		},
		{
			name:     "resync skips Content-Length inside the lost body",
			input:    "Content-Length: x\r\n\r\n" + `{"jsonrpc":"2.0","method":"m","params":{"text":"Content-Length: 12 \r\n"}}` + frameOf(frameNote),
			wantMsgs: []string{frameNoteWant},
			wantErr:  io.EOF,
		},
		{
			name:        "header line without a colon: body skipped",
			input:       fmt.Sprintf("Content-Length: %d\r\nnonsense\r\n\r\n%s", len(frameCall), frameCall) + frameOf(frameNote),
			wantMsgs:    []string{frameNoteWant},
			wantErr:     io.EOF,
			wantReplies: []string{frameErr("null", -32600, `malformed header line "nonsense"`)},
		},
		{
			name:        "conflicting Content-Length headers",
			input:       fmt.Sprintf("Content-Length: %d\r\nContent-Length: 3\r\n\r\n%s", len(frameCall), frameCall) + frameOf(frameNote),
			wantMsgs:    []string{frameNoteWant},
			wantErr:     io.EOF,
			wantReplies: []string{frameErr("null", -32600, fmt.Sprintf("conflicting Content-Length headers %d and 3", len(frameCall)))},
		},
		{
			name:        "header line of 1 MiB",
			input:       longLine + "Content-Length: 2\r\n\r\n{}" + frameOf(frameNote),
			big:         true,
			wantMsgs:    []string{frameNoteWant},
			wantErr:     io.EOF,
			wantReplies: []string{frameErr("null", -32600, "header line longer than 8192 bytes")},
		},
		{
			name:     "header line of 1 MiB and no length",
			input:    longLine + "\r\n" + frameCall + frameOf(frameNote),
			big:      true,
			wantMsgs: []string{frameNoteWant},
			wantErr:  io.EOF,
			wantLog:  "broken header: header line longer than 8192 bytes",
		},
		{
			name:        "header block too long",
			opts:        streamOptions{MaxHeaderBytes: 64},
			input:       strings.Repeat("X-Filler: 0123456789\r\n", 20) + "Content-Length: 2\r\n\r\n{}" + frameOf(frameNote),
			wantMsgs:    []string{frameNoteWant},
			wantErr:     io.EOF,
			wantReplies: []string{frameErr("null", -32600, "header block longer than 256 bytes")},
		},
		{
			name:        "body over the limit",
			opts:        streamOptions{MaxMessageBytes: 20},
			input:       frameOf(frameCall) + frameOf(`{"method":"a"}`) + frameOf(frameNote),
			wantMsgs:    []string{`notification {"jsonrpc":"2.0","method":"a","params":null}`},
			wantErr:     io.EOF,
			wantReplies: []string{frameErr("null", -32600, fmt.Sprintf("message of %d bytes exceeds the limit of 20 bytes", len(frameCall))), frameErr("null", -32600, fmt.Sprintf("message of %d bytes exceeds the limit of 20 bytes", len(frameNote)))},
		},
		{
			name:        "body too long to skip",
			opts:        streamOptions{MaxMessageBytes: 20, MaxSkipBytes: 100},
			input:       frameOf(frameCall) + "Content-Length: 100000000000000000\r\n\r\n" + frameOf(frameNote),
			wantErr:     ErrMessageTooLong,
			wantReplies: []string{frameErr("null", -32600, fmt.Sprintf("message of %d bytes exceeds the limit of 20 bytes", len(frameCall))), frameErr("null", -32600, "message of 100000000000000000 bytes exceeds the limit of 20 bytes and is too long to skip: closing the connection")},
			wantLog:     "LSP connection closed",
		},
		{
			name:        "broken header too long to skip",
			opts:        streamOptions{MaxMessageBytes: 20, MaxSkipBytes: 100},
			input:       "X-Bad header\r\nContent-Length: 101\r\n\r\n" + frameOf(frameNote),
			wantErr:     ErrMessageTooLong,
			wantReplies: []string{frameErr("null", -32600, "message of 101 bytes exceeds the limit of 20 bytes and is too long to skip: closing the connection")},
		},
		{
			name:        "empty body",
			input:       "Content-Length: 0\r\n\r\n" + frameOf(frameNote),
			wantMsgs:    []string{frameNoteWant},
			wantErr:     io.EOF,
			wantReplies: []string{frameErr("null", -32700, "parse error: empty body")},
		},
		{
			name:        "body not JSON",
			input:       frameOf("hello, world") + frameOf(frameNote),
			wantMsgs:    []string{frameNoteWant},
			wantErr:     io.EOF,
			wantReplies: []string{frameErr("null", -32700, "parse error: invalid character 'h' looking for beginning of value (at byte 1)")},
			wantLog:     `excerpt="hello, world"`,
		},
		{
			name:        "long body not JSON stays out of the logs",
			input:       frameOf(strings.Repeat("x", 10<<10)) + frameOf(frameNote),
			wantMsgs:    []string{frameNoteWant},
			wantErr:     io.EOF,
			wantReplies: []string{frameErr("null", -32700, "parse error: invalid character 'x' looking for beginning of value (at byte 1)")},
		},
		{
			name:        "truncated JSON",
			input:       frameOf(`{"jsonrpc":"2.0","id":9,"method":"x"`) + frameOf(frameNote),
			wantMsgs:    []string{frameNoteWant},
			wantErr:     io.EOF,
			wantReplies: []string{frameErr("null", -32700, "parse error: unexpected end of JSON input (at byte 36)")},
		},
		{
			name:        "batch",
			input:       frameOf("["+frameCall+","+frameNote+"]") + frameOf(frameNote),
			wantMsgs:    []string{frameNoteWant},
			wantErr:     io.EOF,
			wantReplies: []string{frameErr("null", -32600, "batches are not supported: send one JSON object per message")},
		},
		{
			name:        "not an object",
			input:       frameOf(`"initialized"`) + frameOf(frameNote),
			wantMsgs:    []string{frameNoteWant},
			wantErr:     io.EOF,
			wantReplies: []string{frameErr("null", -32600, "a message must be a JSON object")},
		},
		{
			name:        "wrong jsonrpc version keeps the id",
			input:       frameOf(`{"jsonrpc":"1.0","id":7,"method":"shutdown"}`) + frameOf(frameNote),
			wantMsgs:    []string{frameNoteWant},
			wantErr:     io.EOF,
			wantReplies: []string{frameErr("7", -32600, `"jsonrpc" must be "2.0"`)},
		},
		{
			name:     "missing jsonrpc is tolerated",
			input:    frameOf(`{"id":1,"method":"shutdown"}`),
			wantMsgs: []string{frameCallWant},
			wantErr:  io.EOF,
		},
		{
			name:        "method not a string",
			input:       frameOf(`{"jsonrpc":"2.0","id":"a","method":5}`),
			wantErr:     io.EOF,
			wantReplies: []string{frameErr(`"a"`, -32600, `"method" must be a non-empty string`)},
		},
		{
			name:        "empty method with an id is not a response",
			input:       frameOf(`{"jsonrpc":"2.0","id":4,"method":""}`),
			wantErr:     io.EOF,
			wantReplies: []string{frameErr("4", -32600, `"method" must be a non-empty string`)},
		},
		{
			name:        "fractional id",
			input:       frameOf(`{"jsonrpc":"2.0","id":5.5,"method":"shutdown"}`),
			wantErr:     io.EOF,
			wantReplies: []string{frameErr("5.5", -32600, `"id" must be a string or a 32-bit integer`)},
		},
		{
			name:        "id beyond 32 bits",
			input:       frameOf(`{"jsonrpc":"2.0","id":3000000000,"method":"shutdown"}`),
			wantErr:     io.EOF,
			wantReplies: []string{frameErr("3000000000", -32600, `"id" must be a string or a 32-bit integer`)},
		},
		{
			name:        "boolean id answered with null",
			input:       frameOf(`{"jsonrpc":"2.0","id":true,"method":"shutdown"}`),
			wantErr:     io.EOF,
			wantReplies: []string{frameErr("null", -32600, `"id" must be a string or a 32-bit integer`)},
		},
		{
			name:        "neither method nor id",
			input:       frameOf(`{"jsonrpc":"2.0","params":{}}`),
			wantErr:     io.EOF,
			wantReplies: []string{frameErr("null", -32600, "a message needs a method (request) or an id (response)")},
		},
		{
			name:     "malformed response is dropped, not answered",
			input:    frameOf(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`) + frameOf(`{"jsonrpc":"2.0","id":true,"result":1}`) + frameOf(frameNote),
			wantMsgs: []string{frameNoteWant},
			wantErr:  io.EOF,
			wantLog:  `reason="invalid response: a response needs an id"`,
		},
		{
			name:    "empty input",
			input:   "",
			wantErr: io.EOF,
		},
		{
			name:     "blank lines then end",
			input:    frameOf(frameNote) + "\r\n\r\n",
			wantMsgs: []string{frameNoteWant},
			wantErr:  io.EOF,
		},
		{
			name:    "end inside a header",
			input:   "Content-Len",
			wantErr: io.ErrUnexpectedEOF,
		},
		{
			name:    "end before the blank line",
			input:   "Content-Length: 5\r\n",
			wantErr: io.ErrUnexpectedEOF,
		},
		{
			name:     "end inside a body",
			input:    frameOf(frameNote) + "Content-Length: 50\r\n\r\n{\"jsonrpc\"",
			wantMsgs: []string{frameNoteWant},
			wantErr:  io.ErrUnexpectedEOF,
		},
		{
			name:    "end while skipping an oversized body",
			opts:    streamOptions{MaxMessageBytes: 10},
			input:   "Content-Length: 50\r\n\r\n{\"jsonrpc\"",
			wantErr: io.ErrUnexpectedEOF,
		},
		{
			name:    "end while resynchronising",
			input:   "Content-Length: x\r\n\r\n{\"partial",
			wantErr: io.EOF,
			wantLog: "broken header",
		},
	}
	for _, tt := range tests {
		sizes := []int{0, 1, 7}
		if tt.big {
			sizes = []int{0, 4096}
		}
		for _, size := range sizes {
			t.Run(fmt.Sprintf("%s/writes of %d", tt.name, size), func(t *testing.T) {
				run := runStream(t, tt.opts, splitInput(tt.input, size))
				if diff := cmp.Diff(tt.wantMsgs, run.msgs); diff != "" {
					t.Errorf("messages (-want +got):\n%s", diff)
				}
				if !errors.Is(run.err, tt.wantErr) {
					t.Errorf("Read error = %v, want %v", run.err, tt.wantErr)
				}
				if diff := cmp.Diff(tt.wantReplies, run.replies); diff != "" {
					t.Errorf("error answers (-want +got):\n%s", diff)
				}
				if !strings.Contains(run.logs, tt.wantLog) {
					t.Errorf("logs lack %q:\n%s", tt.wantLog, run.logs)
				}
				if len(run.logs) > 4096 {
					t.Errorf("logs hold %d bytes: bodies leak into them", len(run.logs))
				}
			})
		}
	}
}

// frameConnPair connects two jsonrpc2 connections through newStream over net.Pipe. Each end
// serves with its handler until the test ends; cleanup closes both and waits for them.
func frameConnPair(t *testing.T, server, client jsonrpc2.Handler) (jsonrpc2.Conn, jsonrpc2.Conn) {
	t.Helper()
	a, b := net.Pipe()
	sc := jsonrpc2.NewConn(newStream(a, streamOptions{}))
	cc := jsonrpc2.NewConn(newStream(b, streamOptions{}))
	sc.Go(t.Context(), server)
	cc.Go(t.Context(), client)
	t.Cleanup(func() {
		cc.Close()
		sc.Close()
		<-cc.Done()
		<-sc.Done()
	})
	return sc, cc
}

func TestStreamConnRoundTrip(t *testing.T) {
	notes := make(chan string, 1)
	_, client := frameConnPair(t, func(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
		switch req.Method() {
		case "echo":
			return reply(ctx, req.Params(), nil)
		case "note":
			notes <- string(req.Params())
			return reply(ctx, nil, nil)
		}
		return jsonrpc2.MethodNotFoundHandler(ctx, reply, req)
	}, jsonrpc2.MethodNotFoundHandler)

	var got map[string]any
	if _, err := client.Call(t.Context(), "echo", map[string]any{"text": "héllo", "n": 1}, &got); err != nil {
		t.Fatalf("Call echo: %v", err)
	}
	if diff := cmp.Diff(map[string]any{"text": "héllo", "n": 1.0}, got); diff != "" {
		t.Errorf("echo result (-want +got):\n%s", diff)
	}
	if err := client.Notify(t.Context(), "note", []int{1, 2}); err != nil {
		t.Fatalf("Notify: %v", err)
	}
	select {
	case got := <-notes:
		if got != "[1,2]" {
			t.Errorf("notification params = %s, want [1,2]", got)
		}
	case <-t.Context().Done():
		t.Fatal("notification never arrived")
	}
	_, err := client.Call(t.Context(), "nope", nil, nil)
	var rpcErr *jsonrpc2.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc2.MethodNotFound {
		t.Errorf("Call nope: error %v, want code %d", err, jsonrpc2.MethodNotFound)
	}
}

// TestStreamKeepsConnAlive sends garbage to a real jsonrpc2.Conn: the stock stream would end the
// connection at the first bad frame; this one answers each and then serves the call after them.
func TestStreamKeepsConnAlive(t *testing.T) {
	a, b := net.Pipe()
	server := jsonrpc2.NewConn(newStream(a, streamOptions{MaxMessageBytes: 1 << 10}))
	server.Go(t.Context(), func(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
		return reply(ctx, "pong:"+req.Method(), nil)
	})
	t.Cleanup(func() {
		server.Close()
		<-server.Done()
	})

	frames := make(chan string, 16) // more than the test expects: the reader never blocks
	readErr := make(chan error, 1)
	go func() { // the client's reader; ends when the pipe closes
		r := bufio.NewReader(b)
		for {
			body, err := readTestFrame(r)
			if err != nil {
				readErr <- err
				return
			}
			frames <- string(body)
		}
	}()
	input := frameOf("not json") +
		"Content-Length: 2000\r\n\r\n" + strings.Repeat(" ", 2000) +
		"X-Only: header\r\n\r\n" + frameCall +
		frameOf("[]") +
		frameOf(`{"jsonrpc":"2.0","id":7,"method":"ping"}`)
	written := make(chan error, 1)
	go func() { // the client's writer; net.Pipe writes return once the server read them
		_, err := io.WriteString(b, input)
		written <- err
	}()

	want := []string{
		frameErr("null", -32700, "parse error: invalid character 'o' in literal null (expecting 'u') (at byte 2)"),
		frameErr("null", -32600, "message of 2000 bytes exceeds the limit of 1024 bytes"),
		frameErr("null", -32600, "batches are not supported: send one JSON object per message"),
		`{"jsonrpc":"2.0","result":"pong:ping","id":7}`,
	}
	var got []string
	for range want {
		select {
		case f := <-frames:
			got = append(got, f)
		case err := <-readErr:
			t.Fatalf("client read after %q: %v", got, err)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("frames from the server (-want +got):\n%s", diff)
	}
	if err := <-written; err != nil {
		t.Errorf("client write: %v", err)
	}
	select {
	case <-server.Done():
		t.Fatalf("the connection ended: %v", server.Err())
	default:
	}
	b.Close()
	<-server.Done()
	if err := server.Err(); !errors.Is(err, io.EOF) {
		t.Errorf("connection error after the client hung up = %v, want io.EOF", err)
	}
	if err := <-readErr; !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("client reader ended with %v", err)
	}
}

// TestStreamConcurrentWrites writes from many goroutines while Read answers bad frames: every
// frame must come out whole.
func TestStreamConcurrentWrites(t *testing.T) {
	const writers, perWriter, badFrames = 16, 40, 50
	a, b := net.Pipe()
	s := newStream(a, streamOptions{})
	t.Cleanup(func() { // ends every goroutine below, should the test stop early
		a.Close()
		b.Close()
	})

	readDone := make(chan error, 1)
	go func() { // the server's read loop, answering the bad frames; ends when b closes
		for {
			if _, _, err := s.Read(t.Context()); err != nil {
				readDone <- err
				return
			}
		}
	}()
	badDone := make(chan error, 1)
	go func() { // the client's writer of bad frames
		_, err := io.WriteString(b, strings.Repeat(frameOf("{oops"), badFrames))
		badDone <- err
	}()
	type result struct {
		bodies []string
		err    error
	}
	received := make(chan result, 1)
	go func() { // the client's reader; ends after the expected number of frames
		r := bufio.NewReader(b)
		var res result
		for range writers*perWriter + badFrames {
			body, err := readTestFrame(r)
			if err != nil {
				res.err = err
				break
			}
			res.bodies = append(res.bodies, string(body))
		}
		received <- res
	}()

	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				msg, err := jsonrpc2.NewNotification("reprise/sessionUpdate", map[string]any{
					"w": w, "i": i, "pad": strings.Repeat("x", (w*perWriter+i)%3000),
				})
				if err != nil {
					t.Errorf("NewNotification: %v", err)
					return
				}
				if _, err := s.Write(t.Context(), msg); err != nil {
					t.Errorf("Write: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	res := <-received
	if res.err != nil {
		t.Fatalf("client read after %d frames: %v", len(res.bodies), res.err)
	}
	if err := <-badDone; err != nil {
		t.Errorf("client write: %v", err)
	}
	b.Close()
	if err := <-readDone; !errors.Is(err, io.EOF) {
		t.Errorf("Read ended with %v, want io.EOF", err)
	}

	seen := map[string]int{}
	answers := 0
	for _, body := range res.bodies {
		var m struct {
			Method string
			Params struct{ W, I int }
			Error  *jsonrpc2.Error
		}
		if err := json.Unmarshal([]byte(body), &m); err != nil {
			t.Fatalf("frame body %q: %v", excerpt([]byte(body), 80), err)
		}
		if m.Error != nil {
			answers++
			continue
		}
		seen[fmt.Sprintf("%d/%d", m.Params.W, m.Params.I)]++
	}
	if answers != badFrames {
		t.Errorf("got %d error answers, want %d", answers, badFrames)
	}
	for w := range writers {
		for i := range perWriter {
			if n := seen[fmt.Sprintf("%d/%d", w, i)]; n != 1 {
				t.Errorf("notification %d/%d received %d times", w, i, n)
			}
		}
	}
}

// heapAllocated is the number of bytes allocated so far by the whole process.
func heapAllocated() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.TotalAlloc
}

// TestStreamBoundedAllocation checks that a Content-Length is never trusted for an allocation.
// Not parallel: the measure is process-wide.
func TestStreamBoundedAllocation(t *testing.T) {
	tests := []struct {
		name     string
		input    string
		maxAlloc uint64
		wantErr  error
	}{
		{
			name:     "claims 2 GiB, sends 100 bytes",
			input:    "Content-Length: 2147483648\r\n\r\n" + strings.Repeat("x", 100),
			maxAlloc: 1 << 20,
			wantErr:  ErrMessageTooLong, // past what is skipped: nothing more is read
		},
		{
			name:     "claims 1 TiB, sends 100 bytes",
			input:    "Content-Length: 1099511627776\r\n\r\n" + strings.Repeat("x", 100),
			maxAlloc: 1 << 20,
			wantErr:  ErrMessageTooLong,
		},
		{
			name:     "claims 200 MiB, over the limit but skipped, sends 100 bytes",
			input:    "Content-Length: 209715200\r\n\r\n" + strings.Repeat("x", 100),
			maxAlloc: 1 << 20,
			wantErr:  io.ErrUnexpectedEOF,
		},
		{
			name:     "header line of 16 MiB",
			input:    "X-Junk: " + strings.Repeat("a", 16<<20) + "\r\n\r\n",
			maxAlloc: 1 << 20,
			wantErr:  io.EOF, // dropped for want of a length, then nothing left to resync to
		},
		{
			name:     "claims 60 MiB under the limit, sends 100 bytes",
			input:    "Content-Length: 62914560\r\n\r\n" + strings.Repeat("x", 100),
			maxAlloc: 2*bodyChunk + 1<<20,
			wantErr:  io.ErrUnexpectedEOF,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStream(&scriptedRWC{r: strings.NewReader(tt.input), w: io.Discard}, streamOptions{})
			before := heapAllocated()
			_, _, err := s.Read(t.Context())
			allocated := heapAllocated() - before
			t.Logf("Read allocated %d bytes", allocated)
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("Read error = %v, want %v", err, tt.wantErr)
			}
			if allocated > tt.maxAlloc {
				t.Errorf("Read allocated %d bytes, want at most %d", allocated, tt.maxAlloc)
			}
		})
	}
}

// TestStreamDiscardsOversizedBody sends a real 70 MiB body past the default 64 MiB limit.
func TestStreamDiscardsOversizedBody(t *testing.T) {
	const size = 70 << 20
	mib := bytes.Repeat([]byte("x"), 1<<20) // io.Pipe does not retain what it is given
	chunks := [][]byte{[]byte("Content-Length: " + strconv.Itoa(size) + "\r\n\r\n")}
	for range size / len(mib) {
		chunks = append(chunks, mib)
	}
	chunks = append(chunks, []byte(frameOf(frameNote)))

	before := heapAllocated()
	run := runStream(t, streamOptions{}, chunks)
	allocated := heapAllocated() - before
	t.Logf("reading 70 MiB allocated %d bytes", allocated)

	if diff := cmp.Diff([]string{frameNoteWant}, run.msgs); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if !errors.Is(run.err, io.EOF) {
		t.Errorf("Read error = %v, want io.EOF", run.err)
	}
	want := []string{frameErr("null", -32600, "message of 73400320 bytes exceeds the limit of 67108864 bytes")}
	if diff := cmp.Diff(want, run.replies); diff != "" {
		t.Errorf("error answers (-want +got):\n%s", diff)
	}
	if allocated > 8<<20 {
		t.Errorf("reading allocated %d bytes, want at most 8 MiB", allocated)
	}
}

func TestStreamReadHonoursCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	s := newStream(&scriptedRWC{r: strings.NewReader(frameOf(frameNote)), w: io.Discard}, streamOptions{})
	if _, _, err := s.Read(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Read with a cancelled context: error %v, want context.Canceled", err)
	}
	msg, _, err := s.Read(t.Context())
	if err != nil {
		t.Fatalf("Read after the cancelled one: %v", err)
	}
	if got := describeMessage(t, msg); got != frameNoteWant {
		t.Errorf("Read after the cancelled one = %s, want %s", got, frameNoteWant)
	}
}

func TestStreamWriteFrame(t *testing.T) {
	var out lockedBuffer
	rwc := &scriptedRWC{r: strings.NewReader(""), w: &out}
	s := newStream(rwc, streamOptions{})
	call, err := jsonrpc2.NewCall(jsonrpc2.NewStringID("a1"), "workspace/configuration", map[string]any{"items": []any{}})
	if err != nil {
		t.Fatal(err)
	}
	n, err := s.Write(t.Context(), call)
	if err != nil {
		t.Fatalf("Write: %v", err)
	}
	body := `{"jsonrpc":"2.0","method":"workspace/configuration","params":{"items":[]},"id":"a1"}`
	want := frameOf(body)
	if got := out.String(); got != want {
		t.Errorf("Write wrote %q, want %q", got, want)
	}
	if n != int64(len(want)) {
		t.Errorf("Write returned %d, want %d", n, len(want))
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.Write(ctx, call); !errors.Is(err, context.Canceled) {
		t.Errorf("Write with a cancelled context: error %v, want context.Canceled", err)
	}

	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if got := rwc.closes.Load(); got != 1 {
		t.Errorf("the connection was closed %d times, want 1", got)
	}
}
