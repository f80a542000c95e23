package acp

import (
	"context"
	"fmt"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/mcp"
	"github.com/reprise-dev/reprise/agent/runner"
	"github.com/reprise-dev/reprise/agent/tools"
)

// timeNow is time.Now; tests pin it.
var timeNow = time.Now

// send sends one session/update; a client gone is not the turn's failure. A cancelled prompt
// still sends its last updates (the tools it stopped), so the request's cancellation is not
// the notification's. The update of a session the client does not know yet waits in the wire
// for the response that names it.
func (s *server) send(ctx context.Context, id string, u sdk.SessionUpdate) {
	n := sdk.SessionNotification{SessionId: sdk.SessionId(id), Update: u}
	if s.wire.hold(n) {
		return
	}
	if err := s.conn.SessionUpdate(context.WithoutCancel(ctx), n); err != nil {
		s.log.Debug("session/update not sent", "session", id, "error", err)
	}
}

// usage is the usage_update of a session's window and cost. A cost that is not known (a call to
// a model without a known price) is left out, as ACP's optional field allows, rather than sent
// as a lower bound a client would show as the cost. The implicit-cache hit rate rides in
// _meta.reprise.cache ({expected, reported, hitRate}). A local model's calls cost their time, not
// $0: the cost is left out and the time rides in _meta.reprise.local ({millis, text}).
func usage(u agent.Usage) sdk.SessionUpdate {
	up := &sdk.SessionUsageUpdate{SessionUpdate: "usage_update", Used: u.Used, Size: u.Size}
	local := u.Local || u.Totals.Local > 0
	if u.Totals.CostKnown() && !u.CostUnknown && !local {
		up.Cost = &sdk.Cost{Amount: u.Totals.Cost, Currency: "USD"}
	}
	// ACP has no field for cache hits or time: they go under _meta, which clients may ignore.
	meta := map[string]any{}
	if h, ok := u.Totals.Cache(); ok {
		meta["cache"] = h
	}
	if local {
		meta["local"] = map[string]any{"millis": u.Totals.Time.Millis, "text": u.Totals.CostWords(u.CostUnknown, u.Local)}
	}
	if len(meta) > 0 {
		up.Meta = map[string]any{"reprise": meta}
	}
	return sdk.SessionUpdate{UsageUpdate: up}
}

// afterSetup follows session/new and session/load: the sandbox notice, the slash commands and
// the MCP servers that did not start (the runner tells the usage). Those of a new session wait in the wire for the
// response that names it; those of a loaded session go before its response, as its replay does.
func (s *server) afterSetup(id string, l *runner.Live) {
	if notice := sandboxNotice(l.Sandbox); notice != "" {
		s.sandboxNotice.Do(func() { s.send(s.ctx, id, sdk.UpdateAgentMessageText("[Reprise: "+notice+"]\n")) })
	}
	s.send(s.ctx, id, sdk.SessionUpdate{AvailableCommandsUpdate: &sdk.SessionAvailableCommandsUpdate{
		SessionUpdate:     "available_commands_update",
		AvailableCommands: availableCommands(),
	}})
	if l.External == nil {
		return
	}
	for _, st := range l.External.Servers() {
		if st.State == mcp.StateFailed {
			s.send(s.ctx, id, sdk.UpdateAgentMessageText(fmt.Sprintf("[MCP server %q did not start: %s]\n", st.Name, st.Error)))
		}
	}
}

var kinds = map[tools.Kind]sdk.ToolKind{
	tools.KindRead: sdk.ToolKindRead, tools.KindEdit: sdk.ToolKindEdit, tools.KindSearch: sdk.ToolKindSearch,
	tools.KindExecute: sdk.ToolKindExecute, tools.KindOther: sdk.ToolKindOther,
	tools.KindThink: sdk.ToolKindThink,
}

func kindOf(k tools.Kind) sdk.ToolKind {
	if v, ok := kinds[k]; ok {
		return v
	}
	return sdk.ToolKindOther
}

var statuses = map[agent.ToolStatus]sdk.ToolCallStatus{
	agent.ToolInProgress: sdk.ToolCallStatusInProgress, agent.ToolCompleted: sdk.ToolCallStatusCompleted, agent.ToolFailed: sdk.ToolCallStatusFailed,
}

