//go:build unix

package lsp

import (
	"strings"
	"testing"

	"github.com/reprise-dev/reprise/agent/mcp/mcptest"
	"github.com/reprise-dev/reprise/lsp/lsptest"
)

// TestMCPReferenceServerOverHTTP: the reference server nobody here wrote, over streamable HTTP,
// through the server. Its 14 tools fit the default budget of 2,000 tokens; with a budget of 600
// the declarations stay under it, the rest are found and called through the catalogue, and the
// breakdown counts what is sent.
func TestMCPReferenceServerOverHTTP(t *testing.T) {
	url := mcptest.EverythingHTTP(t)
	e := newEnv(t, envOpts{
		editor: lsptest.Options{Experimental: true, Approve: answerMCP(true), InitializationOptions: map[string]any{
			"mcpServers":    map[string]any{"everything": map[string]any{"type": "http", "url": url}},
			"mcpToolBudget": 600,
		}},
	},
		call("mcp_find_tools", map[string]any{"query": "sum"}),
		call("mcp_call_tool", map[string]any{"name": "everything__get-sum", "arguments": map[string]any{"a": 2, "b": 40}}),
		text("42"),
	)
	var fresh SessionResult
	if err := e.ed.Execute(e.ctx, CommandNewSession, nil, &fresh); err != nil {
		t.Fatal(err)
	}
	var before contextResult
	if err := e.ed.Execute(e.ctx, CommandContext, SessionArgs{SessionID: fresh.SessionID}, &before); err != nil {
		t.Fatal(err)
	}
	var st mcpResult
	if err := e.ed.Execute(e.ctx, CommandMCP, nil, &st); err != nil {
		t.Fatal(err)
	}
	all, deferred := 0, 0
	for _, tl := range st.Servers[0].Tools {
		all += tl.Tokens
		if tl.Deferred {
			deferred++
		}
	}
	t.Logf("reference server: %d tools, %d tokens of declarations in all; sent: %d tokens (%d deferred); breakdown MCP tools %d",
		len(st.Servers[0].Tools), all, st.Tokens, deferred, before.Breakdown.MCPTools)
	if st.Servers[0].State != MCPStateRunning || all > 2000 || all <= 600 || deferred == 0 {
		t.Fatalf("reprise.mcp = %s: want the reference server running, within the default budget, over 600, some tools deferred", mustJSON(st))
	}
	if st.Tokens > 600 || before.Breakdown.MCPTools > 600 || before.Breakdown.MCPTools < st.Tokens*9/10 {
		t.Errorf("sent %d tokens of MCP declarations, breakdown %d: want under the budget of 600, and the breakdown to count them", st.Tokens, before.Breakdown.MCPTools)
	}
	id := e.ask("add 2 and 40", fresh.SessionID)
	e.turnEnd(id)
	outs := e.updates(id, UpdateToolCallUpdate)
	if len(outs) != 2 || !strings.Contains(outs[0].RawOutput.Output, "everything__get-sum") || !strings.Contains(outs[1].RawOutput.Output, "42") {
		t.Errorf("find then call: %+v", outs)
	}
	if !strings.Contains(strings.ToLower(outs[1].Title), "sum") {
		t.Errorf("the call's title %q does not name the tool called", outs[1].Title)
	}
}
