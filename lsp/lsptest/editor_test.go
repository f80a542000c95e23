package lsptest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.lsp.dev/jsonrpc2"
)

// testCtx bounds every wait, so a missing message fails the test with the wait's own message
// instead of hanging until the global test timeout. It is a deadline, never a sleep.
func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// decode turns raw JSON into plain Go values for cmp.
func decode(t *testing.T, raw []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return v
}

func startFake(t *testing.T, opts Options) (*Editor, *fakeServer) {
	t.Helper()
	f := new(fakeServer)
	return Pipe(t, f.serve, opts), f
}

func TestInitialize(t *testing.T) {
	root := t.TempDir()
	rootURI := "file://" + filepath.ToSlash(root)
	tests := []struct {
		name string
		opts Options
		want map[string]any // the parts of initialize's params checked
	}{
		{
			name: "experimental",
			opts: Options{Root: root, Experimental: true, InitializationOptions: map[string]any{"model": "m"}},
			want: map[string]any{
				"rootUri":               rootURI,
				"workspaceFolders":      []any{map[string]any{"uri": rootURI, "name": filepath.Base(root)}},
				"initializationOptions": map[string]any{"model": "m"},
				"workDoneProgress":      true,
				"configuration":         true,
				"experimental":          map[string]any{"reprise": true},
			},
		},
		{
			name: "plain",
			opts: Options{},
			want: map[string]any{
				"rootUri":               nil,
				"workspaceFolders":      nil,
				"initializationOptions": nil,
				"workDoneProgress":      true,
				"configuration":         true,
				"experimental":          nil,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testCtx(t)
			e, f := startFake(t, tt.opts)
			result, err := e.Initialize(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var res struct {
				ServerInfo struct{ Name string } `json:"serverInfo"`
			}
			if err := json.Unmarshal(result, &res); err != nil || res.ServerInfo.Name != "fake" {
				t.Errorf("Initialize result = %s (%v), want serverInfo.name fake", result, err)
			}
			// Shutdown is a round trip, so the server has handled initialized once it returns.
			if err := e.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
			code, err := e.Wait(ctx)
			if code != 0 || err != nil {
				t.Errorf("Wait = %d, %v; want 0, nil", code, err)
			}

			var p struct {
				ProcessID             int             `json:"processId"`
				RootURI               any             `json:"rootUri"`
				WorkspaceFolders      any             `json:"workspaceFolders"`
				InitializationOptions any             `json:"initializationOptions"`
				Capabilities          json.RawMessage `json:"capabilities"`
			}
			if err := json.Unmarshal(f.initializeParams(), &p); err != nil {
				t.Fatal(err)
			}
			var caps struct {
				Window       struct{ WorkDoneProgress bool }
				Workspace    struct{ Configuration bool }
				Experimental any
			}
			if err := json.Unmarshal(p.Capabilities, &caps); err != nil {
				t.Fatal(err)
			}
			got := map[string]any{
				"rootUri":               p.RootURI,
				"workspaceFolders":      p.WorkspaceFolders,
				"initializationOptions": p.InitializationOptions,
				"workDoneProgress":      caps.Window.WorkDoneProgress,
				"configuration":         caps.Workspace.Configuration,
				"experimental":          caps.Experimental,
			}
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("initialize params (-got +want):\n%s", diff)
			}
			if p.ProcessID != os.Getpid() {
				t.Errorf("processId = %d, want %d", p.ProcessID, os.Getpid())
			}
			if diff := cmp.Diff(f.notifications(), []string{"initialized", "exit"}); diff != "" {
				t.Errorf("notifications the server got (-got +want):\n%s", diff)
			}
		})
	}
}