// locations are the files a tool works on, for the editor to follow the agent.
func locations(ws string, t *agent.ToolEvent) []sdk.ToolCallLocation {
	if t.Diff != nil && t.Diff.Path != "" {
		return []sdk.ToolCallLocation{{Path: t.Diff.Path}}
	}
	if p, ok := t.Args["path"].(string); ok && p != "" {
		return []sdk.ToolCallLocation{{Path: absolute(ws, p)}}
	}
	return nil
}

// toolContent is what a finished tool shows: an edit's diff, else the output the model got.
func toolContent(t *agent.ToolEvent) []sdk.ToolCallContent {
	switch {
	case t.Diff != nil && t.Diff.Note == "":
		if t.Diff.OldText != nil {
			return []sdk.ToolCallContent{sdk.ToolDiffContent(t.Diff.Path, t.Diff.NewText, *t.Diff.OldText)}
		}
		return []sdk.ToolCallContent{sdk.ToolDiffContent(t.Diff.Path, t.Diff.NewText)}
	case t.Diff != nil:
		return []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(t.Diff.Note))}
	case t.Output != "":
		return []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(t.Output))}
	}
	return nil
}

// event turns one agent event into session/updates.
func (s *server) event(ctx context.Context, id string, l *runner.Live, ev agent.Event) {
	switch ev.Type {
	case agent.EventText:
		s.send(ctx, id, sdk.UpdateAgentMessageText(ev.Text))
	case agent.EventThought:
		s.send(ctx, id, sdk.UpdateAgentThoughtText(ev.Text))
	case agent.EventToolCall:
		t := ev.Tool
		s.send(ctx, id, sdk.StartToolCall(sdk.ToolCallId(t.ID), t.Title, sdk.WithStartKind(kindOf(t.Kind)),
			sdk.WithStartStatus(sdk.ToolCallStatusInProgress), sdk.WithStartRawInput(t.Args), sdk.WithStartLocations(locations(l.Workspace, t))))
	case agent.EventToolUpdate:
		t := ev.Tool
		if t.Live != nil {
			s.send(ctx, id, liveUpdate(t))
			return
		}
		out := map[string]any{"output": t.Output}
		if t.SavedPath != "" {
			out["savedPath"] = t.SavedPath
		}
		if t.Refused {
			out["refused"] = true
		}
		opts := []sdk.ToolCallUpdateOpt{sdk.WithUpdateStatus(statuses[t.Status]), sdk.WithUpdateRawOutput(out)}
		if c := toolContent(t); c != nil {
			opts = append(opts, sdk.WithUpdateContent(c))
		}
		if loc := locations(l.Workspace, t); loc != nil {
			opts = append(opts, sdk.WithUpdateLocations(loc))
		}
		s.send(ctx, id, sdk.UpdateToolCall(sdk.ToolCallId(t.ID), opts...))
	case agent.EventCompaction:
		s.compactionUpdate(ctx, id, ev.Compaction)
	case agent.EventUsage:
		s.send(ctx, id, usage(*ev.Usage))
	case agent.EventPlan:
		s.send(ctx, id, sdk.UpdatePlan(planEntries(ev.Plan)...))
	case agent.EventSubagent:
		s.send(ctx, id, subagentUpdate(ev.Subagent))
	case agent.EventPins:
		s.notifyPins(ctx, id, ev.Pins)
	case agent.EventWarning:
		s.send(ctx, id, sdk.UpdateAgentMessageText("[Reprise: warning: "+ev.Text+"]\n"))
	case agent.EventRetry:
		r := ev.Retry
		s.send(ctx, id, sdk.UpdateAgentThoughtText(fmt.Sprintf("\n[the model call failed (%s); trying again, attempt %d]\n", r.Err, r.Attempt)))
	}
}

// liveUpdate is a running command's output so far: in progress, its content the output's end,
// which the final update's content replaces (ACP's content is replaced, not appended to). The
// elapsed time and size go in _meta, for a client that wants them.
func liveUpdate(t *agent.ToolEvent) sdk.SessionUpdate {
	l := t.Live
	meta := func(u *sdk.SessionToolCallUpdate) {
		u.Meta = map[string]any{"reprise": map[string]any{"elapsedMs": l.Elapsed.Milliseconds(), "bytes": l.Bytes}}
	}
	opts := []sdk.ToolCallUpdateOpt{sdk.WithUpdateStatus(sdk.ToolCallStatusInProgress), meta}
	if l.Tail != "" {
		opts = append(opts, sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(l.Tail))}))
	}
	return sdk.UpdateToolCall(sdk.ToolCallId(t.ID), opts...)
}

