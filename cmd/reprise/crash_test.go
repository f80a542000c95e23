//go:build unix

package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/lsp"
	"github.com/reprise-dev/reprise/lsp/lsptest"
)

// crashEnv runs real `reprise serve` processes one after the other on one workspace and one
// state home, against one fake model.
type crashEnv struct {
	t    *testing.T
	ws   string
	env  []string
	srv  *geminitest.Server
	ctx  context.Context
	opts lsptest.Options
}

func newCrashEnv(t *testing.T, files map[string]string) *crashEnv {
	ws := t.TempDir()
	for name, content := range files {
		os.WriteFile(filepath.Join(ws, name), []byte(content), 0o644)
	}
	srv := geminitest.New(geminitest.Script{})
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	return &crashEnv{
		t: t, ws: ws, srv: srv, ctx: ctx,
		env:  []string{"GEMINI_API_KEY=test-key", "GOOGLE_GEMINI_BASE_URL=" + srv.URL(), "REPRISE_HOME=" + t.TempDir()},
		opts: lsptest.Options{Root: ws, Experimental: true, InitializationOptions: map[string]any{"allow": []string{"sleep"}}},
	}
}

func (c *crashEnv) start() *lsptest.Editor {
	ed := lsptest.Exec(c.t, binary(c.t), []string{"serve", "--stdio"}, c.env, c.opts)
	if _, err := ed.Initialize(c.ctx); err != nil {
		c.t.Fatal(err)
	}
	return ed
}

// kill sends SIGKILL and waits for the process to be gone.
func (c *crashEnv) kill(ed *lsptest.Editor) {
	if err := syscall.Kill(ed.Pid(), syscall.SIGKILL); err != nil {
		c.t.Fatal(err)
	}
	ed.Wait(c.ctx)
}

func (c *crashEnv) awaitTool(ed *lsptest.Editor, name string) {
	if _, err := ed.AwaitNotification(c.ctx, lsp.MethodSessionUpdate, func(r json.RawMessage) bool {
		return strings.Contains(string(r), `"sessionUpdate":"tool_call"`) && strings.Contains(string(r), name)
	}); err != nil {
		c.t.Fatal(err)
	}
}

// resume lists the saved sessions in a new server and resumes the only one.
func (c *crashEnv) resume(ed *lsptest.Editor) string {
	var list []lsp.SessionInfo
	if err := ed.Execute(c.ctx, lsp.CommandSessions, nil, &list); err != nil {
		c.t.Fatal(err)
	}
	if len(list) != 1 || !list[0].Saved {
		c.t.Fatalf("saved sessions = %+v", list)
	}
	var res lsp.SessionResult
	if err := ed.Execute(c.ctx, lsp.CommandResume, lsp.SessionArgs{SessionID: list[0].SessionID}, &res); err != nil {
		c.t.Fatal(err)
	}
	return res.SessionID
}

func (c *crashEnv) lastRequest() string {
	reqs := c.srv.Requests()
	var b strings.Builder
	for _, ct := range reqs[len(reqs)-1].Contents {
		out, _ := json.Marshal(ct)
		b.Write(out)
		b.WriteString("\n")
	}
	return b.String()
}

func call(name string, args map[string]any) geminitest.Turn {
	return geminitest.Turn{Parts: []geminitest.Part{{FunctionCall: &geminitest.FunctionCall{Name: name, Args: args}, ThoughtSignature: "c2lnLTE="}}}
}

func say(text string) geminitest.Turn {
	return geminitest.Turn{Parts: []geminitest.Part{{Text: text}}}
}

