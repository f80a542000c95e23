package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// MethodCancelSubagent stops one subagent of a session's running prompt, as LSP's
// reprise.cancelSubagent: {sessionId, subagentId} → {cancelled}. Its task call answers that the
// user stopped it, and the prompt goes on; session/cancel stops them all with the prompt.
const MethodCancelSubagent = "_reprise/cancelSubagent"

// subagentUpdate shows a subagent's progress in the content of its task call: ACP replaces a
// tool call's content with each update, so the latest line stands, and the final update (the
// task call's own, with the report) replaces it. Its id, for _reprise/cancelSubagent, and its
// figures ride in _meta.reprise.subagent.
func subagentUpdate(e *agent.SubagentEvent) sdk.SessionUpdate {
	meta := func(u *sdk.SessionToolCallUpdate) {
		u.Meta = map[string]any{"reprise": map[string]any{"subagent": map[string]any{
			"subagentId": e.ID, "status": e.Status, "model": e.Model, "calls": e.Calls,
			"inputTokens": e.Totals.InputTokens, "cachedTokens": e.Totals.CachedTokens, "cost": e.Totals.CostText(),
		}}}
	}
	opts := []sdk.ToolCallUpdateOpt{meta, sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(subagentStatus(e)))})}
	if e.Status == journal.SubagentRunning {
		opts = append(opts, sdk.WithUpdateStatus(sdk.ToolCallStatusInProgress))
	}
	return sdk.UpdateToolCall(sdk.ToolCallId(e.Call), opts...)
}

// subagentStatus is a subagent's progress in one line: "Subagent on gemini-3.5-flash-lite · 3
// model calls · 5.2k input (1.2k cached) · $0.0012 · → Read auth/login.go".
func subagentStatus(e *agent.SubagentEvent) string {
	parts := []string{fmt.Sprintf("Subagent %s on %s", e.Status, e.Model), fmt.Sprintf("%d model calls", e.Calls)}
	if e.Calls > 0 {
		parts = append(parts, fmt.Sprintf("%s input (%s cached)", catalog.Commas(e.Totals.InputTokens), catalog.Commas(e.Totals.CachedTokens)), e.Totals.CostText())
	}
	if e.Tool != "" {
		parts = append(parts, "→ "+e.Tool)
	}
	return strings.Join(parts, " · ")
}

type cancelSubagentParams struct {
	SessionID  string `json:"sessionId"`
	SubagentID string `json:"subagentId"`
}

// cancelSubagent answers _reprise/cancelSubagent.
func (s *server) cancelSubagent(ctx context.Context, raw json.RawMessage) (any, error) {
	var p cancelSubagentParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, invalid("%s: %v", MethodCancelSubagent, err)
	}
	if p.SessionID == "" || p.SubagentID == "" {
		return nil, invalid("%s: sessionId and subagentId are required", MethodCancelSubagent)
	}
	l, err := s.use(ctx, sdk.SessionId(p.SessionID))
	if err != nil {
		return nil, err
	}
	defer s.runner.Release(l)
	return map[string]bool{"cancelled": l.Subagents().Cancel(p.SubagentID)}, nil
}
