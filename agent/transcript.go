package agent

import (
	"fmt"

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
)

// TranscriptEntry is one step of the conversation as a person reads it.
type TranscriptEntry struct {
	Turn       int        `json:"turn"`
	Kind       EntryKind  `json:"kind"`
	Text       string     `json:"text,omitempty"`
	ToolCallID string     `json:"toolCallId,omitempty"`
	Title      string     `json:"title,omitempty"`
	ToolKind   tools.Kind `json:"toolKind,omitempty"`
	Status     ToolStatus `json:"status,omitempty"`
	Output     string     `json:"output,omitempty"`
	Checkpoint int        `json:"checkpoint,omitempty"`
}

// Transcript is the whole conversation since the session began, compacted parts included: what an
// editor shows when it reopens a session.
func (s *Session) Transcript() []TranscriptEntry {
	s.conv.mu.Lock()
	entries := append([]journal.Entry(nil), s.conv.transcript...)
	s.conv.mu.Unlock()
	env := s.settings.toolsEnv()
	var out []TranscriptEntry
	open := map[string]int{} // call key → index in out, until answered
	for i, e := range entries {
		if cp := e.Checkpoint; cp != nil {
			out = append(out, TranscriptEntry{Turn: e.Turn, Kind: EntryCompaction, Title: cp.Title, Checkpoint: cp.N})
			continue
		}
		c := e.Content
		for j, p := range c.Parts {
			switch {
			case p.FunctionCall != nil:
				fc := p.FunctionCall
				id := fc.ID
				if id == "" {
					id = fmt.Sprintf("t%d-%d", i, j)
				}
				title, kind := env.Describe(tools.Call{Name: fc.Name, Args: fc.Args})
				open[contextwin.CallKey(fc.ID, fc.Name)] = len(out)
				out = append(out, TranscriptEntry{Turn: e.Turn, Kind: EntryTool, ToolCallID: id, Title: title, ToolKind: kind, Status: ToolInProgress})
			case p.FunctionResponse != nil:
				fr := p.FunctionResponse
				k := contextwin.CallKey(fr.ID, fr.Name)
				idx, ok := open[k]
				if !ok {
					continue
				}
				delete(open, k)
				if msg, isErr := fr.Response["error"].(string); isErr {
					out[idx].Status, out[idx].Output = ToolFailed, msg
				} else {
					out[idx].Status = ToolCompleted
					out[idx].Output, _ = fr.Response["output"].(string)
				}
			case p.Thought && p.Text != "":
				out = append(out, TranscriptEntry{Turn: e.Turn, Kind: EntryThought, Text: p.Text})
			case p.Text != "":
				kind := EntryAgent
				if c.Role == "user" {
					kind = EntryUser
				}
				out = append(out, TranscriptEntry{Turn: e.Turn, Kind: kind, Text: p.Text})
			}
		}
	}
	return out
}