// TestServerRequests checks the editor's answers to server→client requests, made by the fake
// server on command.
func TestServerRequests(t *testing.T) {
	settings := map[string]any{"model": "gemini-x", "autoCompact": 0.8}
	var approveMu sync.Mutex
	var approveGot []json.RawMessage
	allowOnce := func(params json.RawMessage) any {
		approveMu.Lock()
		defer approveMu.Unlock()
		approveGot = append(approveGot, params)
		return map[string]string{"title": "Allow once"}
	}
	approval := map[string]any{
		"type":    3,
		"message": "Run `go test`?",
		"actions": []any{map[string]any{"title": "Allow once"}, map[string]any{"title": "Reject"}},
	}
	tests := []struct {
		name     string
		opts     Options
		method   string
		params   any
		want     any   // decoded result
		wantCode int64 // error code instead of a result
	}{
		{
			name:   "configuration",
			opts:   Options{Settings: settings},
			method: "workspace/configuration",
			params: map[string]any{"items": []any{
				map[string]any{"section": "reprise"},
				map[string]any{"section": "reprise.model"},
				map[string]any{"section": "other"},
			}},
			want: []any{map[string]any{"model": "gemini-x", "autoCompact": 0.8}, "gemini-x", nil},
		},
		{
			name:   "configuration without settings",
			opts:   Options{},
			method: "workspace/configuration",
			params: map[string]any{"items": []any{map[string]any{"section": "reprise"}}},
			want:   []any{nil},
		},
		{
			name:   "approval allowed",
			opts:   Options{Approve: allowOnce},
			method: "window/showMessageRequest",
			params: approval,
			want:   map[string]any{"title": "Allow once"},
		},
		{
			name:   "approval answered nil",
			opts:   Options{Approve: func(json.RawMessage) any { return nil }},
			method: "window/showMessageRequest",
			params: approval,
			want:   nil,
		},
		{
			name:   "approval without Approve",
			opts:   Options{},
			method: "window/showMessageRequest",
			params: approval,
			want:   nil,
		},
		{
			name:   "progress create",
			method: "window/workDoneProgress/create",
			params: map[string]any{"token": "t1"},
			want:   nil,
		},
		{
			name:     "unknown request",
			method:   "window/showDocument",
			params:   map[string]any{"uri": "file:///x"},
			wantCode: int64(jsonrpc2.MethodNotFound),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testCtx(t)
			e, _ := startFake(t, tt.opts)
			var result json.RawMessage
			err := e.Execute(ctx, "fake.request", map[string]any{"method": tt.method, "params": tt.params}, &result)
			if tt.wantCode != 0 {
				var rpcErr *jsonrpc2.Error
				if !errors.As(err, &rpcErr) || int64(rpcErr.Code) != tt.wantCode {
					t.Fatalf("Execute = %v, want error code %d", err, tt.wantCode)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(decode(t, result), tt.want); diff != "" {
					t.Errorf("editor's answer (-got +want):\n%s", diff)
				}
			}
			msgs := e.Messages()
			if len(msgs) != 1 || msgs[0].Method != tt.method || !msgs[0].isRequest || msgs[0].ID == "" {
				t.Errorf("Messages() = %+v, want one request %s with an id", msgs, tt.method)
			}
		})
	}

	approveMu.Lock()
	defer approveMu.Unlock()
	if len(approveGot) != 1 || !strings.Contains(string(approveGot[0]), "Run `go test`?") {
		t.Errorf("Approve got %s, want the approval params once", approveGot)
	}
}

func TestAwaitLaterNotification(t *testing.T) {
	ctx := testCtx(t)
	e, _ := startFake(t, Options{})
	end := []any{map[string]any{
		"method": "reprise/sessionUpdate",
		"params": map[string]any{"sessionId": "s1", "update": map[string]any{"sessionUpdate": "turn_end", "stopReason": "end_turn"}},
	}}

	// The first evaluation of the condition asks the server for the notification, so it can only
	// arrive while Await waits: Await has to wake on it.
	evaluations := 0
	var sawEarly bool
	err := e.Await(ctx, "turn_end of s1", func(msgs []Message) bool {
		evaluations++
		if evaluations == 1 {
			sawEarly = len(msgs) > 0
			if err := e.Notify(ctx, "fake/emit", end); err != nil {
				t.Errorf("poke server: %v", err)
			}
			return false
		}
		return len(msgs) > 0 && msgs[len(msgs)-1].Method == "reprise/sessionUpdate"
	})
	if err != nil {
		t.Fatal(err)
	}
	if sawEarly || evaluations < 2 {
		t.Errorf("condition saw messages early = %v, evaluations = %d; want false, >= 2", sawEarly, evaluations)
	}
}

