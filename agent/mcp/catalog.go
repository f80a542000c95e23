package mcp

import (
	"encoding/json"
	"fmt"
	"strings"

	"google.golang.org/genai"
)

// The catalogue: when the MCP tools do not fit the budget, the model gets two tools instead of
// the ones left out, one to find them and one to call them. Their names hold no "__", so they
// never collide with a server's SERVER__TOOL.
const (
	FindToolsName = "mcp_find_tools"
	CallToolName  = "mcp_call_tool"
)

// maxFound bounds what mcp_find_tools returns, so that a vague query does not cost what the
// declarations would have.
const maxFound = 8

func catalogDecls() []*genai.FunctionDeclaration {
	return []*genai.FunctionDeclaration{{
		Name:        FindToolsName,
		Description: "Find MCP tools that are available but not declared (the user's tool servers). Returns names, descriptions and parameter schemas; call one with " + CallToolName + ".",
		ParametersJsonSchema: map[string]any{"type": "object", "properties": map[string]any{
			"query": map[string]any{"type": "string", "description": "Words to look for in tool names and descriptions; empty lists them all."},
		}},
	}, {
		Name:        CallToolName,
		Description: "Call an MCP tool found with " + FindToolsName + ".",
		ParametersJsonSchema: map[string]any{"type": "object", "properties": map[string]any{
			"name":      map[string]any{"type": "string", "description": "The tool's name, as " + FindToolsName + " gives it."},
			"arguments": map[string]any{"type": "object", "description": "Its arguments, as its schema says."},
		}, "required": []string{"name"}},
	}}
}

// findTools answers mcp_find_tools: the deferred tools whose name or description holds every
// word of the query.
func (m *Manager) findTools(args map[string]any) (string, bool) {
	q, _ := args["query"].(string)
	words := strings.Fields(strings.ToLower(q))
	var found []map[string]any
	n := 0
	for _, d := range m.deferred {
		hay := strings.ToLower(d.Name + " " + d.Description)
		all := true
		for _, w := range words {
			if !strings.Contains(hay, w) {
				all = false
				break
			}
		}
		if !all {
			continue
		}
		n++
		if len(found) < maxFound {
			found = append(found, map[string]any{"name": d.Name, "description": d.Description, "parameters": d.ParametersJsonSchema})
		}
	}
	if n == 0 {
		return fmt.Sprintf("no MCP tool matches %q; %d tools are not declared", q, len(m.deferred)), false
	}
	b, err := json.MarshalIndent(found, "", " ")
	if err != nil {
		return "cannot list the tools: " + err.Error(), true
	}
	out := string(b)
	if n > len(found) {
		out += fmt.Sprintf("\n[%d more match: narrow the query]", n-len(found))
	}
	return out, false
}

// callTarget reads mcp_call_tool's arguments: the tool to call and its own arguments.
func callTarget(args map[string]any) (name string, targs map[string]any) {
	name, _ = args["name"].(string)
	targs, _ = args["arguments"].(map[string]any)
	return name, targs
}

// CatalogTokens is what the catalogue's two declarations cost per request, when it is declared.
func (m *Manager) CatalogTokens() int {
	if !m.startDone() || len(m.deferred) == 0 {
		return 0
	}
	n := 0
	for _, d := range catalogDecls() {
		n += tokens(d)
	}
	return n
}
