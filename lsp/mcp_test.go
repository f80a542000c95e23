package lsp

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/agent/mcp/mcptest"
	"github.com/reprise-dev/reprise/agent/tools"
	"github.com/reprise-dev/reprise/lsp/lsptest"
)

const mcpSecret = "AIzaMCPsecretValue0123456789"

// answerMCP starts trusted servers (or not) and allows every tool once.
func answerMCP(start bool) func(json.RawMessage) any {
	return func(raw json.RawMessage) any {
		var p struct {
			Message string `json:"message"`
		}
		json.Unmarshal(raw, &p)
		switch {
		case strings.Contains(p.Message, "declares the MCP server"):
			if start {
				return map[string]string{"title": ActionStartServer}
			}
			return map[string]string{"title": ActionDontStartServer}
		case strings.Contains(p.Message, "MCP server"):
			return map[string]string{"title": ActionAllowOnce}
		}
		return nil
	}
}

func mcpJSON(t *testing.T, servers map[string]any) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"servers": servers})
	if err != nil {
		t.Fatal(err)
	}
	return "// the team's servers\n" + string(b)
}

// TestMCPThroughTheServer: a server from the editor's setting and one the workspace declares
// (started once the user trusts it) are declared to the model after the built-in tools; their
// results reach the model bounded and redacted; reprise.mcp and the breakdown count them.
func TestMCPThroughTheServer(t *testing.T) {
	t.Setenv("GEMINI_API_KEY", mcpSecret)
	config := t.TempDir()
	e := newEnv(t, envOpts{
		configHome: config,
		files:      map[string]string{".vscode/mcp.json": mcpJSON(t, map[string]any{"wsdocs": mcptest.JSON(nil)})},
		editor: lsptest.Options{Experimental: true, Approve: answerMCP(true), InitializationOptions: map[string]any{
			"mcpServers": map[string]any{"tools": mcptest.JSON(map[string]string{mcptest.LeakEnv: mcpSecret})},
		}},
	},
		call("tools__echo", map[string]any{"text": "hi"}),
		call("tools__leak", map[string]any{}),
		call("tools__lines", map[string]any{"lines": 3000}),
		call("wsdocs__add", map[string]any{"a": 2, "b": 3}),
		text("done"),
	)
	// Before any session, nothing runs: the servers are listed as stopped, the workspace's as not
	// trusted yet, and nobody was asked.
	var idle mcpResult
	if err := e.ed.Execute(e.ctx, CommandMCP, nil, &idle); err != nil {
		t.Fatal(err)
	}
	if len(idle.Servers) != 2 || idle.Servers[0].State != MCPStateStopped || idle.Servers[1].State != MCPStateUntrusted {
		t.Errorf("reprise.mcp before any session = %s", mustJSON(idle))
	}
	id := e.ask("use the tools", "")
	if end := e.turnEnd(id); end.Update.StopReason != "end_turn" {
		t.Fatalf("turn ended %+v", end.Update)
	}
	reqs := modelCalls(e.srv.Requests())
	fns := reqs[0].Functions
	builtin := len(tools.Declarations()) + 1 // and task
	if len(fns) <= builtin || fns[0] != "read_file" || fns[builtin] != "tools__add" || !strings.Contains(strings.Join(fns, " "), "wsdocs__echo") {
		t.Errorf("declared %v: want the built-in tools, then the setting's server, then the workspace's", fns)
	}
	outs := e.updates(id, UpdateToolCallUpdate)
	if len(outs) != 4 {
		t.Fatalf("%d tool results, want 4", len(outs))
	}
	if got := outs[0].RawOutput.Output; got != "echo: hi" {
		t.Errorf("echo = %q", got)
	}
	last := requestText(reqs[len(reqs)-1])
	if strings.Contains(last, mcpSecret) || strings.Contains(outs[1].RawOutput.Output, mcpSecret) {
		t.Error("the secret a server printed reached the model or the editor")
	}
	if o := outs[2].RawOutput; o.Omitted == 0 || o.SavedPath == "" || !strings.Contains(o.Output, "line 3000 of the report") {
		t.Errorf("a long MCP output is not bounded and saved like a tool's: omitted %d, saved %q", o.Omitted, o.SavedPath)
	}
	if got := outs[3].RawOutput.Output; !strings.Contains(got, `"sum":5`) {
		t.Errorf("wsdocs__add = %q", got)
	}

	var st mcpResult
	if err := e.ed.Execute(e.ctx, CommandMCP, nil, &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Servers) != 2 || st.Servers[0].Name != "tools" || st.Servers[0].State != MCPStateRunning || len(st.Servers[0].Tools) != 5 || st.Tokens <= 0 {
		t.Errorf("reprise.mcp = %s", mustJSON(st))
	}
	var ctxRes contextResult
	if err := e.ed.Execute(e.ctx, CommandContext, SessionArgs{SessionID: id}, &ctxRes); err != nil {
		t.Fatal(err)
	}
	if ctxRes.Breakdown.MCPTools <= 0 {
		t.Errorf("breakdown MCP tools = %d", ctxRes.Breakdown.MCPTools)
	}
	if len(ctxRes.MCP) != 2 || ctxRes.MCP[0].Server != "tools" || ctxRes.MCP[0].Tools != 5 || ctxRes.MCP[1].Server != "wsdocs" || ctxRes.MCP[0].Tokens <= 0 {
		t.Errorf("reprise.context mcp = %s", mustJSON(ctxRes.MCP))
	}
	if !regexp.MustCompile(`(?m)^    tools\s+\S+\s+5 tools$`).MatchString(ctxRes.Text) {
		t.Errorf("the /context text has no row for the server tools:\n%s", ctxRes.Text)
	}
	// The consent is kept in the user's config directory, not in the workspace.
	if b, err := os.ReadFile(filepath.Join(config, trustFile)); err != nil || !strings.Contains(string(b), "trusted") {
		t.Errorf("trust file: %v %q", err, b)
	}
}

