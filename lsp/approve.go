package lsp

import (
	"context"
	"fmt"

	"go.lsp.dev/protocol"

	"github.com/reprise-dev/reprise/agent/tools"
)

// approver asks the user about a command through window/showMessageRequest, which every LSP
// client shows (VS Code as a notification with buttons, Neovim with vim.ui.select, LSP4IJ as a
// balloon). No answer or null is a rejection; a cancelled turn withdraws the question.
type approver struct {
	srv       *server
	sessionID string
}

func (a approver) Approve(ctx context.Context, req tools.ApprovalRequest) (tools.Decision, error) {
	// Inert, on one line and bounded with the end of the command in view: a notification shows
	// a few lines, and padding must not push what runs out of them. The tools did it already;
	// again is a no-op.
	req.Command, req.Reason, req.Rule = tools.DisplayCommand(req.Command), tools.DisplayCommand(req.Reason), tools.DisplayCommand(req.Rule)
	who := "Reprise"
	if req.Subagent != "" { // the model's words: inert and on one line too
		who = fmt.Sprintf("Reprise's subagent «%s»", tools.DisplayCommand(req.Subagent))
	}
	msg := fmt.Sprintf("%s wants to run a command that needs your approval (%s):\n%s\n%q remembers: %s", who, req.Reason, req.Command, ActionAlwaysAllow, req.Rule)
	switch {
	case req.Tool != "":
		msg = fmt.Sprintf("%s wants to use a tool of an MCP server (%s):\n%s\n%q remembers: %s", who, req.Reason, req.Command, ActionAlwaysAllow, req.Rule)
	case req.File != "":
		msg = fmt.Sprintf("%s wants to write a protected file (%s):\n%s\n%q remembers: %s", who, req.Reason, req.Command, ActionAlwaysAllow, req.Rule)
	}
	params := protocol.ShowMessageRequestParams{
		Type:    protocol.MessageTypeWarning,
		Message: msg,
		Actions: []protocol.MessageActionItem{{Title: ActionAllowOnce}, {Title: ActionAlwaysAllow}, {Title: ActionReject}},
	}
	var item *protocol.MessageActionItem
	id, err := a.srv.conn.Call(ctx, "window/showMessageRequest", params, &item)
	if ctx.Err() != nil {
		// Withdraw the question; the client may close its prompt.
		a.srv.notify("$/cancelRequest", map[string]any{"id": id})
		return tools.Reject, ctx.Err()
	}
	if err != nil {
		a.srv.log.Warn("approval request failed; the command is refused", "command", req.Command, "error", err)
		return tools.Reject, nil
	}
	if item == nil {
		return tools.Reject, nil
	}
	switch item.Title {
	case ActionAllowOnce:
		return tools.AllowOnce, nil
	case ActionAlwaysAllow:
		return tools.AlwaysAllow, nil
	}
	return tools.Reject, nil
}
