package lsp

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"runtime/metrics"
	"strings"
	"testing"
)

// fuzzRWC feeds a fuzz input to a stream and checks what the stream writes back.
type fuzzRWC struct {
	t *testing.T
	r io.Reader
}

func (c *fuzzRWC) Read(p []byte) (int, error) { return c.r.Read(p) }

func (c *fuzzRWC) Write(p []byte) (int, error) {
	// Only error answers are written here: their id and reason are bounded.
	if len(p) > 2048 {
		c.t.Errorf("error answer of %d bytes: %.200q", len(p), p)
	}
	return len(p), nil
}

func (*fuzzRWC) Close() error { return nil }

// fuzzHeapAllocs reads the process's cumulative heap allocation without stopping the world,
// cheap enough to call on every fuzz input.
func fuzzHeapAllocs() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// FuzzStream feeds arbitrary bytes to a stream as the client's whole input: reading must end
// with io.EOF or io.ErrUnexpectedEOF, return only messages that marshal back, make progress on
// every call, and never allocate in proportion to what the input claims.
func FuzzStream(f *testing.F) {
	seeds := []string{
		frameOf(frameNote),
		frameOf(frameCall) + frameOf(frameNote),
		frameOf(`{"jsonrpc":"2.0","id":3,"result":{"title":"Allow once"}}`),
		frameOf(`{"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"no"}}`),
		"content-length: 2\r\ncontent-type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}",
		"Content-Length: 2\n\n[]\r\n\r\n",
		"Content-Length: 2147483648\r\n\r\n" + strings.Repeat("x", 100),
		"Content-Length: 999999999999999999\r\n\r\n{",
		"Content-Length: 9999999999999999999\r\n\r\n{}",
		"Content-Length: 1048577\r\n\r\n{}",
		"Content-Length: -1\r\n\r\n{}" + frameOf(frameNote),
		"Content-Length: x\r\n\r\n{\"t\":\"Content-Length: 4 \"}" + frameOf(frameNote),
		"Content-Length: 4\r\nContent-Length: 5\r\n\r\nnull1",
		"Content-Type: a\r\n\r\n" + frameCall + frameOf(frameNote),
		frameCall + frameOf(frameNote),
		"X: " + strings.Repeat("y", 300) + "\r\nContent-Length: 2\r\n\r\n{}",
		strings.Repeat("A: b\r\n", 60) + "\r\n",
		"Content-Length: 0\r\n\r\n",
		frameOf("hello"),
		frameOf(`{"jsonrpc":"1.0","id":7,"method":"m"}`),
		frameOf(`{"jsonrpc":"2.0","id":5.5,"method":"m"}`),
		frameOf(`{"jsonrpc":"2.0","id":1,"method":""}`),
		frameOf(`{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"m"}}`),
		frameOf(`{"jsonrpc":"2.0","method":"m","params":{"a":[1,2,{"b":null}]}}`),
		"\r\n\r\n\n",
		"Content-Len",
		"content-lengthcontent-length:content-length: 3\r\n\r\n{}}",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := newStream(&fuzzRWC{t: t, r: bytes.NewReader(data)}, streamOptions{MaxMessageBytes: 1 << 20, MaxHeaderBytes: 256})
		before := fuzzHeapAllocs()
		for i := 0; ; i++ {
			if i > len(data) {
				t.Fatalf("%d messages out of %d bytes: Read makes no progress", i, len(data))
			}
			msg, _, err := s.Read(t.Context())
			if err != nil {
				if err != io.EOF && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, ErrMessageTooLong) {
					t.Fatalf("Read: %v, want io.EOF, io.ErrUnexpectedEOF or ErrMessageTooLong", err)
				}
				break
			}
			if _, err := json.Marshal(msg); err != nil {
				t.Fatalf("message %T from Read does not marshal: %v", msg, err)
			}
		}
		// The budget: the bufio buffer, one body of at most MaxMessageBytes, and per-message
		// costs (decoding, error answers), which grow with the input, never with what it claims.
		if got, budget := fuzzHeapAllocs()-before, uint64(4<<20+128*len(data)); got > budget {
			t.Fatalf("reading %d bytes allocated %d bytes, budget %d", len(data), got, budget)
		}
	})
}
