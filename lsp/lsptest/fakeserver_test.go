package lsptest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"testing"

	"go.lsp.dev/jsonrpc2"
)

// fakeServerEnv makes the test binary run fakeServer on stdin/stdout instead of the tests, so Exec
// has a real subprocess to drive without building anything.
const fakeServerEnv = "LSPTEST_FAKE_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(fakeServerEnv) == "1" {
		os.Exit(runFakeServer())
	}
	os.Exit(m.Run())
}

func runFakeServer() int {
	fmt.Fprintln(os.Stderr, "fake server: started")
	if err := new(fakeServer).serve(context.Background(), pipeRWC{r: os.Stdin, w: os.Stdout}); err != nil {
		fmt.Fprintln(os.Stderr, "fake server:", err)
		return 1
	}
	return 0
}

// fakeServer is a minimal LSP server on jsonrpc2, the library the real server uses, with just
// enough behaviour to exercise each feature of the editor. Commands (workspace/executeCommand):
//
//	fake.echo     replies with the arguments it got
//	fake.emit     arg [{method, params}]: sends these notifications, then replies
//	fake.request  arg {method, params}: calls the editor, replies with its result or error
//	fake.block    sends fake/blocking, replies RequestCancelled once $/cancelRequest arrives
//	fake.stray    writes a response to id 9999, which the editor never asked, then replies
//
// The notification fake/emit does what fake.emit does, without a reply.
type fakeServer struct {
	mu         sync.Mutex // guards the fields below
	initParams json.RawMessage
	notified   []string          // methods of the editor's notifications, in order
	cancels    []json.RawMessage // params of each $/cancelRequest
	shutdown   bool
}

func (f *fakeServer) initializeParams() json.RawMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.initParams
}

func (f *fakeServer) notifications() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.notified...)
}

func (f *fakeServer) cancelRequests() []json.RawMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]json.RawMessage(nil), f.cancels...)
}

// serve runs one connection until exit, the end of the stream or ctx, like `reprise serve`.
func (f *fakeServer) serve(ctx context.Context, rwc io.ReadWriteCloser) error {
	c := &fakeConn{
		srv:       f,
		stream:    &serverStream{Stream: jsonrpc2.NewStream(rwc), rwc: rwc},
		exit:      make(chan struct{}),
		cancelled: make(chan struct{}),
	}
	c.conn = jsonrpc2.NewConn(c.stream)
	c.conn.Go(ctx, c.handle)

	var err error
	select {
	case <-c.exit:
		f.mu.Lock()
		if !f.shutdown {
			err = errors.New("exit without shutdown")
		}
		f.mu.Unlock()
	case <-c.conn.Done():
		err = fmt.Errorf("connection ended before exit: %w", c.conn.Err())
	case <-ctx.Done():
		err = ctx.Err()
	}
	c.conn.Close()
	<-c.conn.Done()
	c.work.Wait()
	return err
}

// fakeConn is one connection of the fake server.
type fakeConn struct {
	srv    *fakeServer
	conn   jsonrpc2.Conn
	stream *serverStream

	work sync.WaitGroup // goroutines calling the editor; they end with their reply or conn.Done

	exit       chan struct{} // closed by the exit notification
	exitOnce   sync.Once
	cancelled  chan struct{} // closed by the first $/cancelRequest
	cancelOnce sync.Once
}

