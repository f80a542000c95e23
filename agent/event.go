package agent

import (
	"time"

	"github.com/reprise-dev/reprise/agent/tools"
	"github.com/reprise-dev/reprise/contextwin"
)

// EventType names what happened. The values are the agent's own: lsp maps each to its wire name
// (after the Agent Client Protocol's session/update), so renaming one here cannot change the
// protocol.
type EventType string

// Event types.
const (
	EventText       EventType = "agent_message_chunk"
	EventThought    EventType = "agent_thought_chunk"
	EventToolCall   EventType = "tool_call"
	EventToolUpdate EventType = "tool_call_update"
	EventCompaction EventType = "compaction"
	EventTurnEnd    EventType = "turn_end"
	EventUsage      EventType = "usage"      // the context usage changed
	EventModelCall  EventType = "model_call" // one model call finished: a row of the turn table
	EventRetry      EventType = "retry"      // the model call is retried; Discard voids streamed text
	// EventWarning is something the user must hear once per session, in Text: a retired model,
	// a call answered by another model, a dollar cap that cannot be enforced.
	EventWarning EventType = "warning"
	// EventPins is the session's pins (Event.Pins) after the user pinned or unpinned an item:
	// told by the verbs of agent/runner, not by the loop.
	EventPins EventType = "pins"
	// EventPlan is the agent's plan (Event.Plan) after a write_todos changed it.
	EventPlan EventType = "plan"
	// EventSubagent is a subagent's progress (Event.Subagent): started, a tool it runs, a model
	// call it made, its end. Told while the task call that runs it is in progress.
	EventSubagent EventType = "subagent"
)

// StopReason says why a turn ended. The values are saved in session logs; what an editor sees is
// lsp's wire name for each.
type StopReason string

// Stop reasons of a turn.
const (
	StopEndTurn         StopReason = "end_turn"
	StopCancelled       StopReason = "cancelled"
	StopCapped          StopReason = "capped"
	StopError           StopReason = "error"
	StopMaxTurnRequests StopReason = "max_turn_requests"
	// StopCompactionLimit: maxCompactionsWithoutProgress compactions in a row left the context at
	// blockAt or above (the next call would wait for another one); the session hands off instead
	// of compacting forever.
	StopCompactionLimit StopReason = "compaction_limit"
)

// Event is one step of a turn. Exactly one of the pointer fields is set, matching Type; Text
// carries the deltas of EventText and EventThought, Pins the pins of EventPins, Plan the plan of
// EventPlan.
type Event struct {
	Type       EventType
	Text       string
	Tool       *ToolEvent
	Compaction *CompactionEvent
	Usage      *Usage
	Call       *CallRecord
	Retry      *RetryEvent
	End        *TurnEnd
	Pins       []contextwin.PinInfo // EventPins: all of them, in order
	Plan       []contextwin.Todo    // EventPlan: the whole plan, in order
	Subagent   *SubagentEvent
}

// SubagentEvent is where a subagent is: its session, the parent's task call it answers, its
// figures so far.
type SubagentEvent struct {
	ID          string `json:"subagentId"` // the subagent's session id
	Parent      string `json:"parentId"`
	Call        string `json:"toolCallId"` // the parent's task call
	Description string `json:"description"`
	Model       string `json:"model"`
	// Status is running, then completed, failed or cancelled (journal.Subagent*).
	Status string            `json:"status"`
	Calls  int               `json:"calls"`          // model calls so far
	Totals contextwin.Totals `json:"totals"`         // its own
	Tool   string            `json:"tool,omitempty"` // the title of the call it runs now
	// Result is what the parent's model got, on the last event; Err why it failed.
	Result string `json:"result,omitempty"`
	Err    string `json:"error,omitempty"`
	// Saved is its session's directory, when saved.
	Saved string `json:"saved,omitempty"`
}

// ToolStatus is where a tool call is, after the Agent Client Protocol's statuses.
type ToolStatus string

// Tool call statuses.
const (
	ToolInProgress ToolStatus = "in_progress"
	ToolCompleted  ToolStatus = "completed"
	ToolFailed     ToolStatus = "failed"
)

// ToolEvent is a tool call or its update.
type ToolEvent struct {
	ID     string         `json:"toolCallId"`
	Name   string         `json:"name"`
	Title  string         `json:"title"`
	Kind   tools.Kind     `json:"kind"`
	Status ToolStatus     `json:"status"`
	Args   map[string]any `json:"rawInput,omitempty"`
	// Set on the final update.
	Output    string `json:"output,omitempty"` // what the model got
	SavedPath string `json:"savedPath,omitempty"`
	Omitted   int    `json:"omitted,omitempty"`
	Refused   bool   `json:"refused,omitempty"`
	Diff      *Diff  `json:"diff,omitempty"` // a successful write or edit
	// Live is set on the in-progress updates of a running command, never on the final one.
	Live *LiveOutput `json:"live,omitempty"`
}

// LiveOutput is a running command's output so far, as a UI shows it while it runs. It is
// display-only: the model and the journal get the final Output, never this.
type LiveOutput struct {
	// Tail is the end of the output, secrets redacted: at most tools.LiveTailBytes and
	// tools.LiveTailLines.
	Tail    string        `json:"tail"`
	Bytes   int64         `json:"bytes"`   // printed so far; more than Tail when its start is left out
	Elapsed time.Duration `json:"elapsed"` // since the command started (approval not counted)
	// Note says what a command that has printed nothing for a few seconds is likely doing
	// ("building or starting, no output yet"); "" otherwise.
	Note string `json:"note,omitempty"`
}

// MaxEditDiffBytes bounds each text of an edit's Diff: an editor renders it live in the chat, and
// a whole large file per edit would swamp the connection. Reprise.changes gives the bounded
// unified diff of such a file.
const MaxEditDiffBytes = 64 << 10

