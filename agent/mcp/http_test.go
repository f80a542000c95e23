package mcp

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestStreamableHTTP runs the test server over streamable HTTP behind a check of the header the
// configuration sets from the environment.
func TestStreamableHTTP(t *testing.T) {
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return newTestServer(nil) }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			http.Error(w, "bad token", http.StatusUnauthorized)
			return
		}
		handler.ServeHTTP(w, r)
	}))
	defer srv.Close()

	logger, _ := testLogger()
	headers := map[string]string{"Authorization": "Bearer ${env:MCP_TOKEN}"}
	m := New(Options{
		Servers: []ServerConfig{
			{Name: "web", Type: TypeHTTP, URL: srv.URL, Headers: headers},
			{Name: "wrong", Type: TypeHTTP, URL: srv.URL, Headers: map[string]string{"Authorization": "Bearer nope"}},
		},
		Env:    []string{"MCP_TOKEN=s3cret"},
		Logger: logger,
	})
	defer m.Close()
	mustStart(t, m)
	if n := len(m.Declarations()); n != 7 {
		t.Fatalf("%d declarations, want 7", n)
	}
	if s := m.Servers()[1]; s.State != StateFailed || !strings.Contains(s.Error, "Unauthorized") {
		t.Errorf("server with a wrong token: %+v", s)
	}
	if text, isErr := m.Call(t.Context(), "web__echo", map[string]any{"text": "over http"}); text != "over http" || isErr {
		t.Errorf("echo = %q, %v", text, isErr)
	}
	if text, isErr := m.Call(t.Context(), "web__image", nil); text != "[image image/png, 12,345 bytes: not shown]" || isErr {
		t.Errorf("image = %q, %v", text, isErr)
	}

	// A server that went away fails the call, with the tool's name.
	srv.Close()
	text, isErr := m.Call(t.Context(), "web__echo", map[string]any{"text": "gone"})
	if !isErr || !strings.Contains(text, "web") {
		t.Errorf("Call to a closed server = %q, %v", text, isErr)
	}
	t.Logf("call to a closed server: %s", text)
}

// TestSSE runs the test server over the older HTTP with server-sent events.
func TestSSE(t *testing.T) {
	srv := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return newTestServer(nil) }, nil))
	defer srv.Close()
	m := New(Options{Servers: []ServerConfig{{Name: "old", Type: TypeSSE, URL: srv.URL}}, Logger: quiet()})
	defer m.Close()
	mustStart(t, m)
	if n := len(m.Declarations()); n != 7 {
		t.Fatalf("%d declarations, want 7; status %+v", n, m.Servers())
	}
	if text, isErr := m.Call(t.Context(), "old__add", map[string]any{"a": 1, "b": 2}); text != `{"sum":3}` || isErr {
		t.Errorf("add = %q, %v", text, isErr)
	}
}
