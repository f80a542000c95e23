package lsp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/reprise-dev/reprise/agent"
)

// fuzzConn feeds a fixed input to the server and discards what it writes.
type fuzzConn struct {
	r io.Reader
}

func (c *fuzzConn) Read(p []byte) (int, error)  { return c.r.Read(p) }
func (c *fuzzConn) Write(p []byte) (int, error) { return len(p), nil }
func (c *fuzzConn) Close() error                { return nil }

func frame(body string) []byte {
	return fmt.Appendf(nil, "Content-Length: %d\r\n\r\n%s", len(body), body)
}

// FuzzServe runs the whole server (framing, dispatch, lifecycle, commands) on arbitrary input. It
// must not panic, must answer or drop everything, and must end when the input does.
func FuzzServe(f *testing.F) {
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"rootUri":null,"capabilities":{"experimental":{"reprise":true}}}}`
	seeds := [][]byte{
		frame(init),
		append(frame(init), frame(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)...),
		append(frame(init), frame(`{"jsonrpc":"2.0","id":2,"method":"workspace/executeCommand","params":{"command":"reprise.sessions"}}`)...),
		append(frame(init), frame(`{"jsonrpc":"2.0","id":2,"method":"workspace/executeCommand","params":{"command":"reprise.ask","arguments":[{"text":5}]}}`)...),
		append(frame(init), frame(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":2}}`)...),
		append(frame(init), frame(`{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///x/a.go","text":"x"}}}`)...),
		append(frame(init), frame(`{"jsonrpc":"2.0","id":3,"method":"shutdown"}`)...),
		frame(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":[]}`),
		frame(`not json`),
		[]byte("Content-Length: 99999999999\r\n\r\n"),
	}
	for _, s := range seeds {
		f.Add(s)
	}
	noModel := func(context.Context, string) (agent.Model, int, error) {
		return nil, 0, fmt.Errorf("no model in the fuzz test")
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		done := make(chan error, 1)
		go func() {
			done <- Serve(ctx, &fuzzConn{r: bytes.NewReader(input)}, Options{
				NewModel:        noModel,
				StateHome:       t.TempDir(),
				Logger:          slog.New(slog.DiscardHandler),
				NoWatch:         true,
				maxMessageBytes: 1 << 20,
			})
		}()
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			var stacks bytes.Buffer
			pprof.Lookup("goroutine").WriteTo(&stacks, 2)
			t.Fatalf("the server did not end when its input did (%q):\n%s", input, stacks.String())
		}
	})
}
