package lsp

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"
)

func TestIDKey(t *testing.T) {
	tests := []struct {
		id   jsonrpc2.ID
		want string
	}{
		{jsonrpc2.NewNumberID(5), "n:5"},
		{jsonrpc2.NewNumberID(-3), "n:-3"},
		{jsonrpc2.NewNumberID(0), "n:0"},
		{jsonrpc2.NewStringID("5"), "s:5"},
		{jsonrpc2.NewStringID("abc"), "s:abc"},
		{jsonrpc2.NewStringID(`a"b\c é`), `s:a"b\c é`},
		{jsonrpc2.NewStringID("\xff#1"), "s:\xff#1"},
		{jsonrpc2.NewStringID(""), "n:0"}, // jsonrpc2.ID cannot tell "" from 0
	}
	for _, tt := range tests {
		if got := idKey(tt.id); got != tt.want {
			t.Errorf("IDKey(%q) = %q, want %q", tt.id, got, tt.want)
		}
	}
}

func TestParseCancelID(t *testing.T) {
	tests := []struct {
		params  string
		want    string
		wantErr bool
	}{
		{params: `{"id":5}`, want: "n:5"},
		{params: `{"id":5.0}`, want: "n:5"},
		{params: `{"id":5e0}`, want: "n:5"},
		{params: `{"id":-0}`, want: "n:0"},
		{params: `{"id":2147483647}`, want: "n:2147483647"},
		{params: `{"id":"5"}`, want: "s:5"},
		{params: `{"id":"abc"}`, want: "s:abc"},
		{params: `{"id":"a\"b"}`, want: `s:a"b`},
		{params: ` { "id" : 12 , "extra": true } `, want: "n:12"},
		{params: `{"id":5.5}`, wantErr: true},
		{params: `{"id":2147483648}`, wantErr: true},
		{params: `{"id":null}`, wantErr: true},
		{params: `{"id":true}`, wantErr: true},
		{params: `{"id":{}}`, wantErr: true},
		{params: `{}`, wantErr: true},
		{params: `null`, wantErr: true},
		{params: ``, wantErr: true},
		{params: `{"id":`, wantErr: true},
		{params: `[5]`, wantErr: true},
	}
	for _, tt := range tests {
		got, err := parseCancelID(json.RawMessage(tt.params))
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseCancelID(%s) error = %v, want error %t", tt.params, err, tt.wantErr)
			continue
		}
		if got != tt.want {
			t.Errorf("ParseCancelID(%s) = %q, want %q", tt.params, got, tt.want)
		}
	}
}

// TestCancelIDMatchesRequest is the trap jsonrpc2.CancelHandler falls into: the key of a
// decoded request and the key of its $/cancelRequest must be equal, numeric ids included.
func TestCancelIDMatchesRequest(t *testing.T) {
	tests := []struct {
		id, cancelID string
	}{
		{`5`, `5`},
		{`5`, `5.0`},
		{`5`, `5e0`},
		{`"5"`, `"5"`},
		{`"abc"`, `"abc"`},
		{`"\u00e9"`, `"é"`},
	}
	for _, tt := range tests {
		msg, err := jsonrpc2.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":` + tt.id + `,"method":"workspace/executeCommand"}`))
		if err != nil {
			t.Fatalf("decode request with id %s: %v", tt.id, err)
		}
		call, ok := msg.(*jsonrpc2.Call)
		if !ok {
			t.Fatalf("request with id %s decoded as %T", tt.id, msg)
		}
		key, err := parseCancelID(json.RawMessage(`{"id":` + tt.cancelID + `}`))
		if err != nil {
			t.Fatalf("ParseCancelID(%s): %v", tt.cancelID, err)
		}
		if got := idKey(call.ID()); got != key {
			t.Errorf("request id %s has key %q, its cancel with id %s has %q", tt.id, got, tt.cancelID, key)
		}
	}
	number, _ := parseCancelID(json.RawMessage(`{"id":5}`))
	str, _ := parseCancelID(json.RawMessage(`{"id":"5"}`))
	if number == str {
		t.Errorf("ids 5 and \"5\" share the key %q", number)
	}
}

// loopbackRWC reads back what was written to it, for benchmarks in one goroutine.
type loopbackRWC struct{ bytes.Buffer }

func (*loopbackRWC) Close() error { return nil }

// BenchmarkStreamReadWrite round-trips a typical 1 KiB notification (a sessionUpdate chunk)
// through Write and Read, next to the stock jsonrpc2 stream for reference.
func BenchmarkStreamReadWrite(b *testing.B) {
	msg, err := jsonrpc2.NewNotification(MethodSessionUpdate, map[string]any{
		"sessionId": "0f8c2a",
		"update": map[string]any{
			"sessionUpdate": "agent_message_chunk",
			"content":       map[string]string{"type": "text", "text": strings.Repeat("lorem ipsum ", 80)},
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	streams := []struct {
		name string
		new  func(io.ReadWriteCloser) jsonrpc2.Stream
	}{
		{"frame", func(rwc io.ReadWriteCloser) jsonrpc2.Stream { return newStream(rwc, streamOptions{}) }},
		{"stock", jsonrpc2.NewStream},
	}
	for _, st := range streams {
		b.Run(st.name, func(b *testing.B) {
			s := st.new(&loopbackRWC{})
			n, err := s.Write(b.Context(), msg)
			if err != nil {
				b.Fatal(err)
			}
			if _, _, err := s.Read(b.Context()); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(n)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Write(b.Context(), msg); err != nil {
					b.Fatal(err)
				}
				if _, _, err := s.Read(b.Context()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
