package acp

import (
	"context"
	"fmt"
	"iter"
	"path/filepath"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/runner"
)

// stops maps the agent's stop reasons to ACP's. A capped session and a failed model call end
// the turn with a message saying why, as ACP has no reason for them.
var stops = map[agent.StopReason]sdk.StopReason{
	agent.StopEndTurn:         sdk.StopReasonEndTurn,
	agent.StopCancelled:       sdk.StopReasonCancelled,
	agent.StopMaxTurnRequests: sdk.StopReasonMaxTurnRequests,
	agent.StopCapped:          sdk.StopReasonMaxTokens,
}

// Prompt runs one turn, or a slash command, and streams it as session/updates.
func (s *server) Prompt(ctx context.Context, p sdk.PromptRequest) (sdk.PromptResponse, error) {
	text := promptText(p.Prompt)
	if strings.TrimSpace(text) == "" {
		return sdk.PromptResponse{}, sdk.NewInvalidParams(map[string]any{"error": "the prompt has no text"})
	}
	l, err := s.use(ctx, p.SessionId) // reopens a session closed while idle
	if err != nil && ctx.Err() != nil {
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
	}
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	defer s.runner.Release(l)
	id := string(p.SessionId)
	// A prompt sent while another runs replaces it: the connection cancels the first, and this
	// one waits for it to end.
	t, err := s.runner.Start(ctx, l, true)
	if err != nil {
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
	}
	defer t.End()
	if name, arg, ok := slash(text); ok {
		return s.command(t.Context(), id, l, name, arg)
	}
	return sdk.PromptResponse{StopReason: s.stream(t.Context(), id, l, t.Run(text))}, nil
}

// stream sends a turn's events as session/updates and returns how the turn ended. A tool call the
// client saw start always ends: one the turn stopped without its last update (a cancel) is closed
// as failed, so that the editor does not show it running.
func (s *server) stream(ctx context.Context, id string, l *runner.Live, events iter.Seq2[agent.Event, error]) sdk.StopReason {
	stop := sdk.StopReasonEndTurn
	open := map[string]bool{} // tool calls started and not finished
	defer func() {
		for callID := range open {
			s.send(s.ctx, id, sdk.UpdateToolCall(sdk.ToolCallId(callID), sdk.WithUpdateStatus(sdk.ToolCallStatusFailed),
				sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock("cancelled"))})))
		}
	}()
	for ev, err := range events {
		if err != nil { // a model error also ends the turn with turn_end, which says it
			continue
		}
		if ev.Type == agent.EventTurnEnd {
			stop = s.turnEnd(ctx, id, ev.End)
			continue
		}
		switch ev.Type {
		case agent.EventToolCall:
			open[ev.Tool.ID] = true
		case agent.EventToolUpdate:
			if ev.Tool.Live == nil { // the final update, not a running command's output so far
				delete(open, ev.Tool.ID)
			}
		}
		s.event(ctx, id, l, ev)
		if ev.Type == agent.EventToolUpdate && ev.Tool.Diff != nil && ev.Tool.Status == agent.ToolCompleted {
			s.pushEdit(ctx, id, ev.Tool.Diff)
		}
	}
	if ctx.Err() != nil {
		stop = sdk.StopReasonCancelled
	}
	return stop
}

// turnEnd maps the turn's stop reason, and says why a turn stopped for a reason ACP has not.
func (s *server) turnEnd(ctx context.Context, id string, e *agent.TurnEnd) sdk.StopReason {
	stop, ok := stops[e.StopReason]
	if !ok {
		stop = sdk.StopReasonEndTurn
	}
	if e.StopReason != agent.StopEndTurn && e.StopReason != agent.StopCancelled {
		why := string(e.StopReason)
		if e.Err != "" {
			why += ": " + e.Err
		}
		s.send(ctx, id, sdk.UpdateAgentMessageText("\n\n[Reprise stopped: "+strings.ReplaceAll(why, "_", " ")+"]"))
	}
	return stop
}

// promptText joins a prompt's blocks: text as is, embedded files with their path, links by
// their path (the agent reads them with its tools).
func promptText(blocks []sdk.ContentBlock) string {
	var b strings.Builder
	for _, c := range blocks {
		switch {
		case c.Text != nil:
			b.WriteString(c.Text.Text)
		case c.Resource != nil && c.Resource.Resource.TextResourceContents != nil:
			r := c.Resource.Resource.TextResourceContents
			fmt.Fprintf(&b, "\n\nAttached %s:\n```\n%s\n```\n", pathOf(r.Uri), r.Text)
		case c.ResourceLink != nil:
			fmt.Fprintf(&b, " %s ", pathOf(c.ResourceLink.Uri))
		}
	}
	return b.String()
}

func pathOf(uri string) string {
	return strings.TrimPrefix(uri, "file://")
}

// absolute makes a workspace-relative path absolute, as ACP's locations are.
func absolute(ws, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(ws, filepath.FromSlash(p))
}
