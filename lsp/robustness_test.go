package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/gemini"
	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/contextwin"
	"github.com/reprise-dev/reprise/lsp/lsptest"
)

func TestBadCommandArguments(t *testing.T) {
	e := newEnv(t, envOpts{})
	tests := []struct {
		command string
		arg     any
		code    int
		want    string
	}{
		{CommandAsk, nil, -32602, "reprise.ask: missing argument object"},
		{CommandAsk, map[string]any{"text": ""}, -32602, "reprise.ask: text is required"},
		{CommandAsk, map[string]any{"text": 42}, -32602, "text must be a string, got a number"},
		{CommandAsk, "just a string", -32602, "the argument must be an object"},
		{CommandAsk, map[string]any{"text": "hi", "sessionId": "nope"}, -32602, `unknown session "nope"`},
		{CommandCheckpoint, map[string]any{"n": "one"}, -32602, "n must be a int, got a string"},
		{CommandContext, map[string]any{}, -32602, "no session yet"},
		{CommandResume, map[string]any{}, -32602, "sessionId is required"},
		{"reprise.frobnicate", nil, -32602, `unknown command "reprise.frobnicate"`},
	}
	for _, tt := range tests {
		t.Run(tt.command+fmt.Sprint(tt.arg), func(t *testing.T) {
			err := e.ed.Execute(e.ctx, tt.command, tt.arg, nil)
			code, msg := rpcError(t, err)
			if code != tt.code || !strings.Contains(msg, tt.want) {
				t.Errorf("got %d %q, want %d containing %q", code, msg, tt.code, tt.want)
			}
		})
	}
	// Unknown method.
	code, msg := rpcError(t, e.ed.Call(e.ctx, "textDocument/hover", map[string]any{}, nil))
	if code != int(jsonrpc2.MethodNotFound) || !strings.Contains(msg, "textDocument/hover") {
		t.Errorf("unknown method: %d %q", code, msg)
	}
}

