package journal

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"time"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/contextwin"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// Snapshot is a session rebuilt from its log: the live (compacted) history exactly as it was last
// sent, and everything the harness held.
type Snapshot struct {
	Meta          Meta
	Title         string
	History       []*genai.Content
	Task          string
	Blocks        []contextwin.SummaryBlock // the head's summaries
	Checkpoints   []contextwin.Checkpoint
	Undo          []UndoFrame
	Totals        contextwin.Totals
	Calls, Turns  int
	LastPrompt    int
	AnchorLen     int // history length the last prompt count covered, -1 if none since a rewrite
	Verdict       string
	RestorePoints []RestorePoint
	Policy        *contextwin.Policy
	LastActivity  time.Time
	Interrupted   bool // the log ends in the middle of a turn
	// Closed is the message Replay added to answer calls a crash left without responses.
	Closed *genai.Content
	// Unanswered is what the log says of the files around those calls, for Resume to tell the
	// model which of them may have run; nil when Closed is.
	Unanswered *Unanswered
	// Wrote maps each file the agent changed to the hash of the content it left there.
	Wrote map[string]string
	// Caches are the explicit caches the log created and did not delete, by name, with when each
	// expires as far as it knows: a crash may have left them billing storage.
	Caches   map[string]time.Time
	Warnings []string
	// Pins are the items pinned and not unpinned, in the order they were pinned; PinSeq is the
	// number of the last pin made, so that ids are not reused after an unpin.
	Pins   []contextwin.Pin
	PinSeq int
	// Plan and Notes are what the agent kept besides the conversation (write_todos, save_note),
	// as its last records left them.
	Plan  []contextwin.Todo
	Notes []contextwin.Note
	// Subagents are the subagents the session ran, in the order they started, each as its last
	// record left it (running: a crash ended it).
	Subagents []Subagent
	// Transcript is the whole conversation as it happened, compacted parts included, for an
	// editor to show a resumed session.
	Transcript []Entry
}

// Entry is one step of the transcript: a message appended to the history, a compaction, what a
// tool call showed, the end of a turn with the files it changed, or what became of those files.
// Exactly one of the pointers is set.
type Entry struct {
	Content    *genai.Content
	Checkpoint *contextwin.Checkpoint
	Tool       *Tool
	End        *TurnEnd
	Review     *Review
	Restored   *Restored
	Subagent   *Subagent // a subagent started or ended
	Turn       int
	// Calls is how many model calls were made when Content was appended: a call without an id
	// was shown to the editor as "call-<Calls>-<n>".
	Calls int
}

// TurnEnd is the end of a turn as the editor was told.
type TurnEnd struct {
	StopReason string
	Error      string
	Calls      int // model calls since the session began
	Changes    []ChangedFile
}

// Unanswered is what the log knew of the files when a crash left a model message's calls without
// responses. Each call's file change leaves, in order, a restore point (before the write), the
// write itself, then a wrote record: a kill between two of them leaves the log behind the disk.
type Unanswered struct {
	// Calls are the calls left without responses, in the message's order.
	Calls []*genai.FunctionCall
	// Before maps the files the agent had written before the calls were asked to the hash of
	// what it left there, as Wrote does.
	Before map[string]string
	// Points are the restore points recorded since the calls were asked: a call began changing
	// each of these files.
	Points []RestorePoint
	// Since maps the files written since, and recorded, to their hashes: a call changed them.
	Since map[string]string
}

// UndoFrame is what undoing a compaction needs: the history before it, and the length of the
// history right after it (what was appended since is kept).
type UndoFrame struct {
	Before   []*genai.Content
	AfterLen int
	Blocks   []contextwin.SummaryBlock
}

// Replay rebuilds a session from its records. It is pure: the agent and `reprise sessions` share it.
func Replay(recs []Record) *Snapshot {
	p := replayer{s: &Snapshot{AnchorLen: -1, Wrote: map[string]string{}, Caches: map[string]time.Time{}}}
	for _, r := range recs {
		if !r.Time.IsZero() {
			p.s.LastActivity = r.Time
		}
		p.apply(r)
	}
	s := p.s
	s.Interrupted = p.inTurn
	if closed := closeDanglingCalls(s.History); len(closed) > len(s.History) {
		s.Closed = closed[len(closed)-1]
		s.History = closed
		s.Unanswered = p.open
	}
	return s
}

