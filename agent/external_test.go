package agent

import (
	"context"
	"strings"
	"sync"
	"testing"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent/secret"
	"github.com/reprise-dev/reprise/agent/tools"
)

// docsServer stands for an MCP server's tools as agent/mcp presents them (agent/mcp tests the
// real servers): one tool whose output is long and quotes a secret.
type docsServer struct {
	mu    sync.Mutex
	calls []map[string]any
}

func (d *docsServer) Declarations() []*genai.FunctionDeclaration {
	return []*genai.FunctionDeclaration{{
		Name:        "docs__lookup",
		Description: "Look a topic up in the team's documentation.",
		ParametersJsonSchema: map[string]any{"type": "object", "properties": map[string]any{
			"topic": map[string]any{"type": "string"}}, "required": []string{"topic"}},
	}}
}

func (d *docsServer) Lookup(name string, _ map[string]any) (tools.ExternalTool, bool) {
	if name != "docs__lookup" {
		return tools.ExternalTool{}, false
	}
	return tools.ExternalTool{Name: name, Server: "docs", Tool: "lookup", Title: "docs: lookup"}, true
}

func (d *docsServer) Call(_ context.Context, name string, args map[string]any) (string, bool) {
	d.mu.Lock()
	d.calls = append(d.calls, args)
	d.mu.Unlock()
	return "token=sekrit-value-123\n" + strings.Repeat("documentation line\n", 2000), false
}

func (d *docsServer) called() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.calls)
}

// answers replies to approval questions in order, then rejects.
type answers struct {
	mu    sync.Mutex
	next  []tools.Decision
	asked []tools.ApprovalRequest
}

func (a *answers) Approve(_ context.Context, req tools.ApprovalRequest) (tools.Decision, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, req)
	if len(a.next) == 0 {
		return tools.Reject, nil
	}
	d := a.next[0]
	a.next = a.next[1:]
	return d, nil
}

func TestExternalToolsDeclaredAndCounted(t *testing.T) {
	plain := newFixture(t, fixtureOpts{}, textTurn("ok"))
	f := newFixture(t, fixtureOpts{external: &docsServer{}}, textTurn("ok"))
	// Both before any call, so that both breakdowns are the same local estimate.
	got, want := f.s.Context().Breakdown, plain.s.Context().Breakdown
	if got.MCPTools <= 0 || got.Tools != want.Tools || want.MCPTools != 0 {
		t.Errorf("breakdown: MCP tools %d, tools %d; without MCP: MCP tools %d, tools %d", got.MCPTools, got.Tools, want.MCPTools, want.Tools)
	}
	f.run(t.Context(), "hi")
	reqs := f.srv.Requests()
	fns := reqs[len(reqs)-1].Functions
	builtin := len(tools.Declarations()) + 1 // and task
	if len(fns) != builtin+1 || fns[builtin] != "docs__lookup" || fns[0] != "read_file" {
		t.Errorf("declared %v, want the %d built-in tools then docs__lookup", fns, builtin)
	}
}

func TestExternalToolAskedBoundedRedacted(t *testing.T) {
	docs := &docsServer{}
	user := &answers{next: []tools.Decision{tools.Reject, tools.AlwaysAllow}}
	call := callTurn("docs__lookup", map[string]any{"topic": "deploys"}, "")
	f := newFixture(t, fixtureOpts{external: docs, approver: user, secrets: secret.New(map[string]string{"DOCS_TOKEN": "sekrit-value-123"})},
		call, call, call, textTurn("done"))
	evs, err := f.run(t.Context(), "look it up")
	if err != nil {
		t.Fatal(err)
	}
	outs := toolOutputsOf(evs)
	if len(outs) != 3 {
		t.Fatalf("%d tool results, want 3", len(outs))
	}
	if !strings.Contains(outs[0], "refused") || docs.called() != 2 {
		t.Errorf("first call (rejected) = %q; the server was called %d times, want 2", outs[0], docs.called())
	}
	if len(user.asked) != 2 {
		t.Errorf("asked %d times, want 2 (the third call is always allowed)", len(user.asked))
	}
	q := user.asked[0]
	if q.Tool != "docs__lookup" || !strings.Contains(q.Command, `docs__lookup {"topic":"deploys"}`) || !strings.Contains(q.Rule, "docs__lookup") {
		t.Errorf("question %+v", q)
	}
	for _, out := range outs[1:] {
		if strings.Contains(out, "sekrit-value-123") {
			t.Errorf("the secret reached the model: %.80q", out)
		}
		if len([]rune(out)) > 4500 || !strings.Contains(out, "documentation line") {
			t.Errorf("output not bounded like a tool's: %d characters", len([]rune(out)))
		}
	}
	ups := ofType(evs, EventToolUpdate)
	if ups[1].Tool.Omitted == 0 || ups[1].Tool.SavedPath == "" || ups[1].Tool.Title != "docs: lookup" {
		t.Errorf("update %+v: want characters omitted, the whole output saved and the tool's title", ups[1].Tool)
	}
}

func TestExternalToolGranted(t *testing.T) {
	docs := &docsServer{}
	user := &answers{}
	f := newFixture(t, fixtureOpts{external: docs, approver: user, grants: tools.NewMCPGrants([]string{"docs"})},
		callTurn("docs__lookup", map[string]any{"topic": "x"}, ""), textTurn("done"))
	f.run(t.Context(), "look")
	if len(user.asked) != 0 || docs.called() != 1 {
		t.Errorf("asked %d, called %d: --allow-mcp docs must run its tools without asking", len(user.asked), docs.called())
	}
}

func toolOutputsOf(evs []Event) []string {
	var out []string
	for _, ev := range toolResults(evs) {
		out = append(out, ev.Tool.Output)
	}
	return out
}