func TestMalformedInputKeepsTheServerAlive(t *testing.T) {
	e := newEnv(t, envOpts{})
	steps := []struct {
		name  string
		raw   string
		check func(raw json.RawMessage) bool
	}{
		{"not JSON", "Content-Length: 9\r\n\r\nnot json!", func(r json.RawMessage) bool { return strings.Contains(string(r), "-32700") }},
		{"batch", "Content-Length: 2\r\n\r\n[]", func(r json.RawMessage) bool { return strings.Contains(string(r), "-32600") }},
		{"too big", fmt.Sprintf("Content-Length: %d\r\n\r\n", 65<<20), func(r json.RawMessage) bool { return strings.Contains(string(r), "exceeds the limit") }},
	}
	for _, st := range steps {
		raw := []byte(st.raw)
		if st.name == "too big" { // a real 65 MiB body the server must skip without keeping it
			raw = append(raw, make([]byte, 65<<20)...)
		}
		if err := e.ed.WriteRaw(raw); err != nil {
			t.Fatal(err)
		}
		if _, err := e.ed.AwaitOrphan(e.ctx, st.check); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		// The server goes on.
		var sessions []SessionInfo
		if err := e.ed.Execute(e.ctx, CommandSessions, nil, &sessions); err != nil {
			t.Fatalf("after %s: %v", st.name, err)
		}
	}
	// A broken header is dropped; the next message is read.
	if err := e.ed.WriteRaw([]byte("Content-Length: nope\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	if err := e.ed.Execute(e.ctx, CommandSessions, nil, nil); err != nil {
		t.Fatalf("after a broken header: %v", err)
	}
}

// TestNumericCancelRequest: VS Code, Neovim and LSP4J cancel with a numeric id, which
// go.lsp.dev's CancelHandler ignores. A compaction stuck behind a 30 s retry delay is cancelled
// by the editor; the answer comes at once, and the history is unchanged.
func TestNumericCancelRequest(t *testing.T) {
	turns := []geminitest.Turn{}
	for range 5 {
		turns = append(turns, call("list_files", map[string]any{}))
	}
	turns = append(turns, text("done"), geminitest.Turn{Match: contextwin.SummaryMarker, Fault: &geminitest.Fault{Status: 503, RetryDelay: "30s"}})
	e := newEnv(t, envOpts{editor: lsptest.Options{Experimental: true}, retries: gemini.Config{BaseDelay: time.Millisecond, MaxDelay: time.Minute}}, turns...)
	id := e.ask("list", "")
	e.turnEnd(id)
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan error, 1)
	go func() { done <- e.ed.Execute(ctx, CommandCompact, compactArgs{SessionID: id}, nil) }()
	// Cancel once the summarizer's request reached the model.
	if err := e.ed.Await(e.ctx, "the compaction's progress report", func(msgs []lsptest.Message) bool {
		for _, m := range msgs {
			if m.Method == "$/progress" && strings.Contains(string(m.Params), `"report"`) {
				return true
			}
		}
		return false
	}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	cancel()
	<-done
	reply, err := e.ed.AwaitOrphan(e.ctx, func(r json.RawMessage) bool { return strings.Contains(string(r), "-32800") })
	if err != nil {
		t.Fatalf("no RequestCancelled answer: %v", err)
	}
	t.Logf("cancelled in %v: %s", time.Since(start), reply)
	var cps []CheckpointInfo
	if err := e.ed.Execute(e.ctx, CommandCheckpoints, SessionArgs{SessionID: id}, &cps); err != nil || len(cps) != 0 {
		t.Errorf("checkpoints after a cancelled compaction: %v %v", cps, err)
	}
}

func TestHandlerPanicIsAnswered(t *testing.T) {
	testHookCall = func(method string) {
		if method == "reprise/test.panic" {
			panic("boom")
		}
	}
	t.Cleanup(func() { testHookCall = nil })
	e := newEnv(t, envOpts{})
	code, msg := rpcError(t, e.ed.Call(e.ctx, "reprise/test.panic", nil, nil))
	if code != int(jsonrpc2.InternalError) || !strings.Contains(msg, "boom") {
		t.Errorf("got %d %q", code, msg)
	}
	if err := e.ed.Execute(e.ctx, CommandSessions, nil, nil); err != nil {
		t.Errorf("after a panic: %v", err)
	}
}

func TestPlainClientFallback(t *testing.T) {
	e := newEnv(t, envOpts{}, // no experimental capability
		call("list_files", map[string]any{}),
		text("The workspace is empty."),
	)
	id := e.ask("what is here?", "")
	msg, err := e.ed.AwaitNotification(e.ctx, "window/showMessage", func(r json.RawMessage) bool {
		return strings.Contains(string(r), "The workspace is empty.")
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(e.ed.Notifications(MethodSessionUpdate))+len(e.ed.Notifications(MethodContextUsage)) > 0 {
		t.Error("a plain client got custom notifications")
	}
	var reports []string
	for _, raw := range e.ed.Notifications("$/progress") {
		var p struct {
			Value struct {
				Kind, Message string
				Percentage    *int
			}
		}
		json.Unmarshal(raw, &p)
		if p.Value.Kind == "report" && p.Value.Percentage != nil {
			reports = append(reports, p.Value.Message)
		}
	}
	if len(reports) == 0 || !strings.HasPrefix(reports[0], "Context ") || !strings.Contains(reports[0], "/24k") {
		t.Errorf("progress reports = %q", reports)
	}
	logs := strings.Join(func() []string {
		var out []string
		for _, r := range e.ed.Notifications("window/logMessage") {
			out = append(out, string(r))
		}
		return out
	}(), "\n")
	if !strings.Contains(logs, "List files") {
		t.Errorf("tool call not logged: %s", logs)
	}
	t.Logf("session %s answered: %s", id, msg)
}

func TestEditorBuffers(t *testing.T) {
	e := newEnv(t, envOpts{editor: lsptest.Options{Experimental: true}, files: map[string]string{"notes.txt": "on disk\n"}},
		call("read_file", map[string]any{"path": "notes.txt"}),
		call("edit_file", map[string]any{"path": "notes.txt", "old": "unsaved", "new": "clobbered"}),
		text("ok"),
	)
	uri := "file://" + filepath.Join(e.ws, "notes.txt")
	e.ed.Notify(e.ctx, "textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "plaintext", "version": 1, "text": "on disk\n"}})
	e.ed.Notify(e.ctx, "textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": uri, "version": 2}, "contentChanges": []map[string]any{{"text": "unsaved edit\n"}}})
	e.turnEnd(e.ask("read notes and edit", ""))
	reqs := e.srv.Requests()
	got := requestText(reqs[len(reqs)-1])
	t.Logf("%d requests; last: %s", len(reqs), got)
	if !strings.Contains(got, "unsaved edit") {
		t.Errorf("read_file did not see the buffer: %s", got)
	}
	if !strings.Contains(got, "unsaved changes in the editor") {
		t.Errorf("the edit was not refused: %s", got)
	}
	data, _ := os.ReadFile(filepath.Join(e.ws, "notes.txt"))
	if string(data) != "on disk\n" {
		t.Errorf("the file was changed: %q", data)
	}
}

func TestSettingsChange(t *testing.T) {
	e := newEnv(t, envOpts{editor: lsptest.Options{Experimental: true, InitializationOptions: map[string]any{"contextBudget": 30000}}})
	var s SessionResult
	if err := e.ed.Execute(e.ctx, CommandNewSession, nil, &s); err != nil {
		t.Fatal(err)
	}
	if u := e.usages(s.SessionID); len(u) == 0 || u[0].Size != 30000 {
		t.Fatalf("usage after newSession: %+v", u)
	}
	e.ed.Notify(e.ctx, "workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"reprise": map[string]any{"contextBudget": 8000}}})
	if _, err := e.ed.AwaitNotification(e.ctx, MethodContextUsage, func(r json.RawMessage) bool { return strings.Contains(string(r), `"size":8000`) }); err != nil {
		t.Fatal(err)
	}
	e.ed.Notify(e.ctx, "workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"reprise": map[string]any{"compactAt": 3}}})
	if _, err := e.ed.AwaitNotification(e.ctx, "window/showMessage", func(r json.RawMessage) bool { return strings.Contains(string(r), "compactAt") }); err != nil {
		t.Fatal(err)
	}
}

func TestWatchingTheWorkspace(t *testing.T) {
	e := newEnv(t, envOpts{watch: true, editor: lsptest.Options{Experimental: true}, files: map[string]string{"a.txt": "first\n"}},
		call("read_file", map[string]any{"path": "a.txt"}),
		text("read"),
		call("list_files", map[string]any{}),
		text("listed"),
	)
	id := e.ask("read a.txt", "")
	e.turnEnd(id)
	before, _ := e.ed.LastUsage(id)
	if err := os.WriteFile(filepath.Join(e.ws, "a.txt"), []byte("second\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.ws, "AGENTS.md"), []byte("Answer in French.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The instructions reload re-emits usage with custom instructions counted.
	raw, err := e.ed.AwaitNotification(e.ctx, MethodContextUsage, func(r json.RawMessage) bool {
		var u contextUsageParams
		return json.Unmarshal(r, &u) == nil && u.Breakdown.CustomInstructions > 0
	})
	if err != nil {
		t.Fatalf("no usage with instructions after AGENTS.md appeared (before: %s): %v", before, err)
	}
	_ = raw
	var ctxRes contextResult
	if err := e.ed.Execute(e.ctx, CommandContext, SessionArgs{SessionID: id}, &ctxRes); err != nil {
		t.Fatal(err)
	}
	stale := false
	for _, it := range ctxRes.Largest {
		stale = stale || it.Path == "a.txt" && it.Stale
	}
	if !stale {
		t.Errorf("a.txt not marked stale: %+v", ctxRes.Largest)
	}
	e.ask("go on", id)
	e.turnEnd(id)
	reqs := e.srv.Requests()
	last := reqs[len(reqs)-1]
	if got := requestText(last); !strings.Contains(got, "changed on disk after you read them: a.txt") {
		t.Errorf("the model was not told: %s", got)
	}
	if !strings.Contains(string(last.Body), "Answer in French.") {
		t.Error("the new AGENTS.md is not in the system instruction")
	}
}

func TestModelUnavailable(t *testing.T) {
	e := newEnv(t, envOpts{newModel: func(ctx context.Context, model string) (agent.Model, int, error) {
		return nil, 0, gemini.ErrNoAPIKey
	}})
	code, msg := rpcError(t, e.ed.Execute(e.ctx, CommandAsk, AskArgs{Text: "hi"}, nil))
	if code != CodeModelUnavailable || !strings.Contains(msg, "GEMINI_API_KEY") {
		t.Errorf("got %d %q", code, msg)
	}
}