// replayer is Replay's state between records.
type replayer struct {
	s      *Snapshot
	inTurn bool
	open   *Unanswered // the last model message's calls while they have no responses
}

// apply replays one record.
func (p *replayer) apply(r Record) {
	s := p.s
	switch r.Kind {
	case KindMeta:
		if r.Meta != nil {
			s.Meta = *r.Meta
		}
	case KindTurnStart:
		s.Turns = max(s.Turns, r.Turn)
		s.Title = cmp.Or(s.Title, r.Text)
		s.Task = cmp.Or(s.Task, r.Text)
		p.inTurn = true
	case KindTurnEnd:
		p.inTurn = false
		s.Transcript = append(s.Transcript, Entry{End: &TurnEnd{StopReason: r.StopReason, Error: r.Error, Calls: s.Calls, Changes: r.Changes}, Turn: s.Turns})
	case KindTool:
		if r.Tool != nil {
			s.Transcript = append(s.Transcript, Entry{Tool: r.Tool, Turn: s.Turns})
		}
	case KindReview:
		if r.Review != nil {
			s.Transcript = append(s.Transcript, Entry{Review: r.Review, Turn: s.Turns})
		}
	case KindAppend, KindAmend:
		p.message(r)
	case KindUsage, KindSummaryUsage:
		p.usage(r)
	case KindCompaction, KindUndo:
		p.compaction(r)
	case KindVerdict:
		s.Verdict = r.Verdict
	case KindRestorePoint, KindRestore, KindWrote:
		p.files(r)
	case KindSettings:
		s.Policy = r.Policy
	case KindCache:
		p.cache(r)
	case KindPin, KindUnpin:
		p.pin(r)
	case KindPlan:
		s.Plan = r.Todos
	case KindNote:
		if r.Note != nil {
			s.Notes, _ = contextwin.SaveNote(s.Notes, *r.Note)
		}
	case KindSubagent, KindSubagentUsage:
		p.subagent(r)
	}
}

// subagent replays a subagent's start or end, or one of its calls billed with the session.
func (p *replayer) subagent(r Record) {
	s := p.s
	Bill(&s.Totals, r)
	sa := r.Subagent
	if r.Kind != KindSubagent || sa == nil {
		return
	}
	s.Transcript = append(s.Transcript, Entry{Subagent: sa, Turn: s.Turns})
	for i := range s.Subagents {
		if s.Subagents[i].ID == sa.ID {
			s.Subagents[i] = *sa
			return
		}
	}
	s.Subagents = append(s.Subagents, *sa)
}

// pin replays a pin (a new one, or a known one read again) or an unpin.
func (p *replayer) pin(r Record) {
	s := p.s
	if r.Kind == KindUnpin {
		s.Pins = slices.DeleteFunc(s.Pins, func(x contextwin.Pin) bool { return x.ID == r.Text })
		return
	}
	if r.Pin == nil {
		return
	}
	if i := slices.IndexFunc(s.Pins, func(x contextwin.Pin) bool { return x.ID == r.Pin.ID }); i >= 0 {
		s.Pins[i] = *r.Pin
		return
	}
	s.Pins = append(s.Pins, *r.Pin)
	var n int
	if _, err := fmt.Sscanf(r.Pin.ID, "p%d", &n); err == nil {
		s.PinSeq = max(s.PinSeq, n)
	}
}

// cache replays what an explicit cache cost, as it was billed when it happened.
func (p *replayer) cache(r Record) {
	c := r.Cache
	if c == nil {
		return
	}
	s := p.s
	switch c.Op {
	case CacheCreated, CacheExtended:
		s.Caches[c.Name] = c.Until
		Bill(&s.Totals, r)
	case CacheDeleted:
		delete(s.Caches, c.Name)
	}
}