// verbEvents renders the events of a verb (agent/runner) as a turn's: a compaction as its own
// tool call, the usage, the pins (the _reprise/pinsUpdate notification).
func (s *server) verbEvents(ctx context.Context, id string) func(agent.Event) {
	return func(ev agent.Event) {
		switch ev.Type {
		case agent.EventCompaction:
			s.compactionUpdate(ctx, id, ev.Compaction)
		case agent.EventUsage:
			s.send(ctx, id, usage(*ev.Usage))
		case agent.EventPins:
			s.notifyPins(ctx, id, ev.Pins)
		case agent.EventWarning:
			// Between turns ACP has no place for a notice: a message chunk would join the last
			// reply. The log has it; the next turn's own warnings are shown in its reply.
			s.log.Warn("session warning", "session", id, "warning", ev.Text)
		}
	}
}

// compactionUpdate shows a compaction as a tool call of its own: in progress, then done with
// its checkpoint.
func (s *server) compactionUpdate(ctx context.Context, id string, c *agent.CompactionEvent) {
	callID := sdk.ToolCallId(fmt.Sprintf("compaction-%s", c.Trigger))
	switch c.State {
	case agent.CompactionRunning, agent.CompactionBlocking:
		title := "Compacting the context"
		if c.State == agent.CompactionBlocking {
			title += " (the agent waits)"
		}
		s.send(ctx, id, sdk.StartToolCall(callID, title, sdk.WithStartKind(sdk.ToolKindOther), sdk.WithStartStatus(sdk.ToolCallStatusInProgress)))
	case agent.CompactionDone:
		text := "Context compacted"
		if cp := c.Checkpoint; cp != nil {
			text = fmt.Sprintf("Context compacted: %d messages into checkpoint %d «%s», %d → %d tokens", cp.Replaced, cp.N, cp.Title, cp.TokensBefore, cp.TokensAfter)
		}
		s.send(ctx, id, sdk.UpdateToolCall(callID, sdk.WithUpdateStatus(sdk.ToolCallStatusCompleted), sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(text))})))
		// The summary's remaining work is the plan the agent continues from, unless it keeps one
		// of its own (write_todos), which the compaction leaves as it was.
		if l := s.runner.Lookup(id); c.Checkpoint != nil && (l == nil || len(l.Memo().Plan()) == 0) {
			if entries := planOf(c.Checkpoint.Summary); len(entries) > 0 {
				s.send(ctx, id, sdk.UpdatePlan(entries...))
			}
		}
	default:
		note := string(c.State)
		if c.Note != "" {
			note += ": " + c.Note
		}
		s.send(ctx, id, sdk.UpdateToolCall(callID, sdk.WithUpdateStatus(sdk.ToolCallStatusFailed), sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock("Compaction " + note))})))
	}
}

// replay sends a loaded session's conversation as the updates it was made of.
func (s *server) replay(ctx context.Context, id string, entries []agent.TranscriptEntry) {
	for _, e := range entries {
		switch e.Kind {
		case agent.EntryUser:
			s.send(ctx, id, sdk.UpdateUserMessageText(e.Text))
		case agent.EntryAgent:
			s.send(ctx, id, sdk.UpdateAgentMessageText(e.Text))
		case agent.EntryThought:
			s.send(ctx, id, sdk.UpdateAgentThoughtText(e.Text))
		case agent.EntryTool:
			st := statuses[e.Status]
			if st == "" {
				st = sdk.ToolCallStatusCompleted
			}
			// As the live call ended: an edit's diff, else the output the model got.
			content := toolContent(&agent.ToolEvent{Output: e.Output, Diff: e.Diff})
			if content == nil {
				content = []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(e.Output))}
			}
			s.send(ctx, id, sdk.StartToolCall(sdk.ToolCallId(e.ToolCallID), e.Title, sdk.WithStartKind(kindOf(e.ToolKind)), sdk.WithStartStatus(st),
				sdk.WithStartContent(content)))
		case agent.EntryCompaction:
			s.send(ctx, id, sdk.UpdateAgentMessageText(fmt.Sprintf("\n[context compacted: checkpoint %d «%s»]\n", e.Checkpoint, e.Title)))
		}
	}
}