type notification struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// handle runs in the read loop: whatever waits on the editor runs on c.work goroutines, which
// reply later (so no jsonrpc2.ReplyHandler, which insists on a reply before handle returns).
func (c *fakeConn) handle(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
	f := c.srv
	switch req.Method() {
	case "initialize":
		f.mu.Lock()
		f.initParams = append(json.RawMessage(nil), req.Params()...)
		f.mu.Unlock()
		return reply(ctx, map[string]any{
			"capabilities": map[string]any{"executeCommandProvider": map[string]any{"commands": []string{"fake.echo", "fake.emit", "fake.request", "fake.block", "fake.stray"}}},
			"serverInfo":   map[string]any{"name": "fake"},
		}, nil)
	case "shutdown":
		f.mu.Lock()
		f.shutdown = true
		f.mu.Unlock()
		return reply(ctx, nil, nil)
	case "workspace/executeCommand":
		return c.execute(ctx, reply, req.Params())
	}
	if _, ok := req.(*jsonrpc2.Call); ok {
		return reply(ctx, nil, jsonrpc2.Errorf(jsonrpc2.MethodNotFound, "fake server: no %s", req.Method()))
	}

	f.mu.Lock()
	f.notified = append(f.notified, req.Method())
	if req.Method() == "$/cancelRequest" {
		f.cancels = append(f.cancels, append(json.RawMessage(nil), req.Params()...))
	}
	f.mu.Unlock()
	switch req.Method() {
	case "exit":
		c.exitOnce.Do(func() { close(c.exit) })
	case "$/cancelRequest":
		c.cancelOnce.Do(func() { close(c.cancelled) })
	case "fake/emit":
		c.emit(ctx, req.Params())
	}
	return reply(ctx, nil, nil)
}

func (c *fakeConn) emit(ctx context.Context, params json.RawMessage) error {
	var ns []notification
	if err := json.Unmarshal(params, &ns); err != nil {
		return jsonrpc2.Errorf(jsonrpc2.InvalidParams, "emit: %v", err)
	}
	for _, n := range ns {
		if err := c.conn.Notify(ctx, n.Method, n.Params); err != nil {
			return err
		}
	}
	return nil
}

func (c *fakeConn) execute(ctx context.Context, reply jsonrpc2.Replier, params json.RawMessage) error {
	var p struct {
		Command   string            `json:"command"`
		Arguments []json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return reply(ctx, nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "executeCommand: %v", err))
	}
	var arg json.RawMessage
	if len(p.Arguments) > 0 {
		arg = p.Arguments[0]
	}
	switch p.Command {
	case "fake.echo":
		return reply(ctx, p.Arguments, nil)
	case "fake.emit":
		return reply(ctx, nil, c.emit(ctx, arg))
	case "fake.request":
		var n notification
		if err := json.Unmarshal(arg, &n); err != nil {
			return reply(ctx, nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "request: %v", err))
		}
		// Calling the editor from the read loop would wait forever for a response that loop
		// has to read.
		c.work.Go(func() {
			var result json.RawMessage
			_, err := c.conn.Call(ctx, n.Method, n.Params, &result)
			_ = reply(ctx, result, err)
		})
		return nil
	case "fake.block":
		if err := c.conn.Notify(ctx, "fake/blocking", nil); err != nil {
			return reply(ctx, nil, err)
		}
		c.work.Go(func() {
			select {
			case <-c.cancelled:
				_ = reply(ctx, nil, jsonrpc2.NewError(-32800, "request cancelled"))
			case <-c.conn.Done():
				_ = reply(ctx, nil, errors.New("connection closed"))
			}
		})
		return nil
	case "fake.stray":
		resp, _ := jsonrpc2.NewResponse(jsonrpc2.NewNumberID(9999), "stray", nil)
		if _, err := c.stream.Write(ctx, resp); err != nil {
			return reply(ctx, nil, err)
		}
		return reply(ctx, nil, nil)
	default:
		return reply(ctx, nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "fake server: unknown command %q", p.Command))
	}
}

// serverStream answers a frame it cannot decode with a parse error whose id is null, as a server
// should, before jsonrpc2 gives up on the connection.
type serverStream struct {
	jsonrpc2.Stream
	rwc io.Writer
	mu  sync.Mutex // serializes writes: the connection's, stray responses and parse errors
}

func (s *serverStream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	msg, n, err := s.Stream.Read(ctx)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) &&
		!errors.Is(err, io.ErrClosedPipe) && !errors.Is(err, os.ErrClosed) {
		body, _ := json.Marshal(map[string]any{
			"jsonrpc": "2.0",
			"id":      nil,
			"error":   map[string]any{"code": jsonrpc2.ParseError, "message": err.Error()},
		})
		s.mu.Lock()
		fmt.Fprintf(s.rwc, "Content-Length: %d\r\n\r\n%s", len(body), body)
		s.mu.Unlock()
	}
	return msg, n, err
}

func (s *serverStream) Write(ctx context.Context, msg jsonrpc2.Message) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Stream.Write(ctx, msg)
}
