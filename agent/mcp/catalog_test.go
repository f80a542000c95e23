package mcp

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// manyTools is a server with n tools whose declarations cost about the same.
func manyTools(n int) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "many", Version: "1"}, nil)
	for i := range n {
		mcp.AddTool(s, &mcp.Tool{Name: fmt.Sprintf("tool%02d", i), Description: fmt.Sprintf("Looks up record kind %d in the ledger database.", i)},
			func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("tool%02d: %s", i, in.Text)}}}, nil, nil
			})
	}
	return s
}

func declaredTokens(m *Manager) int {
	n := 0
	for _, d := range m.Declarations() {
		n += tokens(d)
	}
	return n
}

// TestToolBudget: tools past the budget are not declared; the catalogue finds and calls them,
// and the declarations stay under the budget.
func TestToolBudget(t *testing.T) {
	const budget = 600
	m := New(Options{Servers: []ServerConfig{{Name: "ledger", Type: TypeStdio, Command: "unused", Source: "test"}},
		Logger: quiet(), ToolBudget: budget, transport: inMemory(t, map[string]*mcp.Server{"ledger": manyTools(30)})})
	defer m.Close()
	mustStart(t, m)
	decls := m.Declarations()
	if decls[0].Name != FindToolsName || decls[1].Name != CallToolName {
		t.Fatalf("declared %s, %s first: want the catalogue", decls[0].Name, decls[1].Name)
	}
	if got := declaredTokens(m); got > budget {
		t.Errorf("declarations cost %d tokens, over the budget of %d", got, budget)
	}
	var deferred, declared int
	for _, ti := range m.Servers()[0].Tools {
		if ti.Deferred {
			deferred++
		} else {
			declared++
		}
	}
	if declared == 0 || deferred == 0 || declared+deferred != 30 || declared != len(decls)-2 {
		t.Errorf("declared %d, deferred %d of 30 (%d declarations)", declared, deferred, len(decls))
	}
	ctx := t.Context()
	text, isErr := m.Call(ctx, FindToolsName, map[string]any{"query": "kind 29 LEDGER"})
	if isErr || !strings.Contains(text, `"ledger__tool29"`) || strings.Contains(text, "ledger__tool28") || !strings.Contains(text, `"parameters"`) {
		t.Errorf("find = %q, %v", text, isErr)
	}
	if text, _ := m.Call(ctx, FindToolsName, map[string]any{"query": "ledger"}); !strings.Contains(text, "more match: narrow the query") {
		t.Errorf("a vague query is not bounded: %q", text)
	}
	if text, _ := m.Call(ctx, FindToolsName, map[string]any{"query": "weather"}); !strings.Contains(text, "no MCP tool matches") {
		t.Errorf("find weather = %q", text)
	}
	args := map[string]any{"name": "ledger__tool29", "arguments": map[string]any{"text": "hi"}}
	if text, isErr := m.Call(ctx, CallToolName, args); isErr || text != "tool29: hi" {
		t.Errorf("call = %q, %v", text, isErr)
	}
	// The user is asked about the tool called, not about the catalogue.
	if x, ok := m.Lookup(CallToolName, args); !ok || x.Name != "ledger__tool29" || x.Server != "ledger" || x.Free {
		t.Errorf("Lookup(call) = %+v, %v", x, ok)
	}
	if x, ok := m.Lookup(FindToolsName, nil); !ok || !x.Free {
		t.Errorf("Lookup(find) = %+v, %v: finding reads only the list and is not asked", x, ok)
	}
	if text, isErr := m.Call(ctx, CallToolName, map[string]any{"name": "ledger__nope"}); !isErr || !strings.Contains(text, "unknown MCP tool") {
		t.Errorf("call of an unknown tool = %q, %v", text, isErr)
	}
}

// TestToolBudgetFits: tools within the budget are all declared, without the catalogue.
func TestToolBudgetFits(t *testing.T) {
	for _, budget := range []int{0, -1} { // the default, and no limit
		m := New(Options{Servers: []ServerConfig{{Name: "ledger", Type: TypeStdio, Command: "unused", Source: "test"}},
			Logger: quiet(), ToolBudget: budget, transport: inMemory(t, map[string]*mcp.Server{"ledger": manyTools(3)})})
		mustStart(t, m)
		decls := m.Declarations()
		if len(decls) != 3 || decls[0].Name != "ledger__tool00" {
			t.Errorf("budget %d: declared %d tools, first %s", budget, len(decls), decls[0].Name)
		}
		if _, ok := m.Lookup(FindToolsName, nil); ok {
			t.Errorf("budget %d: the catalogue exists with every tool declared", budget)
		}
		m.Close()
	}
}