func TestAwaitNotificationAlreadyReceived(t *testing.T) {
	ctx := testCtx(t)
	e, _ := startFake(t, Options{})
	emit := []any{
		map[string]any{"method": "window/logMessage", "params": map[string]any{"type": 3, "message": "first"}},
		map[string]any{"method": "window/logMessage", "params": map[string]any{"type": 3, "message": "second"}},
		map[string]any{"method": "$/progress", "params": map[string]any{"token": "t1", "value": map[string]any{"kind": "end"}}},
	}
	// The server sends the notifications before its reply, so they are recorded when Execute
	// returns.
	if err := e.Execute(ctx, "fake.emit", emit, nil); err != nil {
		t.Fatal(err)
	}

	// An ended ctx proves these come from the record, without waiting.
	done, cancel := context.WithCancel(ctx)
	cancel()
	got, err := e.AwaitNotification(done, "window/logMessage", func(p json.RawMessage) bool {
		return strings.Contains(string(p), "second")
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(decode(t, got), any(map[string]any{"type": 3.0, "message": "second"})); diff != "" {
		t.Errorf("AwaitNotification (-got +want):\n%s", diff)
	}
	if got := len(e.Notifications("window/logMessage")); got != 2 {
		t.Errorf("Notifications(window/logMessage) has %d, want 2", got)
	}

	_, err = e.AwaitNotification(done, "window/showMessage", nil)
	if err == nil || !strings.Contains(err.Error(), "window/showMessage") || !strings.Contains(err.Error(), "$/progress") {
		t.Errorf("AwaitNotification for a missing method = %v, want an error naming it and the last methods seen", err)
	}
}

func TestRepriseHelpers(t *testing.T) {
	ctx := testCtx(t)
	e, _ := startFake(t, Options{Experimental: true})
	update := func(session, kind, stop string) any {
		u := map[string]any{"sessionUpdate": kind}
		if stop != "" {
			u["stopReason"] = stop
		}
		return map[string]any{"method": "reprise/sessionUpdate", "params": map[string]any{"sessionId": session, "update": u}}
	}
	usage := func(session string, used int) any {
		return map[string]any{"method": "reprise/contextUsage", "params": map[string]any{"sessionId": session, "used": used}}
	}
	emit := []any{
		update("s1", "agent_message_chunk", ""),
		update("s2", "turn_end", "end_turn"),
		usage("s1", 10),
		update("s1", "turn_end", "end_turn"),
		usage("s2", 99),
		usage("s1", 20),
		update("s1", "turn_end", "cancelled"),
	}
	if err := e.Execute(ctx, "fake.emit", emit, nil); err != nil {
		t.Fatal(err)
	}

	var stops []string
	for range 2 {
		raw, err := e.AwaitTurnEnd(ctx, "s1")
		if err != nil {
			t.Fatal(err)
		}
		var p struct {
			Update struct{ StopReason string } `json:"update"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			t.Fatal(err)
		}
		stops = append(stops, p.Update.StopReason)
	}
	if diff := cmp.Diff(stops, []string{"end_turn", "cancelled"}); diff != "" {
		t.Errorf("stop reasons of successive AwaitTurnEnd (-got +want):\n%s", diff)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := e.AwaitTurnEnd(done, "s1"); err == nil {
		t.Error("third AwaitTurnEnd(s1) succeeded, want an error: only two turns ended")
	}

	raw, ok := e.LastUsage("s1")
	if !ok {
		t.Fatal("LastUsage(s1) found nothing")
	}
	if diff := cmp.Diff(decode(t, raw), any(map[string]any{"sessionId": "s1", "used": 20.0})); diff != "" {
		t.Errorf("LastUsage(s1) (-got +want):\n%s", diff)
	}
	if raw, ok := e.LastUsage("s3"); ok {
		t.Errorf("LastUsage(s3) = %s, want none", raw)
	}
}

func TestExecuteArguments(t *testing.T) {
	tests := []struct {
		name string
		arg  any
		want any
	}{
		{"object", map[string]any{"text": "hi", "sessionId": "s1"}, []any{map[string]any{"text": "hi", "sessionId": "s1"}}},
		{"none", nil, []any{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testCtx(t)
			e, _ := startFake(t, Options{})
			var got json.RawMessage
			if err := e.Execute(ctx, "fake.echo", tt.arg, &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(decode(t, got), tt.want); diff != "" {
				t.Errorf("arguments the server got (-got +want):\n%s", diff)
			}
		})
	}
}

func TestWriteRawGarbage(t *testing.T) {
	ctx := testCtx(t)
	e, _ := startFake(t, Options{})
	if _, err := e.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.WriteRaw([]byte("Content-Length: 9\r\n\r\n{garbage}")); err != nil {
		t.Fatal(err)
	}
	raw, err := e.AwaitOrphan(ctx, func(raw json.RawMessage) bool {
		var r struct {
			ID    json.RawMessage    `json:"id"`
			Error struct{ Code int } `json:"error"`
		}
		return json.Unmarshal(raw, &r) == nil && string(r.ID) == "null" && r.Error.Code == int(jsonrpc2.ParseError)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("server answered: %s", raw)
	// The fake server, like jsonrpc2, gives up on the connection after a bad frame.
	code, err := e.Wait(ctx)
	if code != 1 || err == nil || !strings.Contains(err.Error(), "unmarshal") {
		t.Errorf("Wait = %d, %v; want 1 and the server's decode error", code, err)
	}
}

func TestStrayResponse(t *testing.T) {
	ctx := testCtx(t)
	e, _ := startFake(t, Options{})
	if err := e.Execute(ctx, "fake.stray", nil, nil); err != nil {
		t.Fatal(err)
	}
	got := e.orphans()
	if len(got) != 1 {
		t.Fatalf("Orphans() = %s, want the stray response", got)
	}
	if diff := cmp.Diff(decode(t, got[0]), any(map[string]any{"jsonrpc": "2.0", "id": 9999.0, "result": "stray"})); diff != "" {
		t.Errorf("orphan (-got +want):\n%s", diff)
	}
}

func TestCallCancel(t *testing.T) {
	ctx := testCtx(t)
	e, f := startFake(t, Options{})
	callCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 1)
	// Owned by this test; ends when Execute returns, after cancel below.
	go func() { errc <- e.Execute(callCtx, "fake.block", nil, nil) }()

	if _, err := e.AwaitNotification(ctx, "fake/blocking", nil); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("Execute = %v, want context.Canceled", err)
	}
	raw, err := e.AwaitOrphan(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var resp struct {
		ID    json.RawMessage    `json:"id"`
		Error struct{ Code int } `json:"error"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil || resp.Error.Code != -32800 {
		t.Fatalf("late answer = %s, want RequestCancelled", raw)
	}
	cancels := f.cancelRequests()
	if len(cancels) != 1 {
		t.Fatalf("server got %d $/cancelRequest, want 1", len(cancels))
	}
	// The id is numeric (what VS Code and Neovim send) and names the cancelled call.
	if diff := cmp.Diff(string(cancels[0]), `{"id":`+string(resp.ID)+`}`); diff != "" || bytes.HasPrefix(resp.ID, []byte(`"`)) {
		t.Errorf("$/cancelRequest params = %s, want the numeric id %s", cancels[0], resp.ID)
	}
}

func TestAwaitEndsWithConnection(t *testing.T) {
	ctx := testCtx(t)
	e, _ := startFake(t, Options{})
	if _, err := e.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	// Without a deadline: the wait must end because the connection did.
	err := e.Await(t.Context(), "something never sent", func([]Message) bool { return false })
	if err == nil || !strings.Contains(err.Error(), "connection ended") {
		t.Errorf("Await after exit = %v, want a connection-ended error", err)
	}
}

func TestOversizedFrame(t *testing.T) {
	serve := func(ctx context.Context, rwc io.ReadWriteCloser) error {
		if _, err := io.WriteString(rwc, "Content-Length: 99999999999\r\n\r\n"); err != nil {
			return err
		}
		_, err := io.Copy(io.Discard, rwc) // until the editor hangs up
		return err
	}
	e := Pipe(t, serve, Options{})
	err := e.Await(testCtx(t), "anything", func(msgs []Message) bool { return len(msgs) > 0 })
	if err == nil || !strings.Contains(err.Error(), "Content-Length") {
		t.Errorf("Await = %v, want the stream's Content-Length error", err)
	}
}

func TestExec(t *testing.T) {
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		shutdown bool
		wantCode int
	}{
		{"shutdown then exit", true, 0},
		{"exit alone", false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testCtx(t)
			e := Exec(t, bin, []string{"--stdio"}, []string{fakeServerEnv + "=1"}, Options{Root: t.TempDir()})
			if _, err := e.Initialize(ctx); err != nil {
				t.Fatal(err)
			}
			var got json.RawMessage
			if err := e.Execute(ctx, "fake.echo", "ping", &got); err != nil {
				t.Fatal(err)
			}
			if string(got) != `["ping"]` {
				t.Errorf("echo = %s, want [\"ping\"]", got)
			}
			if tt.shutdown {
				err = e.Shutdown(ctx)
			} else {
				err = e.Notify(ctx, "exit", nil)
			}
			if err != nil {
				t.Fatal(err)
			}
			code, err := e.Wait(ctx)
			if code != tt.wantCode || err != nil {
				t.Errorf("Wait = %d, %v; want %d, nil", code, err, tt.wantCode)
			}
		})
	}
}
