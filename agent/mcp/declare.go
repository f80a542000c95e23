package mcp

import (
	"encoding/json"

	"google.golang.org/genai"
)

// maxDescription caps a tool's description, in runes: descriptions are paid for on every request.
const maxDescription = 1000

// declare builds the declarations of the servers that started, once.
func (m *Manager) declare() {
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
			m.decls = append(m.decls, d)
			b, _ := json.Marshal(d)
			s.infos = append(s.infos, ToolInfo{Name: name, Tool: t.Name, Description: d.Description,
				Tokens: (len(b) + 3) / 4})
		}
	}
}

func capDescription(s string) string {
	r := []rune(s)
	if len(r) <= maxDescription {
		return s
	}
	return string(r[:maxDescription-1]) + "…"
}
