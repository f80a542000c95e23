// Package journal saves a session as an append-only event log and rebuilds it: every message the
// model was sent, usage, compactions (with the checkpoint files Copilot users know from
// /session checkpoints), restore points of the files the agent changed, and turn ends. A session
// killed mid-turn resumes with everything up to its last completed step.
package journal

import (
	"time"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/contextwin"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// Record kinds.
const (
	KindMeta         = "meta"           // Meta: written first
	KindTurnStart    = "turn_start"     // Turn, Text: a user request begins turn Turn
	KindAppend       = "append"         // Content appended to the live history
	KindAmend        = "amend"          // Content replaces history[Index] (a harness note added)
	KindUsage        = "usage"          // Usage of a loop call: Prompt anchors the ledger
	KindSummaryUsage = "summary_usage"  // Usage of a summarizer call: billed, not in the history
	KindCompaction   = "compaction"     // Compaction installed
	KindUndo         = "undo"           // the last compaction was undone
	KindVerdict      = "verdict"        // Verdict: the last test verdict seen
	KindRestorePoint = "restore_point"  // RestorePoint: a file's content before the agent first changed it in a turn
	KindRestore      = "restore"        // Restored: files put back as before a turn
	KindSettings     = "settings"       // Policy changed
	KindTurnEnd      = "turn_end"       // StopReason, Error, Changes
	KindWrote        = "wrote"          // Hashes: the content the agent left in files it changed
	KindTool         = "tool"           // Tool: what a tool call showed the user beyond its response
	KindReview       = "review"         // Review: the user kept files a turn changed, or an undo was refused
	KindCache        = "explicit_cache" // Cache: an explicit cache created, extended or deleted; Cost what it billed
	KindPin          = "pin"            // Pin: the user pinned an item, or its file was read again (same id)
	KindUnpin        = "unpin"          // Text: the id of the pin the user removed
	KindPlan         = "plan"           // Todos: the agent's whole plan (write_todos), none when cleared
	KindNote         = "note"           // Note: a note the agent saved, or deleted (an empty value)
	KindFork         = "fork"           // Text: where the session was forked from; the records before it are its parent's
	KindSubagent     = "subagent"       // Subagent: a subagent started (Status running) or ended
	// KindSubagentUsage is a call of a subagent (Text: its id), billed with the session: Usage,
	// Cost, Unpriced, Model and Tier as a KindUsage record's.
	KindSubagentUsage = "subagent_usage"
)

// Record is one line of events.jsonl.
type Record struct {
	Time    time.Time             `json:"t"`
	Kind    string                `json:"kind"`
	Turn    int                   `json:"turn,omitempty"`
	Text    string                `json:"text,omitempty"`
	Content *genai.Content        `json:"content,omitempty"`
	Index   int                   `json:"index,omitempty"`
	Usage   *contextwin.CallUsage `json:"usage,omitempty"`
	Cost    float64               `json:"cost,omitempty"` // of Usage, at the prices in force
	// Unpriced: the model of Usage had no known price, so Cost is unknown, not zero.
	Unpriced bool `json:"unpriced,omitempty"`
	// Model is the model that served the call of Usage (its modelVersion), and ModelStatus its
	// stage as the API reported it.
	Model       string             `json:"model,omitempty"`
	ModelStatus *genai.ModelStatus `json:"modelStatus,omitempty"`
	// Tier is the service tier that served the call of Usage ("flex"; "" or "standard" for the
	// standard tier), which its Cost was priced at.
	Tier         catalog.Tier       `json:"tier,omitempty"`
	Compaction   *Compaction        `json:"compaction,omitempty"`
	Verdict      string             `json:"verdict,omitempty"`
	RestorePoint *RestorePoint      `json:"restorePoint,omitempty"`
	Restored     *Restored          `json:"restored,omitempty"`
	Policy       *contextwin.Policy `json:"policy,omitempty"`
	Meta         *Meta              `json:"meta,omitempty"`
	StopReason   string             `json:"stopReason,omitempty"`
	// Error is why a turn ended in error, as the editor was told.
	Error string `json:"error,omitempty"`
	// Changes are the files a turn changed, as its end left them.
	Changes []ChangedFile     `json:"changes,omitempty"`
	Hashes  map[string]string `json:"hashes,omitempty"` // path → hex SHA-256
	Tool    *Tool             `json:"tool,omitempty"`
	Review  *Review           `json:"review,omitempty"`
	Cache   *CacheEvent       `json:"cache,omitempty"`
	Pin     *contextwin.Pin   `json:"pin,omitempty"`
	Todos   []contextwin.Todo `json:"todos,omitempty"`
	Note    *contextwin.Note  `json:"note,omitempty"`
	// Subagent is a subagent of the session, as it started or ended.
	Subagent *Subagent `json:"subagent,omitempty"`
}

// Subagent is a child session the task tool ran: its own session (saved apart when the parent is,
// with Meta.Parent and Meta.Subagent set), reported to its parent.
type Subagent struct {
	ID          string `json:"id"`   // the child session's id
	Call        string `json:"call"` // the parent's task call it answers
	Description string `json:"description"`
	Model       string `json:"model"`
	// Status is running when it starts, then completed, failed or cancelled.
	Status string `json:"status"`
	// Calls and Totals are its model calls and figures when it ended.
	Calls  int               `json:"calls,omitempty"`
	Totals contextwin.Totals `json:"totals,omitzero"`
	// Saved is the child's session directory, when the parent is saved.
	Saved string `json:"saved,omitempty"`
	Error string `json:"error,omitempty"`
}

// What can happen to an explicit cache (CacheEvent.Op).
const (
	CacheCreated  = "created"  // billed as input, and its storage over its first TTL
	CacheExtended = "extended" // its TTL pushed further: the storage added
	CacheDeleted  = "deleted"  // by the session, or found gone: nothing more to bill
)

// CacheEvent is what happened to an explicit cache of the session, so that a resumed session's
// totals include what its caches cost, and its host knows which may still be alive.
type CacheEvent struct {
	Op     string    `json:"op"`
	Name   string    `json:"name"`             // cachedContents/…
	Tokens int       `json:"tokens,omitempty"` // written at creation (billed as input)
	Until  time.Time `json:"until,omitzero"`   // when it expires, after a creation or extension
}

// Meta identifies a session.
type Meta struct {
	ID        string    `json:"id"`
	Workspace string    `json:"workspace"`
	Model     string    `json:"model"`
	Created   time.Time `json:"created"`
	// Parent is the session this one was forked from, and From where ("checkpoint 2", "turn 3").
	Parent string `json:"parent,omitempty"`
	From   string `json:"from,omitempty"`
	// Subagent is set on a subagent's session: the task it was given (its description); Parent
	// is then the session that ran it.
	Subagent string `json:"subagent,omitempty"`
}

// Compaction is what installing a compaction did to the history: message 0 became Head and the
// messages before Split were dropped.
type Compaction struct {
	Head  *genai.Content `json:"head"`
	Split int            `json:"split"`
	// Blocks are the head's summaries after the compaction.
	Blocks     []contextwin.SummaryBlock `json:"blocks,omitempty"`
	Checkpoint contextwin.Checkpoint     `json:"checkpoint"`
	// Summary, Covered and Requests are what logs written before blocks hold instead: one
	// merged summary.
	Summary  string   `json:"summary,omitempty"`
	Covered  int      `json:"covered,omitempty"`
	Requests []string `json:"requests,omitempty"`
	// Cleared, for a clearing of old tool results (no Head, no Split), are the messages it
	// rewrote, by index: each with its results replaced by stubs.
	Cleared map[int]*genai.Content `json:"cleared,omitempty"`
}

// SummaryBlocks are the head's summaries the record leaves, whichever way it was written.
func (c *Compaction) SummaryBlocks() []contextwin.SummaryBlock {
	if c.Blocks != nil {
		return c.Blocks
	}
	return contextwin.LegacyBlocks(c.Summary, c.Covered, c.Requests)
}

// RestorePoint is a file as it was before the agent first changed it in a turn.
type RestorePoint struct {
	Turn    int    `json:"turn"`
	Path    string `json:"path"` // workspace-relative, slash-separated
	Existed bool   `json:"existed"`
	Blob    string `json:"blob,omitempty"` // file under the session's restore/ directory
}

// Restored records that files were put back as they were before Turn.
type Restored struct {
	Turn  int      `json:"turn"`
	Paths []string `json:"paths"`
}

// Tool is what a tool call showed the user beyond the response the model got, kept so that a
// reopened chat shows it as the live one did. Call is the call's id as the editor saw it.
type Tool struct {
	Call      string `json:"call"`
	SavedPath string `json:"savedPath,omitempty"`
	Omitted   int    `json:"omitted,omitempty"`
	Refused   bool   `json:"refused,omitempty"`
	Edit      *Edit  `json:"edit,omitempty"`
}

// Edit is a file before and after one call, with secrets masked as the editor saw it. The texts
// are blobs named by their content (Log.SaveText), so the log stays small and an edit's text
// after is the next edit's text before, kept once.
type Edit struct {
	Path string `json:"path"` // workspace-relative, slash-separated
	// Old is the blob of the text before; empty when the call created the file.
	Old string `json:"old,omitempty"`
	New string `json:"new,omitempty"`
	// OldText and NewText hold the texts themselves when the session keeps no blobs (in memory
	// only); they are never written.
	OldText *string `json:"-"`
	NewText *string `json:"-"`
	// Note says why there are no texts: too large, binary, or not saved.
	Note string `json:"note,omitempty"`
}

// ChangedFile is one file a turn changed, compared from before the turn to the turn's end: the
// row an editor lists under the turn. The diff itself is not kept; reprise.changes gives it.
type ChangedFile struct {
	Path        string `json:"path"`  // workspace-relative, slash-separated
	State       string `json:"state"` // modified, created or deleted
	Added       int    `json:"added,omitempty"`
	Removed     int    `json:"removed,omitempty"`
	Binary      bool   `json:"binary,omitempty"`
	Note        string `json:"note,omitempty"`
	UserChanged bool   `json:"userChanged,omitempty"`
}

// Review is what became of files a turn changed, besides an undo (a KindRestore record): the
// user kept them, or their undo was refused and why.
type Review struct {
	Turn   int      `json:"turn"`
	Paths  []string `json:"paths"`
	State  string   `json:"state"` // ReviewKept, ReviewRefused, or ReviewUndone (hunks only)
	Reason string   `json:"reason,omitempty"`
	// Hunks, when set, are the hunk ids of Paths' one file the review is about, not the whole file.
	Hunks []string `json:"hunks,omitempty"`
}

// Review states a record holds.
const (
	ReviewKept    = "kept"
	ReviewRefused = "refused"
	ReviewUndone  = "undone" // hunks rejected and put back; a whole file's undo is a KindRestore record
)

// Compact applies a compaction to a history: the head, then the messages from split on. The agent
// and the replay both use it, so a resumed history is the one that was live.
func Compact(h []*genai.Content, head *genai.Content, split int) []*genai.Content {
	out := make([]*genai.Content, 0, 1+len(h)-split)
	return append(append(out, head), h[split:]...)
}

// A subagent's statuses (Subagent.Status).
const (
	SubagentRunning   = "running"
	SubagentCompleted = "completed"
	SubagentFailed    = "failed"
	SubagentCancelled = "cancelled"
)
