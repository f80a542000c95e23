package lsptest

import (
	"context"
	"encoding/json"
	"fmt"
)

// Reprise's names (lsp/PROTOCOL.md). They mirror the server's constants rather than import them,
// so this package stays a plain LSP client; lsp's TestLSPTestNames holds each to the constant of
// the same name in lsp/protocol.go.
const (
	methodSessionUpdate    = "reprise/sessionUpdate"
	methodContextUsage     = "reprise/contextUsage"
	updateTurnEnd          = "turn_end"
	experimentalCapability = "reprise"
)

// AwaitTurnEnd returns the params of the next reprise/sessionUpdate whose update is turn_end for
// sessionID. Each call consumes one turn_end (already received or still to come), so a test that
// runs several turns awaits each end with its own call and never gets an earlier turn's end.
// Calls for the same session are meant to be sequential.
func (e *Editor) AwaitTurnEnd(ctx context.Context, sessionID string) (json.RawMessage, error) {
	e.turnMu.Lock()
	skip := e.turnsSeen[sessionID]
	e.turnMu.Unlock()

	params, err := e.AwaitNotification(ctx, methodSessionUpdate, func(params json.RawMessage) bool {
		var p struct {
			SessionID string `json:"sessionId"`
			Update    struct {
				SessionUpdate string `json:"sessionUpdate"`
			} `json:"update"`
		}
		if json.Unmarshal(params, &p) != nil || p.SessionID != sessionID || p.Update.SessionUpdate != updateTurnEnd {
			return false
		}
		if skip > 0 {
			skip--
			return false
		}
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("turn end of session %s: %w", sessionID, err)
	}
	e.turnMu.Lock()
	e.turnsSeen[sessionID]++
	e.turnMu.Unlock()
	return params, nil
}

// LastUsage returns the latest reprise/contextUsage received for sessionID, which is the one an
// editor's status bar would show.
func (e *Editor) LastUsage(sessionID string) (json.RawMessage, bool) {
	usages := e.Notifications(methodContextUsage)
	for i := len(usages) - 1; i >= 0; i-- {
		var p struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(usages[i], &p) == nil && p.SessionID == sessionID {
			return usages[i], true
		}
	}
	return nil, false
}
