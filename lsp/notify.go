package lsp

import (
	"fmt"
	"strings"
	"time"

	"go.lsp.dev/protocol"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/contextwin"
)

// turnOutput forwards one turn's events to the client: as reprise/sessionUpdate and
// reprise/contextUsage to a client that declared the experimental capability, otherwise as
// standard LSP (a $/progress meter, window/logMessage and window/showMessage), so a plain client
// such as LSP4IJ or eglot still sees the usage and the answer. Used by one goroutine.
type turnOutput struct {
	srv       *server
	sessionID string
	rich      bool
	token     *progressToken // plain clients: the turn's progress meter
	liveSecs  int64          // plain clients: the running command's seconds the meter shows, 0: none
	text      strings.Builder
	answer    string
	usage     agent.Usage // the latest
}

func (s *server) newTurnOutput(sessionID string) *turnOutput {
	return &turnOutput{srv: s, sessionID: sessionID, rich: s.client.reprise}
}

// begin opens the plain client's progress meter with the current usage; a rich client gets the
// turn's own usage event.
func (o *turnOutput) begin(u agent.Usage) {
	o.usage = u
	if !o.rich && o.srv.client.progress {
		o.token = o.srv.createProgress("Reprise", meterText(u), percentOf(u), false, nil)
	}
}

func (o *turnOutput) event(ev agent.Event) {
	if ev.Type == agent.EventWarning { // once per session: the same for every client
		o.srv.showMessage(protocol.MessageTypeWarning, "Reprise: "+ev.Text)
		o.srv.logMessage(protocol.MessageTypeWarning, "Reprise: "+ev.Text)
		return
	}
	if o.rich {
		o.richEvent(ev)
		return
	}
	o.plainEvent(ev)
}

func (o *turnOutput) update(u update) {
	o.srv.notify(MethodSessionUpdate, sessionUpdateParams{SessionID: o.sessionID, Update: u})
}

func (o *turnOutput) richEvent(ev agent.Event) {
	switch ev.Type {
	case agent.EventText, agent.EventThought:
		o.update(update{SessionUpdate: wire(updateNames, ev.Type), Content: &textContent{Type: "text", Text: ev.Text}})
	case agent.EventToolCall, agent.EventToolUpdate:
		t := ev.Tool
		u := update{SessionUpdate: wire(updateNames, ev.Type), ToolCallID: t.ID, Title: t.Title, Kind: wire(toolKindNames, t.Kind), Status: wire(toolStatusNames, t.Status)}
		switch {
		case ev.Type == agent.EventToolCall:
			u.RawInput = t.Args
		case t.Live != nil:
			u.Live = liveOutputOf(t.Live)
		default:
			u.RawOutput = &toolOutput{Output: t.Output, SavedPath: t.SavedPath, Omitted: t.Omitted, Refused: t.Refused, Verdict: verdictOf(t.Kind, t.Output)}
			u.ToolContent = toolContentOf(t.Diff)
		}
		o.update(u)
	case agent.EventCompaction:
		o.update(update{SessionUpdate: wire(updateNames, ev.Type), Compaction: compactionUpdateOf(ev.Compaction)})
	case agent.EventRetry:
		o.update(update{SessionUpdate: wire(updateNames, ev.Type), Retry: ev.Retry})
	case agent.EventUsage:
		o.srv.emitUsage(o.sessionID, *ev.Usage)
	case agent.EventPlan:
		plan := ev.Plan
		if plan == nil {
			plan = []contextwin.Todo{}
		}
		o.update(update{SessionUpdate: wire(updateNames, ev.Type), Entries: &plan})
	case agent.EventSubagent:
		o.update(update{SessionUpdate: wire(updateNames, ev.Type), ToolCallID: ev.Subagent.Call, Subagent: subagentUpdateOf(ev.Subagent)})
	case agent.EventTurnEnd:
		e := ev.End
		u := update{SessionUpdate: wire(updateNames, ev.Type), StopReason: wire(stopNames, e.StopReason), Error: e.Err, Turn: &figure{Calls: e.Calls, Totals: totalsOf(e.Totals)}}
		if len(e.Changes) > 0 {
			u.Changes = fileChangesOf(o.srv.root, e.Changes)
		}
		o.update(u)
	}
}