// TestMCPUntrustedNotStarted: a server the workspace declares does not run until the user
// trusts it; declined, it is listed as untrusted and its command never ran.
func TestMCPUntrustedNotStarted(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	e := newEnv(t, envOpts{
		configHome: t.TempDir(),
		files: map[string]string{".vscode/mcp.json": mcpJSON(t, map[string]any{
			"evil": map[string]any{"command": "sh", "args": []string{"-c", "touch " + marker}},
		})},
		editor: lsptest.Options{Experimental: true, Approve: answerMCP(false)},
	}, text("ok"))
	id := e.ask("hi", "")
	e.turnEnd(id)
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the untrusted workspace server ran")
	}
	if fns := modelCalls(e.srv.Requests())[0].Functions; len(fns) != len(tools.Declarations())+1 { // and task
		t.Errorf("declared %v: want only the built-in tools", fns)
	}
	var st mcpResult
	if err := e.ed.Execute(e.ctx, CommandMCP, nil, &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Servers) != 1 || st.Servers[0].State != MCPStateUntrusted {
		t.Errorf("reprise.mcp = %s", mustJSON(st))
	}
}

// modelCalls are the generateContent requests, without model info and token counts.
func modelCalls(reqs []geminitest.Request) []geminitest.Request {
	var out []geminitest.Request
	for _, r := range reqs {
		if strings.Contains(r.Path, "generateContent") || strings.Contains(r.Path, "GenerateContent") {
			out = append(out, r)
		}
	}
	return out
}

// TestMCPTrustQuestion: the question shows all that decides what runs (a hostile environment
// included), and a dismissed question is asked again rather than taken for an answer.
func TestMCPTrustQuestion(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	e := newEnv(t, envOpts{
		configHome: t.TempDir(),
		files: map[string]string{".vscode/mcp.json": mcpJSON(t, map[string]any{
			"gh": map[string]any{"command": "npx", "args": []string{"server-github"}, "env": map[string]string{"NODE_OPTIONS": "--require ./x.js"}},
		})},
		editor: lsptest.Options{Experimental: true, Approve: func(raw json.RawMessage) any {
			var p struct {
				Message string `json:"message"`
			}
			json.Unmarshal(raw, &p)
			mu.Lock()
			asked = append(asked, p.Message)
			mu.Unlock()
			return nil // dismissed
		}},
	}, text("one"), text("two"))
	for range 2 {
		var s SessionResult
		if err := e.ed.Execute(e.ctx, CommandNewSession, nil, &s); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 2 {
		t.Fatalf("asked %d times, want twice: a dismissed question is no answer", len(asked))
	}
	for _, want := range []string{"command: npx server-github", "environment: NODE_OPTIONS=--require ./x.js"} {
		if !strings.Contains(asked[0], want) {
			t.Errorf("the question lacks %q:\n%s", want, asked[0])
		}
	}
}

// TestAttackMCPTrustAskedAgainWhenCodeChanges: trust in a workspace server covers the script it
// names and what that script loads beside it (here a file it sources); once a command (sandboxed,
// but free to edit the workspace) changed either, the server is asked about again before it runs
// with the user's rights.
func TestAttackMCPTrustAskedAgainWhenCodeChanges(t *testing.T) {
	for _, changed := range []string{"tools/mcp.sh", "tools/lib.sh"} {
		t.Run(changed, func(t *testing.T) { mcpTrustAskedAgain(t, changed) })
	}
}

func mcpTrustAskedAgain(t *testing.T, changed string) {
	var mu sync.Mutex
	asked := 0
	// The first question is answered yes, the one after the change no: the changed script is the
	// attacker's and must not run, not even in this test's own home.
	yes, no := answerMCP(true), answerMCP(false)
	e := newEnv(t, envOpts{
		configHome: t.TempDir(),
		files: map[string]string{
			".vscode/mcp.json": mcpJSON(t, map[string]any{"local": map[string]any{"command": "sh", "args": []string{"./tools/mcp.sh"}}}),
			"tools/mcp.sh":     ". ./tools/lib.sh\n",
			"tools/lib.sh":     "exit 0\n",
		},
		editor: lsptest.Options{Experimental: true, Approve: func(raw json.RawMessage) any {
			mu.Lock()
			defer mu.Unlock()
			if !strings.Contains(string(raw), "declares the MCP server") {
				return yes(raw)
			}
			asked++
			if asked > 1 {
				return no(raw)
			}
			return yes(raw)
		}},
	}, text("one"), text("two"), text("three"))
	newSession := func() {
		t.Helper()
		var s SessionResult
		if err := e.ed.Execute(e.ctx, CommandNewSession, nil, &s); err != nil {
			t.Fatal(err)
		}
	}
	count := func() int { mu.Lock(); defer mu.Unlock(); return asked }
	newSession()
	newSession()
	if n := count(); n != 1 {
		t.Fatalf("asked %d times before any change, want once", n)
	}
	pwned := filepath.Join(t.TempDir(), "PWNED")
	payload := fmt.Sprintf("id > %q\n", pwned)
	if err := os.WriteFile(filepath.Join(e.ws, filepath.FromSlash(changed)), []byte(payload), 0o644); err != nil {
		t.Fatal(err)
	}
	newSession()
	if n := count(); n != 2 {
		t.Errorf("asked %d times after the script changed, want again", n)
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Error("the changed script ran although the user refused it")
	}
}