// TestKillDuringToolAfterEdit: the server is killed (SIGKILL) while a command runs, after an edit.
// A new server resumes the session with the edit, the call answered as interrupted, and the
// restore point that undoes the edit.
func TestKillDuringToolAfterEdit(t *testing.T) {
	c := newCrashEnv(t, map[string]string{"a.txt": "original\n"})
	c.srv.Append(
		call("edit_file", map[string]any{"path": "a.txt", "old": "original", "new": "edited"}),
		call("run_command", map[string]any{"command": "sleep 60"}),
	)
	ed := c.start()
	var res lsp.SessionResult
	if err := ed.Execute(c.ctx, lsp.CommandAsk, lsp.AskArgs{Text: "edit a.txt then wait"}, &res); err != nil {
		t.Fatal(err)
	}
	c.awaitTool(ed, "sleep 60")
	c.kill(ed)

	data, _ := os.ReadFile(filepath.Join(c.ws, "a.txt"))
	if string(data) != "edited\n" {
		t.Fatalf("a.txt = %q after the crash", data)
	}
	ed2 := c.start()
	id := c.resume(ed2)
	if id != res.SessionID {
		t.Errorf("resumed %s, want %s", id, res.SessionID)
	}
	c.srv.Append(say("resumed"))
	if err := ed2.Execute(c.ctx, lsp.CommandAsk, lsp.AskArgs{Text: "go on", SessionID: id}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ed2.AwaitTurnEnd(c.ctx, id); err != nil {
		t.Fatal(err)
	}
	got := c.lastRequest()
	for _, want := range []string{"edit a.txt then wait", `"name":"edit_file"`, `"thoughtSignature":"c2lnLTE="`, "interrupted: the server stopped", "go on"} {
		if !strings.Contains(got, want) {
			t.Errorf("the resumed history lacks %q:\n%s", want, got)
		}
	}
	var restored map[string][]string
	if err := ed2.Execute(c.ctx, lsp.CommandRestore, lsp.RestoreArgs{SessionID: id, Turn: 1}, &restored); err != nil {
		t.Fatal(err)
	}
	data, _ = os.ReadFile(filepath.Join(c.ws, "a.txt"))
	if string(data) != "original\n" || len(restored["restored"]) != 1 {
		t.Errorf("after restore: a.txt = %q, restored %v", data, restored)
	}
}

// TestKillBeforeTheModelReplies: the server dies while the model call is in flight (held by a
// long retry delay). The resumed session has the request and nothing half-made, and goes on.
func TestKillBeforeTheModelReplies(t *testing.T) {
	c := newCrashEnv(t, nil)
	c.srv.Append(geminitest.Turn{Fault: &geminitest.Fault{Status: 503, RetryDelay: "30s"}})
	ed := c.start()
	var res lsp.SessionResult
	if err := ed.Execute(c.ctx, lsp.CommandAsk, lsp.AskArgs{Text: "first question"}, &res); err != nil {
		t.Fatal(err)
	}
	if _, err := ed.AwaitNotification(c.ctx, lsp.MethodSessionUpdate, func(r json.RawMessage) bool { return strings.Contains(string(r), `"retry"`) }); err != nil {
		t.Fatal(err)
	}
	c.kill(ed)
	ed2 := c.start()
	// A saved session's checkpoints can be read before it is resumed.
	var cps []lsp.CheckpointInfo
	if err := ed2.Execute(c.ctx, lsp.CommandCheckpoints, lsp.SessionArgs{SessionID: res.SessionID}, &cps); err != nil {
		t.Errorf("checkpoints of a saved session: %v", err)
	}
	id := c.resume(ed2)
	c.srv.Append(say("answer after the crash"))
	if err := ed2.Execute(c.ctx, lsp.CommandAsk, lsp.AskArgs{Text: "second question", SessionID: id}, nil); err != nil {
		t.Fatal(err)
	}
	raw, err := ed2.AwaitTurnEnd(c.ctx, id)
	if err != nil || !strings.Contains(string(raw), "end_turn") {
		t.Fatalf("turn after resume: %s %v", raw, err)
	}
	got := c.lastRequest()
	if !strings.Contains(got, "first question") || !strings.Contains(got, "second question") {
		t.Errorf("resumed history:\n%s", got)
	}
}

// TestTwoServersOneSession: a session open in one server cannot be resumed by another, which says
// so clearly.
func TestTwoServersOneSession(t *testing.T) {
	c := newCrashEnv(t, nil)
	c.srv.Append(say("hello"))
	ed := c.start()
	var res lsp.SessionResult
	if err := ed.Execute(c.ctx, lsp.CommandAsk, lsp.AskArgs{Text: "hi"}, &res); err != nil {
		t.Fatal(err)
	}
	ed.AwaitTurnEnd(c.ctx, res.SessionID)
	ed2 := c.start()
	err := ed2.Execute(c.ctx, lsp.CommandResume, lsp.SessionArgs{SessionID: res.SessionID}, nil)
	if err == nil || !strings.Contains(err.Error(), "open in another reprise process") {
		t.Errorf("second server: %v", err)
	}
}
