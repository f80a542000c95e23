package agent

import (
	"fmt"
	"slices"

	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/agent/tools"
	"github.com/reprise-dev/reprise/contextwin"
)

// EntryKind is what a transcript entry holds.
type EntryKind string

// Transcript entry kinds.
const (
	EntryUser       EntryKind = "user"
	EntryAgent      EntryKind = "agent"
	EntryThought    EntryKind = "thought"
	EntryTool       EntryKind = "tool"
	EntryCompaction EntryKind = "compaction"
	EntryTurnEnd    EntryKind = "turn_end"
)

// TranscriptEntry is one step of the conversation as a person reads it. A tool entry carries what
// the live call showed (its arguments, output, diff); a turn end, the files the turn changed and
// what became of each since.
type TranscriptEntry struct {
	Turn       int            `json:"turn"`
	Kind       EntryKind      `json:"kind"`
	Text       string         `json:"text,omitempty"`
	ToolCallID string         `json:"toolCallId,omitempty"`
	Title      string         `json:"title,omitempty"`
	ToolKind   tools.Kind     `json:"toolKind,omitempty"`
	Status     ToolStatus     `json:"status,omitempty"`
	Args       map[string]any `json:"rawInput,omitempty"` // secrets masked
	Output     string         `json:"output,omitempty"`
	SavedPath  string         `json:"savedPath,omitempty"`
	Omitted    int            `json:"omitted,omitempty"`
	Refused    bool           `json:"refused,omitempty"`
	Diff       *Diff          `json:"diff,omitempty"`
	Checkpoint int            `json:"checkpoint,omitempty"`
	StopReason StopReason     `json:"stopReason,omitempty"`
	Error      string         `json:"error,omitempty"`
	Calls      int            `json:"calls,omitempty"` // model calls since the session began, at a turn end
	Changes    []ChangeRow    `json:"changes,omitempty"`
	// Subagent is a task call's subagent as it last stood (its end, or its start when the
	// session stopped during it).
	Subagent *journal.Subagent `json:"subagent,omitempty"`
}

// Transcript is the whole conversation since the session began, compacted parts included: what an
// editor shows when it reopens a session, built from what the journal holds so that it shows what
// the live chat showed.
func (s *Session) Transcript() []TranscriptEntry {
	s.conv.mu.Lock()
	entries := append([]journal.Entry(nil), s.conv.transcript...)
	s.conv.mu.Unlock()
	b := transcriptBuilder{s: s, env: s.settings.toolsEnv(), open: map[string][]int{}, byID: map[string]int{}, ends: map[int]int{}}
	for _, e := range entries {
		switch {
		case e.Checkpoint != nil:
			cp := e.Checkpoint
			b.out = append(b.out, TranscriptEntry{Turn: e.Turn, Kind: EntryCompaction, Title: cp.Title, Checkpoint: cp.N})
		case e.Content != nil:
			b.message(e)
		case e.Tool != nil:
			b.tool(e.Tool)
		case e.End != nil:
			b.end(e.Turn, e.End)
		case e.Review != nil:
			b.review(e.Review)
		case e.Restored != nil:
			b.restored(e.Restored)
		case e.Subagent != nil:
			if idx, ok := b.byID[e.Subagent.Call]; ok {
				b.out[idx].Subagent = e.Subagent
			}
		}
	}
	return b.out
}

// transcriptBuilder is Transcript's state between entries.
type transcriptBuilder struct {
	s    *Session
	env  *tools.Env
	out  []TranscriptEntry
	open map[string][]int // call key → indices in out of its calls not answered yet, in order
	byID map[string]int   // call id as the editor saw it → index in out
	ends map[int]int      // turn → index in out of its end
	kept map[string]bool  // hunks counted kept, so that a log keeping one twice counts it once
}

// message adds the parts of a message: texts, thoughts, calls, and the answers to calls.
func (b *transcriptBuilder) message(e journal.Entry) {
	c := e.Content
	n := 0 // the calls of the message so far
	for _, p := range c.Parts {
		switch {
		case p.FunctionCall != nil:
			fc := p.FunctionCall
			n++
			id := fc.ID
			if id == "" { // as runTools named it for the editor
				id = fmt.Sprintf("call-%d-%d", e.Calls, n)
			}
			title, kind := b.env.Describe(tools.Call{Name: fc.Name, Args: fc.Args})
			k := contextwin.CallKey(fc.ID, fc.Name)
			b.open[k] = append(b.open[k], len(b.out))
			b.byID[id] = len(b.out)
			b.out = append(b.out, TranscriptEntry{Turn: e.Turn, Kind: EntryTool, ToolCallID: id, Title: title, ToolKind: kind, Status: ToolInProgress, Args: fc.Args})
		case p.FunctionResponse != nil:
			b.answer(p.FunctionResponse.ID, p.FunctionResponse.Name, p.FunctionResponse.Response)
		case p.Thought && p.Text != "":
			b.out = append(b.out, TranscriptEntry{Turn: e.Turn, Kind: EntryThought, Text: p.Text})
		case p.Text != "":
			kind := EntryAgent
			if c.Role == "user" {
				kind = EntryUser
			}
			b.out = append(b.out, TranscriptEntry{Turn: e.Turn, Kind: kind, Text: p.Text})
		}
	}
}