// message replays a message appended to the history, or one amended in place.
func (p *replayer) message(r Record) {
	s := p.s
	if r.Content == nil {
		return
	}
	if r.Kind == KindAmend {
		if r.Index >= 0 && r.Index < len(s.History) {
			s.History[r.Index] = r.Content
		}
		return
	}
	s.History = append(s.History, r.Content)
	s.Transcript = append(s.Transcript, Entry{Content: r.Content, Turn: s.Turns, Calls: s.Calls})
	p.open = nil
	if calls := FunctionCalls(r.Content); r.Content.Role == genai.RoleModel && len(calls) > 0 {
		p.open = &Unanswered{Calls: calls, Before: maps.Clone(s.Wrote), Since: map[string]string{}}
	}
}

// usage replays what a call was billed: a model call's, or a summary's.
func (p *replayer) usage(r Record) {
	s := p.s
	if r.Usage == nil {
		return
	}
	Bill(&s.Totals, r)
	if r.Kind == KindUsage {
		s.Calls++
		s.LastPrompt = r.Usage.Prompt
		s.AnchorLen = len(s.History)
	}
}

// compaction replays a compaction, or its undoing.
func (p *replayer) compaction(r Record) {
	s := p.s
	if r.Kind == KindUndo {
		if len(s.Undo) == 0 {
			return
		}
		f := s.Undo[len(s.Undo)-1]
		s.Undo = s.Undo[:len(s.Undo)-1]
		s.History = UndoHistory(f, s.History)
		s.Blocks = f.Blocks
		s.AnchorLen = -1
		return
	}
	c := r.Compaction
	if c != nil && len(c.Cleared) > 0 {
		p.clearing(c)
		return
	}
	if c == nil || c.Head == nil || c.Split < 1 || c.Split > len(s.History) {
		s.Warnings = append(s.Warnings, "a compaction record does not fit the history; ignored")
		return
	}
	s.Undo = append(s.Undo, UndoFrame{Before: s.History, Blocks: s.Blocks})
	s.History = Compact(s.History, c.Head, c.Split)
	s.Undo[len(s.Undo)-1].AfterLen = len(s.History)
	s.Blocks = c.SummaryBlocks()
	s.Checkpoints = append(s.Checkpoints, c.Checkpoint)
	cp := c.Checkpoint
	s.Transcript = append(s.Transcript, Entry{Checkpoint: &cp, Turn: s.Turns})
	s.AnchorLen = -1
}

// clearing replays a clearing of old tool results: the messages it rewrote replace theirs.
func (p *replayer) clearing(c *Compaction) {
	s := p.s
	for i := range c.Cleared {
		if i < 1 || i >= len(s.History) || c.Cleared[i] == nil {
			s.Warnings = append(s.Warnings, "a clearing record does not fit the history; ignored")
			return
		}
	}
	s.Undo = append(s.Undo, UndoFrame{Before: s.History, Blocks: s.Blocks, AfterLen: len(s.History)})
	s.History = Clear(s.History, c.Cleared)
	s.Checkpoints = append(s.Checkpoints, c.Checkpoint)
	cp := c.Checkpoint
	s.Transcript = append(s.Transcript, Entry{Checkpoint: &cp, Turn: s.Turns})
	s.AnchorLen = -1
}

// Clear returns history with the messages of cleared in place of theirs; history is not changed.
func Clear(history []*genai.Content, cleared map[int]*genai.Content) []*genai.Content {
	out := append([]*genai.Content(nil), history...)
	for i, m := range cleared {
		out[i] = m
	}
	return out
}

// files replays what the session did to files: restore points, restores, and what it wrote.
func (p *replayer) files(r Record) {
	s := p.s
	switch r.Kind {
	case KindRestorePoint:
		if r.RestorePoint != nil {
			s.RestorePoints = append(s.RestorePoints, *r.RestorePoint)
			if p.open != nil {
				p.open.Points = append(p.open.Points, *r.RestorePoint)
			}
		}
	case KindRestore:
		if r.Restored != nil {
			s.Transcript = append(s.Transcript, Entry{Restored: r.Restored, Turn: s.Turns})
			s.RestorePoints = slices.DeleteFunc(s.RestorePoints, func(rp RestorePoint) bool {
				return rp.Turn >= r.Restored.Turn && slices.Contains(r.Restored.Paths, rp.Path)
			})
		}
	case KindWrote:
		for path, h := range r.Hashes {
			s.Wrote[path] = h
			if p.open != nil {
				p.open.Since[path] = h
			}
		}
	}
}

