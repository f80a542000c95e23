package agent

import (
	"context"
	"encoding/hex"
	"fmt"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/agent/tools"
	"github.com/reprise-dev/reprise/contextwin"
)

// runTools runs the model's calls in order and appends their responses as one message, so every
// call has its response even when the turn is cancelled halfway. The task calls start first,
// together (Subagents.start), and are waited for in their turn.
func (s *Session) runTools(ctx context.Context, em *emitter, fcs []*genai.FunctionCall) {
	parts := make([]*genai.Part, 0, len(fcs))
	ids := make([]string, len(fcs))
	for i, fc := range fcs {
		ids[i] = fc.ID
		if ids[i] == "" {
			ids[i] = fmt.Sprintf("call-%d-%d", s.bill.callCount(), i+1)
		}
	}
	tasks := s.subagents.start(ctx, em, fcs, ids)
	for i, fc := range fcs {
		id := ids[i]
		if run := tasks[i]; run != nil {
			done, res := s.subagents.await(em, fc, run)
			s.conv.noteTool(done, nil)
			em.send(Event{Type: EventToolUpdate, Tool: done})
			parts = append(parts, responsePart(fc, res.Output, res.IsError))
			continue
		}
		title, kind := s.settings.toolsEnv().Describe(tools.Call{ID: id, Name: fc.Name, Args: fc.Args})
		ev := &ToolEvent{ID: id, Name: fc.Name, Title: s.opts.Secrets.String(title), Kind: kind, Status: ToolInProgress, Args: s.opts.Secrets.Map(fc.Args)}
		if ctx.Err() != nil || em.stopped {
			parts = append(parts, responsePart(fc, "cancelled by the user before it ran", true))
			continue
		}
		em.send(Event{Type: EventToolCall, Tool: ev})
		// A copy taken now: SetPolicy and SetSandbox may change the Env mid-turn.
		env := s.settings.toolsEnv()
		res := runWatched(ctx, em, env, tools.Call{ID: id, Name: fc.Name, Args: fc.Args}, ev)
		s.noteResult(fc, res)
		if len(res.Changed) > 0 {
			hashes := map[string]string{}
			for _, rel := range res.Changed {
				s.files.saw(rel)
				if h, ok := s.opts.fileHash(rel); ok {
					hashes[rel] = hex.EncodeToString([]byte(h))
				}
			}
			s.opts.journal(journal.Record{Kind: journal.KindWrote, Hashes: hashes})
			s.opts.sync() // a crash now must not lose the record of a change on disk
		}
		if fc.Name == "read_file" && !res.IsError && res.Path != "" {
			s.files.saw(res.Path)
		}
		done := *ev
		done.Status, done.Output, done.SavedPath, done.Omitted, done.Refused = ToolCompleted, res.Output, res.SavedPath, res.Omitted, res.Refused
		if res.IsError {
			done.Status = ToolFailed
		} else if res.Edit != nil {
			done.Diff = s.opts.diffOf(res.Edit)
		}
		s.conv.noteTool(&done, res.Edit)
		em.send(Event{Type: EventToolUpdate, Tool: &done})
		if fc.Name == "write_todos" && !res.IsError {
			em.send(Event{Type: EventPlan, Plan: s.memo.Plan()})
		}
		parts = append(parts, responsePart(fc, res.Output, res.IsError))
	}
	s.conv.mu.Lock()
	s.appendLocked(&genai.Content{Role: genai.RoleUser, Parts: parts})
	s.conv.mu.Unlock()
}

// noteTool saves what a call showed the user beyond its response (a saved output, a refusal, an
// edit's diff), in the journal and the transcript, for a reopened chat to show it too.
func (c *Conversation) noteTool(t *ToolEvent, e *tools.Edit) {
	if t.SavedPath == "" && t.Omitted == 0 && !t.Refused && t.Diff == nil {
		return
	}
	rec := &journal.Tool{Call: t.ID, SavedPath: t.SavedPath, Omitted: t.Omitted, Refused: t.Refused}
	if t.Diff != nil && e != nil {
		rec.Edit = c.opts.keepEdit(e.Path, t.Diff)
	}
	c.mu.Lock()
	c.transcript = append(c.transcript, journal.Entry{Tool: rec, Turn: c.turns})
	c.opts.journal(journal.Record{Kind: journal.KindTool, Tool: rec})
	c.mu.Unlock()
}

// responsePart answers a call with the same id and name.
func responsePart(fc *genai.FunctionCall, out string, isErr bool) *genai.Part {
	key := "output"
	if isErr {
		key = "error"
	}
	return &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: fc.ID, Name: fc.Name, Response: map[string]any{key: out}}}
}

// noteResult updates what the harness holds from a tool result: the last test verdict, and
// re-reads of a file already read before a compaction (a sign the summary lost something).
func (s *Session) noteResult(fc *genai.FunctionCall, res tools.Result) {
	switch fc.Name {
	case "run_command":
		if v, ok := contextwin.ExtractVerdict(res.Output); ok {
			s.files.setVerdict(v)
			s.opts.journal(journal.Record{Kind: journal.KindVerdict, Verdict: v})
		}
	case "read_file":
		if res.Path == "" || res.IsError {
			return
		}
		s.files.noteRead(res.Path, s.conv.compactions())
	}
}

// appendLocked appends c to the history, its ledger, the transcript and the journal. s.conv.mu
// must be held.
func (s *Session) appendLocked(c *genai.Content) {
	c = s.opts.Secrets.Content(c) // the same message when it holds no secret
	cv := &s.conv
	cv.history = append(cv.history, c)
	cv.ledger.Append(c)
	cv.transcript = append(cv.transcript, journal.Entry{Content: c, Turn: cv.turns, Calls: s.bill.callCount()})
	s.opts.journal(appendRecord(c))
}