// answer completes the first open call of that id and name with its response.
func (b *transcriptBuilder) answer(id, name string, resp map[string]any) {
	k := contextwin.CallKey(id, name)
	q := b.open[k]
	if len(q) == 0 {
		return
	}
	idx := q[0]
	b.open[k] = q[1:]
	if msg, isErr := resp["error"].(string); isErr {
		b.out[idx].Status, b.out[idx].Output = ToolFailed, msg
		return
	}
	b.out[idx].Status = ToolCompleted
	b.out[idx].Output, _ = resp["output"].(string)
}

// tool adds to a call what it showed beyond its response.
func (b *transcriptBuilder) tool(t *journal.Tool) {
	idx, ok := b.byID[t.Call]
	if !ok {
		return
	}
	e := &b.out[idx]
	e.SavedPath, e.Omitted, e.Refused = t.SavedPath, t.Omitted, t.Refused
	if t.Edit != nil {
		e.Diff = b.s.opts.editDiff(t.Edit)
	}
}

// end adds a turn's end with the files it changed, none reviewed yet. A log written before turn
// ends listed their files has restore points for the turn and no files: those are compared with
// the disk now, as editors listed them then.
func (b *transcriptBuilder) end(turn int, t *journal.TurnEnd) {
	rows := make([]ChangeRow, 0, len(t.Changes))
	for _, c := range t.Changes {
		rows = append(rows, ChangeRow{FileChange: FileChange{Path: c.Path, Turn: turn, State: ChangeState(c.State), Added: c.Added, Removed: c.Removed, Binary: c.Binary, Note: c.Note, UserChanged: c.UserChanged}, Review: ReviewPending})
	}
	if len(t.Changes) == 0 && b.s.files.inTurn(turn) {
		for _, c := range b.s.files.turnChanges(turn) {
			rows = append(rows, ChangeRow{FileChange: c, Review: ReviewPending})
		}
	}
	b.ends[turn] = len(b.out)
	b.out = append(b.out, TranscriptEntry{Turn: turn, Kind: EntryTurnEnd, StopReason: StopReason(t.StopReason), Error: t.Error, Calls: t.Calls, Changes: rows})
}

// review marks files kept in their turn, or refused in the first turn from r.Turn on that lists
// them: the one whose restore point the refused undo would have put back.
func (b *transcriptBuilder) review(r *journal.Review) {
	if len(r.Hunks) > 0 {
		b.hunkReview(r)
		return
	}
	for _, p := range r.Paths {
		for _, t := range b.turnsFrom(r.Turn) {
			if r.State == journal.ReviewKept && t != r.Turn {
				break
			}
			if row := b.row(t, p); row != nil {
				row.Review, row.Reason = ReviewKept, ""
				if r.State == journal.ReviewRefused {
					row.Review, row.Reason = ReviewRefused, r.Reason
				}
				break
			}
		}
	}
}

// hunkReview counts hunks kept or undone on the file's row in the first turn from r.Turn on that
// lists it: the row's own review stays the file's.
func (b *transcriptBuilder) hunkReview(r *journal.Review) {
	for _, t := range b.turnsFrom(r.Turn) {
		if row := b.row(t, r.Paths[0]); row != nil {
			switch r.State {
			case journal.ReviewKept:
				if b.kept == nil {
					b.kept = map[string]bool{}
				}
				for _, id := range r.Hunks {
					if !b.kept[id] {
						b.kept[id] = true
						row.HunksKept++
					}
				}
			case journal.ReviewUndone:
				row.HunksUndone += len(r.Hunks)
			}
			return
		}
	}
}

// restored marks undone the files put back as before r.Turn, in every turn from it on.
func (b *transcriptBuilder) restored(r *journal.Restored) {
	for _, t := range b.turnsFrom(r.Turn) {
		for _, p := range r.Paths {
			if row := b.row(t, p); row != nil {
				row.Review, row.Reason = ReviewUndone, ""
			}
		}
	}
}

// turnsFrom lists, in order, the turns from turn on that have ended so far.
func (b *transcriptBuilder) turnsFrom(turn int) []int {
	var out []int
	for t := range b.ends {
		if t >= turn {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}

// row is path's row in turn's changes, or nil.
func (b *transcriptBuilder) row(turn int, path string) *ChangeRow {
	rows := b.out[b.ends[turn]].Changes
	for i := range rows {
		if rows[i].Path == path {
			return &rows[i]
		}
	}
	return nil
}
