package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"google.golang.org/genai"
)

// External is a set of tools the harness does not define: the user's MCP servers (agent/mcp).
// Its declarations are fixed for a session, so that the prompt's prefix stays cached: a tool whose
// server died stays declared, and its calls fail with an error the model reads.
type External interface {
	// Declarations are the functions to declare, after the built-in tools; their names are
	// valid Gemini function names and never those of a built-in tool.
	Declarations() []*genai.FunctionDeclaration
	// Lookup describes one of its tools by its declared name and the call's arguments (a tool
	// that calls another describes the one it calls).
	Lookup(name string, args map[string]any) (ExternalTool, bool)
	// Call runs a tool. text is what the model gets, before bounding; isErr marks a failure
	// (the server's, or its death), which the model reads like any tool error.
	Call(ctx context.Context, name string, args map[string]any) (text string, isErr bool)
}

// ExternalTool describes an external tool for the approval question and the UI.
type ExternalTool struct {
	Name   string // as declared: SERVER__TOOL
	Server string // the server's name in the configuration
	Tool   string // the tool's own name on its server
	Title  string // a short title for a UI
	// Free tools run without asking: they read only Reprise's own list of tools.
	Free bool
}

// MCPGrants says which MCP tools run without asking: `--allow-mcp SERVER` or
// `--allow-mcp SERVER__TOOL`, and the tools the user allowed always during the session. Every
// other MCP tool is asked, whatever the command allowlist says. Safe for concurrent use; the
// zero value grants nothing.
type MCPGrants struct {
	mu      sync.Mutex
	servers []string
	tools   []string
}

// NewMCPGrants reads `--allow-mcp` patterns: a server's name grants all its tools, SERVER__TOOL
// one tool.
func NewMCPGrants(patterns []string) *MCPGrants {
	g := &MCPGrants{}
	for _, p := range patterns {
		g.Allow(p)
	}
	return g
}

// Allow grants a server (no "__") or one tool (SERVER__TOOL).
func (g *MCPGrants) Allow(pattern string) {
	pattern = strings.TrimSpace(pattern)
	if pattern == "" {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if strings.Contains(pattern, "__") {
		g.tools = append(g.tools, pattern)
	} else {
		g.servers = append(g.servers, pattern)
	}
}

// Allowed reports whether t runs without asking.
func (g *MCPGrants) Allowed(t ExternalTool) bool {
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Contains(g.servers, t.Server) || slices.Contains(g.tools, t.Name)
}

// runExternal runs an external tool: asked unless granted, its output bounded, spilled and
// redacted as any tool's.
func runExternal(ctx context.Context, e *Env, t ExternalTool, call Call) Result {
	if !t.Free && !e.MCPGrants.Allowed(t) {
		line := externalLine(t, call.Args)
		refused := failure("refused by the user: the MCP tool " + t.Name + " did not run")
		refused.Refused = true
		if e.Approver == nil {
			refused.Output = "refused: the MCP tool " + t.Name + " needs the user's approval, and nobody can be asked"
			return refused
		}
		d, err := e.Approver.Approve(ctx, ApprovalRequest{CallID: call.ID, Command: e.Secrets.String(line),
			Reason: "MCP tool of the server " + t.Server, Rule: "the MCP tool " + t.Name + " (any arguments)", Tool: t.Name}.displayed())
		switch {
		case err != nil && ctx.Err() != nil:
			return failure("cancelled")
		case err != nil || d == Reject:
			return refused
		case d == AlwaysAllow:
			e.MCPGrants.Allow(t.Name)
		}
	}
	text, isErr := e.External.Call(ctx, call.Name, call.Args)
	res := Result{IsError: isErr}
	e.bounded(call, "mcp-"+t.Name, text, &res)
	return res
}

// maxShownArgs bounds the arguments shown in an approval question, in characters.
const maxShownArgs = 2000

// externalLine is the call as the user is asked about it: the tool and its arguments.
func externalLine(t ExternalTool, args map[string]any) string {
	b, err := json.Marshal(args)
	if err != nil || len(args) == 0 {
		return t.Name
	}
	// The user approves what they read: arguments are shown whole up to a size a dialog can
	// hold, and past it the question says how much it does not show.
	s := string(b)
	if r := []rune(s); len(r) > maxShownArgs {
		s = fmt.Sprintf("%s… [%d more characters not shown]", string(r[:maxShownArgs]), len(r)-maxShownArgs)
	}
	return fmt.Sprintf("%s %s", t.Name, s)
}
