package mcp

import (
	"encoding/json"

	"google.golang.org/genai"
)

// maxDescription caps a tool's description, in runes: descriptions are paid for on every request.
const maxDescription = 1000

// DefaultToolBudget is what all MCP declarations may cost, in tokens, in every request. Peers
// send thousands of tokens of tools with each request; past the budget the tools that do not fit
// are reached through the catalogue (catalog.go) instead of being declared.
const DefaultToolBudget = 2000

// SettingBudget turns a budget setting, where 0 means no cap, into Options.ToolBudget, where 0
// means DefaultToolBudget.
func SettingBudget(tokens int) int {
	if tokens == 0 {
		return -1
	}
	return tokens
}

// candidate is a tool that could be declared, with what its declaration costs.
type candidate struct {
	server int
	decl   *genai.FunctionDeclaration
	info   ToolInfo
}

// declare builds the declarations of the servers that started, once: every tool when they fit
// the budget, else the catalogue's two tools and, in configuration order, the tools that still
// fit; the others are deferred.
func (m *Manager) declare() {
	var all []candidate
	total := 0
	for i, s := range m.servers {
		if cs, _ := s.running(); cs == nil {
			continue
		}
		for _, t := range s.tools {
			schema, err := convertSchema(t.InputSchema)
			if err != nil {
				m.opts.Logger.Warn("MCP tool left out: its input schema cannot be declared",
					"server", s.cfg.Name, "tool", t.Name, "error", err)
				continue
			}
			name := m.names.add(i, s.cfg.Name, t.Name)
			d := &genai.FunctionDeclaration{Name: name, Description: capDescription(t.Description),
				ParametersJsonSchema: schema}
			c := candidate{server: i, decl: d, info: ToolInfo{Name: name, Tool: t.Name, Description: d.Description, Tokens: tokens(d)}}
			all = append(all, c)
			total += c.info.Tokens
		}
	}
	budget := m.opts.ToolBudget
	left := budget
	deferring := budget >= 0 && total > budget
	if deferring {
		m.decls = catalogDecls()
		for _, d := range m.decls {
			left -= tokens(d)
		}
	}
	for _, c := range all {
		if deferring && c.info.Tokens > left {
			c.info.Deferred = true
			m.deferred = append(m.deferred, c.decl)
		} else {
			left -= c.info.Tokens
			m.decls = append(m.decls, c.decl)
		}
		s := m.servers[c.server]
		s.infos = append(s.infos, c.info)
	}
	if deferring {
		m.opts.Logger.Info("MCP tools over the budget: the rest are reached through the catalogue",
			"budget", budget, "all", total, "declared", len(m.decls)-2, "deferred", len(m.deferred))
	}
}

// tokens estimates what a declaration costs: a quarter of its JSON.
func tokens(d *genai.FunctionDeclaration) int {
	b, _ := json.Marshal(d)
	return (len(b) + 3) / 4
}

func capDescription(s string) string {
	r := []rune(s)
	if len(r) <= maxDescription {
		return s
	}
	return string(r[:maxDescription-1]) + "…"
}