// UndoHistory is the history before a compaction, followed by what was appended after it.
func UndoHistory(f UndoFrame, current []*genai.Content) []*genai.Content {
	out := slices.Clone(f.Before)
	if f.AfterLen <= len(current) {
		out = append(out, current[f.AfterLen:]...)
	}
	return out
}

// closeDanglingCalls answers the function calls of a model message left without responses by a
// crash, so the history is valid to send again: the model reads that those calls were
// interrupted, and its message (thought signatures included) stays as it was.
func closeDanglingCalls(h []*genai.Content) []*genai.Content {
	if len(h) == 0 {
		return h
	}
	last := h[len(h)-1]
	if last.Role != genai.RoleModel {
		return h
	}
	var parts []*genai.Part
	for _, p := range last.Parts {
		if fc := p.FunctionCall; fc != nil {
			parts = append(parts, &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: fc.ID, Name: fc.Name, Response: map[string]any{
				"error": "interrupted: the server stopped before this call ran; run it again if it is still needed",
			}}})
		}
	}
	if len(parts) == 0 {
		return h
	}
	return append(h, &genai.Content{Role: genai.RoleUser, Parts: parts})
}

// FunctionCalls are the calls of a message, in order.
func FunctionCalls(c *genai.Content) []*genai.FunctionCall {
	var out []*genai.FunctionCall
	for _, p := range c.Parts {
		if p.FunctionCall != nil {
			out = append(out, p.FunctionCall)
		}
	}
	return out
}

// ModifiedFiles are the files the agent changed, from the restore points (not from any summary).
func (s *Snapshot) ModifiedFiles() []string {
	var out []string
	for _, p := range s.RestorePoints {
		if !slices.Contains(out, p.Path) {
			out = append(out, p.Path)
		}
	}
	slices.Sort(out)
	return out
}

// Brief is the snapshot's summary, for a list.
func (s *Snapshot) Brief() Summary {
	return Summary{ID: s.Meta.ID, Title: s.Title, LastActivity: s.LastActivity, Turns: s.Turns, Calls: s.Calls, LastPrompt: s.LastPrompt,
		Checkpoints: len(s.Checkpoints), Parent: s.Meta.Parent, From: s.Meta.From, Subagent: s.Meta.Subagent}
}

// Bill adds to t what record r billed, as billed when it was written: a call's usage (an unpriced
// call stays unknown) or an explicit cache's creation or extension; other records bill nothing.
// Replay sums a session's totals with it, an export each turn's.
func Bill(t *contextwin.Totals, r Record) {
	if c := r.Cache; r.Kind == KindCache && c != nil {
		if !r.Unpriced && (c.Op == CacheCreated || c.Op == CacheExtended) {
			written := 0
			if c.Op == CacheCreated {
				written = c.Tokens
			}
			t.AddExplicitCache(written, r.Cost)
		}
		return
	}
	if r.Kind == KindSubagent && r.Subagent != nil && r.Subagent.Status == SubagentRunning {
		t.Subagents.Runs++
		return
	}
	if r.Kind == KindSubagentUsage && r.Usage != nil {
		t.AddSubagentCall(*r.Usage, r.Cost, !r.Unpriced)
		return
	}
	if r.Usage == nil || r.Kind != KindUsage && r.Kind != KindSummaryUsage {
		return
	}
	if r.Kind == KindSummaryUsage {
		t.AddSummary(*r.Usage, r.Cost, !r.Unpriced, r.Tier == catalog.TierFlex)
	}
	if r.Unpriced {
		t.AddUnpriced(*r.Usage)
		return
	}
	t.Add(*r.Usage, contextwin.Prices{})
	t.Cost += r.Cost
}
