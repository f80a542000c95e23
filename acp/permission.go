package acp

import (
	"context"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reprise-dev/reprise/agent/tools"
)

// The options of a permission request.
const (
	optionAllowOnce   = "allow-once"
	optionAllowAlways = "allow-always"
	optionReject      = "reject"
)

// approver asks the user through session/request_permission. A cancelled turn, a client error or
// any other answer rejects.
type approver struct {
	srv       *server
	sessionID string
}

func (a approver) Approve(ctx context.Context, req tools.ApprovalRequest) (tools.Decision, error) {
	title := "Run " + req.Command
	kind := sdk.ToolKindExecute
	raw := map[string]any{"command": req.Command}
	switch {
	case req.Tool != "":
		title, kind = "Use the MCP tool "+req.Command, sdk.ToolKindOther
	case req.File != "":
		title, kind, raw = "Write the protected file "+req.File, sdk.ToolKindEdit, map[string]any{"path": req.File}
	}
	if req.Subagent != "" {
		title = "Subagent «" + tools.DisplayCommand(req.Subagent) + "»: " + title
	}
	always := "Always allow"
	if req.Rule != "" {
		always += ": " + req.Rule
	}
	id := sdk.ToolCallId(req.CallID)
	resp, err := a.srv.conn.RequestPermission(ctx, sdk.RequestPermissionRequest{
		SessionId: sdk.SessionId(a.sessionID),
		ToolCall:  sdk.ToolCallUpdate{ToolCallId: id, Title: sdk.Ptr(title + " (" + req.Reason + ")"), Kind: sdk.Ptr(kind), RawInput: raw},
		Options: []sdk.PermissionOption{
			{OptionId: optionAllowOnce, Name: "Allow once", Kind: sdk.PermissionOptionKindAllowOnce},
			{OptionId: optionAllowAlways, Name: always, Kind: sdk.PermissionOptionKindAllowAlways},
			{OptionId: optionReject, Name: "Reject", Kind: sdk.PermissionOptionKindRejectOnce},
		},
	})
	if ctx.Err() != nil {
		return tools.Reject, ctx.Err()
	}
	if err != nil || resp.Outcome.Selected == nil {
		return tools.Reject, nil
	}
	switch resp.Outcome.Selected.OptionId {
	case optionAllowOnce:
		return tools.AllowOnce, nil
	case optionAllowAlways:
		return tools.AlwaysAllow, nil
	}
	return tools.Reject, nil
}