// Diff is a file before and after one edit, as ACP's diff tool call content. When either text is
// over MaxEditDiffBytes or binary, both are left out and Note says why.
type Diff struct {
	Path    string  `json:"path"`              // absolute
	OldText *string `json:"oldText,omitempty"` // nil: the edit created the file
	NewText string  `json:"newText"`
	Note    string  `json:"note,omitempty"`
}

// CompactionState is where a compaction is: a CompactionEvent's state, and in Usage whether one
// is under way (idle, running or blocking).
type CompactionState string

// Compaction states.
const (
	CompactionIdle      CompactionState = "idle" // none under way (Usage only)
	CompactionRunning   CompactionState = "running"
	CompactionBlocking  CompactionState = "blocking" // the loop waits for it
	CompactionDone      CompactionState = "done"
	CompactionCancelled CompactionState = "cancelled"
	CompactionSkipped   CompactionState = "skipped" // nothing to compact
)

// CompactionEvent reports a compaction starting, blocking the loop, or ending.
type CompactionEvent struct {
	State      CompactionState        `json:"state"`
	Trigger    contextwin.Trigger     `json:"trigger"`
	Note       string                 `json:"note,omitempty"`
	Checkpoint *contextwin.Checkpoint `json:"checkpoint,omitempty"`
}

// CallRecord is one model call: a row of the seed's turn table.
type CallRecord struct {
	Turn   int `json:"turn"` // model calls since the session began
	Prompt int `json:"prompt"`
	Cached int `json:"cached"`
	// ExpectedCached is what implicit caching should have billed as cached (see
	// contextwin.CallUsage.ExpectedCached).
	ExpectedCached int    `json:"expectedCached,omitempty"`
	Output         int    `json:"output"`             // thinking included
	Thoughts       int    `json:"thoughts,omitempty"` // the thinking part of Output
	Tool           string `json:"tool,omitempty"`     // tools the model called, comma-separated
	Detail         string `json:"detail,omitempty"`   // e.g. the command run
	Attempts       int    `json:"attempts"`
}

// RetryEvent says a model call failed and is tried again.
type RetryEvent struct {
	Attempt int           `json:"attempt"`
	Delay   time.Duration `json:"delay"`
	Err     string        `json:"error"`
	Discard bool          `json:"discard"`
}

// TurnEnd closes a turn with its figures.
type TurnEnd struct {
	StopReason StopReason        `json:"stopReason"`
	Err        string            `json:"error,omitempty"`
	Calls      int               `json:"calls"` // model calls since the session began, this turn's included
	Totals     contextwin.Totals `json:"totals"`
	// Changes are the files the turn changed, each compared from before the turn to now, without
	// their diffs: what an editor lists under the turn (a reopened chat gets the same from
	// Transcript).
	Changes []FileChange `json:"changes,omitempty"`
}

// Usage is the context usage as an editor shows it.
type Usage struct {
	Used        int                  `json:"used"`
	Size        int                  `json:"size"`
	Percent     float64              `json:"percent"`
	Source      contextwin.Source    `json:"source"`
	Breakdown   contextwin.Breakdown `json:"breakdown"`
	Totals      contextwin.Totals    `json:"totals"`
	Compaction  CompactionState      `json:"compactionState"` // idle, running or blocking
	Compactions int                  `json:"compactions"`
	// CostUnknown: some call, or the calls to come, are to a model without a known price: the
	// cost shows as unknown, never as the $0 or lower bound Totals.Cost holds.
	CostUnknown bool `json:"costUnknown,omitempty"`
	// Local: the calls to come are to a local model, free: what they cost is their time
	// (Totals.Time), which the cost's wording gives (Totals.CostWords).
	Local bool `json:"local,omitempty"`
	// Decision says, past compactAt, what the harness decided about the context and why, in
	// dollars: cleared, summarizing, or waiting because neither pays yet. Empty below it.
	Decision string `json:"decision,omitempty"`
	// CompactAt and BlockAt are the session's own thresholds, fractions of Size: the meter
	// marks them without asking the front-end's settings.
	CompactAt float64 `json:"compactAt"`
	BlockAt   float64 `json:"blockAt"`
}

// ChangeState is what happened to a file since its restore point.
type ChangeState string

// Change states.
const (
	ChangeModified ChangeState = "modified"
	ChangeCreated  ChangeState = "created"
	ChangeDeleted  ChangeState = "deleted"
)

// FileChange is one file the agent changed, compared from its restore point to the disk now.
type FileChange struct {
	Path    string // workspace-relative, slash-separated
	Turn    int    // the turn of the restore point compared from
	State   ChangeState
	Added   int
	Removed int
	// Diff is the unified diff (a/path, b/path), empty when Note says why there is none.
	Diff string
	// Binary: one side is not text; Note then says so, and the counts are 0.
	Binary bool
	// Note says why Diff is empty (binary, too large) or incomplete.
	Note string
	// UserChanged: the file changed after the agent's last write; restoring it is refused.
	UserChanged bool
	// Hunks are the changes of a modified file whose Diff is shown, each accepted or rejected on
	// its own. A created or deleted file is one change: it has none, and is reviewed whole.
	Hunks []Hunk
	// HunksUndone counts the file's hunks the user rejected (undone on disk, so no longer in Diff).
	HunksUndone int
}

// Hunk is one change of a file, as a reviewer accepts or rejects it: a run of removed and added
// lines, numbered as in a unified diff's header (see diff.Block). Its ID is made of the file and
// the change's text, so it stays the same while other hunks of the file are kept or undone.
type Hunk struct {
	ID                 string
	OldStart, OldLines int
	NewStart, NewLines int
	Kept               bool // the user kept it (an undone hunk is no longer in the file)
}