// plainEvent renders the turn for a client without the custom notifications.
func (o *turnOutput) plainEvent(ev agent.Event) {
	srv := o.srv
	switch ev.Type {
	case agent.EventText:
		o.text.WriteString(ev.Text)
	case agent.EventRetry:
		if ev.Retry.Discard {
			o.text.Reset()
		}
		srv.logMessage(protocol.MessageTypeWarning, fmt.Sprintf("Reprise: retrying the model call (%s)", ev.Retry.Err))
	case agent.EventModelCall:
		if t := strings.TrimSpace(o.text.String()); t != "" {
			o.answer = t
			srv.logMessage(protocol.MessageTypeInfo, "Reprise: "+t)
		}
		o.text.Reset()
	case agent.EventToolCall:
		srv.logMessage(protocol.MessageTypeLog, "Reprise → "+ev.Tool.Title)
	case agent.EventPlan:
		srv.logMessage(protocol.MessageTypeInfo, "Reprise: plan\n"+strings.TrimSuffix(contextwin.RenderPlan(ev.Plan), "\n"))
	case agent.EventSubagent:
		if line := subagentLine(ev.Subagent); line != "" {
			srv.logMessage(protocol.MessageTypeLog, "Reprise ↳ "+line)
		}
	case agent.EventToolUpdate:
		o.plainTool(ev.Tool)
	case agent.EventCompaction:
		if cp := ev.Compaction.Checkpoint; cp != nil {
			srv.logMessage(protocol.MessageTypeInfo, fmt.Sprintf("Reprise: compacted %d messages into checkpoint %d «%s» (%d → %d tokens)", cp.Replaced, cp.N, cp.Title, cp.TokensBefore, cp.TokensAfter))
		}
	case agent.EventUsage:
		o.usage = *ev.Usage
		if o.token != nil {
			o.token.report(meterText(*ev.Usage), percentOf(*ev.Usage))
		}
	case agent.EventTurnEnd:
		e := ev.End
		msg := meterTotals(e)
		if o.token != nil {
			o.token.end(msg)
		}
		switch e.StopReason {
		case agent.StopEndTurn:
			answer := o.answer
			if o.token == nil { // no progress meter in this client: the figures go with the answer
				answer = strings.TrimSpace(answer + "\n\n" + meterText(o.usage) + " · " + msg)
			}
			if answer != "" {
				srv.showMessage(protocol.MessageTypeInfo, answer)
			}
		case agent.StopError:
			srv.showMessage(protocol.MessageTypeError, "Reprise: "+e.Err)
		default:
			srv.showMessage(protocol.MessageTypeWarning, "Reprise stopped: "+wire(stopNames, e.StopReason)+" · "+msg)
		}
	}
}

// plainTool shows a running command on the plain client's meter, once a second at most (a
// message update, nothing more), and puts the meter back when it ends.
func (o *turnOutput) plainTool(t *agent.ToolEvent) {
	if t.Live != nil {
		if secs := int64(t.Live.Elapsed / time.Second); o.token != nil && secs > o.liveSecs {
			o.liveSecs = secs
			o.token.report(fmt.Sprintf("%s · %s · %d s", meterText(o.usage), t.Title, secs), percentOf(o.usage))
		}
		return
	}
	if o.liveSecs > 0 {
		o.liveSecs = 0
		o.token.report(meterText(o.usage), percentOf(o.usage))
	}
	if t.Refused {
		o.srv.logMessage(protocol.MessageTypeWarning, "Reprise: refused: "+t.Title)
	}
}

// emitUsage sends reprise/contextUsage to a client that takes it.
func (s *server) emitUsage(sessionID string, u agent.Usage) {
	if !s.client.reprise {
		return
	}
	s.notify(MethodContextUsage, usageParams(sessionID, u))
}

func usageParams(sessionID string, u agent.Usage) contextUsageParams {
	var hits *contextwin.CacheHits
	if h, ok := u.Totals.Cache(); ok {
		hits = &h
	}
	return contextUsageParams{
		SessionID:  sessionID,
		Used:       u.Used,
		Size:       u.Size,
		Percent:    u.Percent,
		Source:     wire(sourceNames, u.Source),
		Breakdown:  u.Breakdown,
		Totals:     totalsUnknown(u.Totals, u.CostUnknown, u.Local),
		Cache:      hits,
		Compaction: compactionState{State: wire(compactionNames, u.Compaction), Count: u.Compactions, Decision: u.Decision},
		CompactAt:  u.CompactAt,
		BlockAt:    u.BlockAt,
	}
}

func (s *server) logMessage(typ protocol.MessageType, msg string) {
	s.notify("window/logMessage", protocol.LogMessageParams{Type: typ, Message: msg})
}

// meterText is the plain client's progress message: "Context 42% · 10.1k/24k".
func meterText(u agent.Usage) string {
	return fmt.Sprintf("Context %.0f%% · %s/%s", u.Percent, contextwin.Kilo(u.Used), contextwin.Kilo(u.Size))
}

func meterTotals(e *agent.TurnEnd) string {
	text := fmt.Sprintf("%s · %d calls · %s input tokens (%s cached) · %s output · %s", wire(stopNames, e.StopReason), e.Calls, contextwin.Kilo(e.Totals.InputTokens), contextwin.Kilo(e.Totals.CachedTokens), contextwin.Kilo(e.Totals.OutputTokens), e.Totals.CostText())
	if c := e.Totals.CacheText(); c != "" {
		text += " · " + c
	}
	return text
}

func percentOf(u agent.Usage) uint32 {
	return uint32(min(max(u.Percent, 0), 100))
}

// subagentLine is a subagent's start or end in one line, for a plain client's log; "" for the
// progress between.
func subagentLine(e *agent.SubagentEvent) string {
	switch {
	case e.Status == "running" && e.Calls == 0 && e.Tool == "":
		return fmt.Sprintf("subagent «%s» started on %s", e.Description, e.Model)
	case e.Status != "running":
		return fmt.Sprintf("subagent «%s» %s · %d model calls · %s", e.Description, e.Status, e.Calls, e.Totals.CostText())
	}
	return ""
}
