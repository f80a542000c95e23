package lsp

import (
	"context"
	"encoding/json"

	"go.lsp.dev/protocol"
)

// codeActions offers the server's commands to clients that cannot type a prompt (LSP4IJ, eglot):
// see PROTOCOL.md. Placeholder until the code-action work lands: no actions.
func (s *Server) codeActions(ctx context.Context, params json.RawMessage) (any, error) {
	return []protocol.CodeAction{}, nil
}

// showContext shows the /context view as a message and returns it.
func (s *Server) showContext(l *live) ContextResult {
	r := s.contextReport(l)
	s.showMessage(protocol.MessageTypeInfo, r.Text)
	return r
}
