package agent

import (
	"time"

	"github.com/reprise-dev/reprise/contextwin"
)

// EventType names what happened. The names of the streamed updates follow the Agent Client
// Protocol's session/update so a server can forward them as they are.
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
)

// Stop reasons of a turn.
const (
	StopEndTurn         = "end_turn"
	StopCancelled       = "cancelled"
	StopCapped          = "capped"
	StopError           = "error"
	StopMaxTurnRequests = "max_turn_requests"
	// StopCompactionLimit: compaction kept failing to bring the context under compactAt; the
	// session hands off instead of compacting forever.
	StopCompactionLimit = "compaction_limit"
)

// Event is one step of a turn. Exactly one of the pointer fields is set, matching Type; Text
// carries the deltas of EventText and EventThought.
type Event struct {
	Type       EventType
	Text       string
	Tool       *ToolEvent
	Compaction *CompactionEvent
	Usage      *Usage
	Call       *CallRecord
	Retry      *RetryEvent
	End        *TurnEnd
}

// Tool call statuses, as in the Agent Client Protocol.
const (
	ToolPending    = "pending"
	ToolInProgress = "in_progress"
	ToolCompleted  = "completed"
	ToolFailed     = "failed"
)

// ToolEvent is a tool call or its update.
type ToolEvent struct {
	ID     string         `json:"toolCallId"`
	Name   string         `json:"name"`
	Title  string         `json:"title"`
	Kind   string         `json:"kind"`
	Status string         `json:"status"`
	Args   map[string]any `json:"rawInput,omitempty"`
	// Set on the final update.
	Output    string `json:"output,omitempty"` // what the model got
	SavedPath string `json:"savedPath,omitempty"`
	Omitted   int    `json:"omitted,omitempty"`
	Refused   bool   `json:"refused,omitempty"`
}

// Compaction states.
const (
	CompactionRunning   = "running"
	CompactionBlocking  = "blocking" // the loop waits for it
	CompactionDone      = "done"
	CompactionCancelled = "cancelled"
	CompactionSkipped   = "skipped" // nothing to compact
)

// CompactionEvent reports a compaction starting, blocking the loop, or ending.
type CompactionEvent struct {
	State      string                 `json:"state"`
	Trigger    string                 `json:"trigger"` // auto or manual
	Note       string                 `json:"note,omitempty"`
	Checkpoint *contextwin.Checkpoint `json:"checkpoint,omitempty"`
}

// CallRecord is one model call: a row of the seed's turn table.
type CallRecord struct {
	Turn     int    `json:"turn"` // model calls since the session began
	Prompt   int    `json:"prompt"`
	Cached   int    `json:"cached"`
	Output   int    `json:"output"`
	Tool     string `json:"tool,omitempty"`   // tools the model called, comma-separated
	Detail   string `json:"detail,omitempty"` // e.g. the command run
	Attempts int    `json:"attempts"`
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
	StopReason string            `json:"stopReason"`
	Err        string            `json:"error,omitempty"`
	Calls      int               `json:"calls"` // model calls in this turn
	Totals     contextwin.Totals `json:"totals"`
}

// Usage is the context usage as an editor shows it.
type Usage struct {
	Used        int                  `json:"used"`
	Size        int                  `json:"size"`
	Percent     float64              `json:"percent"`
	Source      string               `json:"source"` // "usage" or "estimate"
	Breakdown   contextwin.Breakdown `json:"breakdown"`
	Totals      contextwin.Totals    `json:"totals"`
	Compaction  string               `json:"compactionState"` // idle, running or blocking
	Compactions int                  `json:"compactions"`
}
