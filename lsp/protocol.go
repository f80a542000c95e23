// Package lsp is Reprise's editor backend: JSON-RPC 2.0 with LSP framing over stdio. Standard LSP
// where it fits (lifecycle, executeCommand, progress, showMessageRequest, configuration, text
// synchronisation), and two custom notifications for clients that declare
// capabilities.experimental.reprise. The wire contract is PROTOCOL.md; the names below are its
// single source of truth, and the editor clients are tested against them.
package lsp

import (
	"fmt"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/sandbox"
	"github.com/reprise-dev/reprise/agent/tools"
	"github.com/reprise-dev/reprise/contextwin"
)

// Custom notifications, server → client.
const (
	MethodContextUsage  = "reprise/contextUsage"
	MethodSessionUpdate = "reprise/sessionUpdate"
)

// MethodDidChangeUserSettings is a custom notification, client → server: the editor sends the
// user's own values of the CostSettings when the user changes one (usersettings.go).
const MethodDidChangeUserSettings = "reprise/didChangeUserSettings"

// Commands, through workspace/executeCommand with arguments [ {…} ].
const (
	CommandAsk         = "reprise.ask"
	CommandCancel      = "reprise.cancel"
	CommandCompact     = "reprise.compact"
	CommandContext     = "reprise.context"
	CommandCheckpoints = "reprise.checkpoints"
	CommandCheckpoint  = "reprise.checkpoint"
	CommandSessions    = "reprise.sessions"
	CommandNewSession  = "reprise.newSession"
	CommandResume      = "reprise.resume"
	CommandRestore     = "reprise.restore"
	// CommandChanges lists the files the agent changed, with their diffs, for review.
	CommandChanges        = "reprise.changes"
	CommandUndoCompaction = "reprise.undoCompaction"
	// CommandShowContext shows the /context view with window/showMessage, for plain clients
	// (code action "Show context").
	CommandShowContext = "reprise.showContext"
	// CommandHistory returns a session's whole conversation, for an editor reopening it.
	CommandHistory = "reprise.history"
	// CommandKeep records that the user keeps files a turn changed, so a reopened chat lists
	// them kept.
	CommandKeep = "reprise.keep"
	// CommandUndoFile restores one file the agent changed and shows the outcome with
	// window/showMessage, for plain clients (a code action on the file).
	CommandUndoFile = "reprise.undoFile"
	// CommandUndoHunk and CommandKeepHunk undo or keep one hunk of reprise.changes and show the
	// outcome with window/showMessage, for plain clients (code actions on the hunk's lines).
	CommandUndoHunk = "reprise.undoHunk"
	CommandKeepHunk = "reprise.keepHunk"
	// CommandShowChanges shows the changed files with their counts with window/showMessage, for
	// plain clients that cannot call reprise.changes themselves.
	CommandShowChanges = "reprise.showChanges"
	// CommandModels lists the models the key can use, joined with the model catalogue, for
	// the editors' model pickers (ModelsArgs, ModelsResult).
	CommandModels = "reprise.models"
	// CommandMCP lists the MCP servers with their state and their tools' declaration costs.
	CommandMCP = "reprise.mcp"
	// CommandPin pins a file or a message: never cleared or summarized (PinArgs, pinResult).
	CommandPin = "reprise.pin"
	// CommandUnpin removes a pin (UnpinArgs, pinsResult).
	CommandUnpin = "reprise.unpin"
	// CommandPins lists a session's pins (SessionArgs, pinsResult).
	CommandPins = "reprise.pins"
	// CommandForgetNote deletes one of the agent's notes (ForgetNoteArgs, notesResult).
	CommandForgetNote = "reprise.forgetNote"
	// CommandFork starts a new session from a checkpoint or a turn of one (ForkArgs, forkResult).
	CommandFork = "reprise.fork"
	// CommandExport renders a saved session for people, Markdown or HTML (ExportArgs, exportResult).
	CommandExport = "reprise.export"
	// CommandCancelSubagent stops one subagent of a session's running turn; the turn goes on
	// (CancelSubagentArgs, {cancelled}).
	CommandCancelSubagent = "reprise.cancelSubagent"
)

// serverCommands lists every command the server announces in executeCommandProvider.
var serverCommands = []string{
	CommandAsk, CommandCancel, CommandCompact, CommandContext, CommandCheckpoints,
	CommandCheckpoint, CommandSessions, CommandNewSession, CommandResume, CommandRestore,
	CommandUndoCompaction, CommandShowContext, CommandHistory, CommandChanges,
	CommandUndoFile, CommandUndoHunk, CommandKeepHunk, CommandShowChanges, CommandMCP, CommandModels, CommandKeep,
	CommandPin, CommandUnpin, CommandPins, CommandForgetNote, CommandFork, CommandExport,
	CommandCancelSubagent,
}

// ExperimentalCapability is the key a client sets to true in capabilities.experimental to get
// the custom notifications instead of the plain-LSP fallback.
const ExperimentalCapability = "reprise"

// ConfigSection is the workspace/configuration section holding the settings.
const ConfigSection = "reprise"

// ProtectedSettings are the settings the server takes from the user's level only (the user
// settings file and initializationOptions), never from workspace/configuration or
// didChangeConfiguration, which clients fill from the project too. The editors keep them out of a
// project's reach on their side as well (VS Code's machineKeys, Neovim's protected_settings).
var ProtectedSettings = []string{"allow", "sandbox", "allowNetwork", "hidePaths", "readPaths", "provider", "baseURL", "apiKeyEnv", "mcpServers"}

// SpendingSettings are the settings whose user level comes from the user settings file and
// initializationOptions, and which workspace/configuration and didChangeConfiguration may only
// lower (spending.go). The editors send the user's values in initializationOptions and a
// project's through the workspace's channel only (VS Code's spendingKeys, Neovim's
// spending_settings).
var SpendingSettings = []string{"sessionTokenCap", "maxCostUSD", "prices", "models"}

// CostSettings set what a token costs or how many a session spends. From the workspace's channel
// a value dearer than the user's level is held to it (boundCosts); the user's level is set by the
// user settings file, initializationOptions and MethodDidChangeUserSettings. The editors send the
// user's values there (VS Code's costKeys, Neovim's cost_settings).
var CostSettings = []string{"model", "compactionModel", "thinking", "contextBudget", "maxTurnRequests", "explicitCache", "explicitCacheIdle",
	"cacheHead", "subagents", "subagentModel", "subagentBudget", "subagentParallel", "subagentMaxCalls"}

// Approval actions offered with window/showMessageRequest. No answer, null, or any other title
// means Reject.
const (
	ActionAllowOnce   = "Allow once"
	ActionAlwaysAllow = "Always allow"
	ActionReject      = "Reject"
)

// Actions of the question asked before a server declared by the workspace's .vscode/mcp.json
// starts. No answer, null, or any other title means it does not start on this connection.
const (
	ActionStartServer     = "Start it"
	ActionDontStartServer = "Do not start"
)

// Actions of the question asked before a very broad workspace (the file system's root, the home
// directory, a system directory) is used. No answer or null asks again with the next command;
// ActionRefuseWorkspace holds for the connection.
const (
	ActionUseWorkspace    = "Use it as the workspace"
	ActionRefuseWorkspace = "Do not use it"
)

// States of an MCP server in reprise.mcp.
const (
	MCPStateStarting  = "starting"
	MCPStateRunning   = "running"
	MCPStateFailed    = "failed"
	MCPStateStopped   = "stopped"
	MCPStateUntrusted = "untrusted" // declared by the workspace, not started: the user did not trust it
)

// Session update kinds (the sessionUpdate field), after the Agent Client Protocol's session/update.
const (
	UpdateMessageChunk   = "agent_message_chunk"
	UpdateThoughtChunk   = "agent_thought_chunk"
	UpdateToolCall       = "tool_call"
	UpdateToolCallUpdate = "tool_call_update"
	UpdateCompaction     = "compaction"
	UpdateTurnEnd        = "turn_end"
	UpdateRetry          = "retry"
	// UpdatePins carries a session's pins whenever they change (pins: [...]).
	UpdatePins = "pins"
	// UpdatePlan carries the agent's whole plan whenever it writes one (entries: [{description,
	// status}]), as ACP's plan update does.
	UpdatePlan = "plan"
	// UpdateSubagent carries a subagent's progress (subagent: {...}) while the task call that runs
	// it is in progress: started, the tool it runs, each model call, its end.
	UpdateSubagent = "subagent"
)

// Stop reasons (turn_end's stopReason).
const (
	StopEndTurn         = "end_turn"
	StopCancelled       = "cancelled"
	StopCapped          = "capped" // the session reached sessionTokenCap or maxCostUSD
	StopError           = "error"
	StopMaxTurnRequests = "max_turn_requests"
	StopCompactionLimit = "compaction_limit" // compactions in a row left the context at blockAt or above
)

// Tool call statuses (tool_call and tool_call_update's status, and history entries').
const (
	ToolStatusInProgress = "in_progress"
	ToolStatusCompleted  = "completed"
	ToolStatusFailed     = "failed"
)

// Tool kinds (tool_call's kind, a history entry's toolKind), after the Agent Client Protocol's.
const (
	ToolKindRead    = "read"
	ToolKindEdit    = "edit"
	ToolKindSearch  = "search"
	ToolKindExecute = "execute"
	ToolKindThink   = "think"
	ToolKindOther   = "other"
)

// Compaction states: a compaction update's state, and contextUsage's compaction.state (idle,
// running or blocking).
const (
	CompactionIdle      = "idle"
	CompactionRunning   = "running"
	CompactionBlocking  = "blocking"
	CompactionDone      = "done"
	CompactionCancelled = "cancelled"
	CompactionSkipped   = "skipped"
)

// Compaction triggers (a compaction update's and a checkpoint's trigger).
const (
	TriggerAuto   = "auto"
	TriggerManual = "manual"
)

// Usage sources (contextUsage's source): the model's own count, or partly estimated.
const (
	SourceUsage    = "usage"
	SourceEstimate = "estimate"
)

// Session statuses (reprise.context's status).
const (
	StatusIdle    = "idle"
	StatusRunning = "running"
	StatusCapped  = "capped"
)

// History entry kinds (reprise.history's entries).
const (
	EntryUser       = "user"
	EntryAgent      = "agent"
	EntryThought    = "thought"
	EntryTool       = "tool"
	EntryCompaction = "compaction"
	EntryTurnEnd    = "turn_end" // with the turn's changed files and what became of each
)

// Review states of a turn's changed file (a file of turn_end's and of a history turn end's
// changes): nothing yet, kept, undone, or an undo refused (with its reason).
const (
	ReviewPending = "pending"
	ReviewKept    = "kept"
	ReviewUndone  = "undone"
	ReviewRefused = "refused"
)

// Values of the sandbox setting.
const (
	SandboxWorkspaceWrite = "workspace-write"
	SandboxOff            = "off"
)

// ServerName is reported in serverInfo.
const ServerName = "reprise"

// Error codes beyond JSON-RPC's own.
const (
	// CodeModelUnavailable: the model cannot be reached or is not configured (no API key).
	CodeModelUnavailable = -32001
	// CodeRequestCancelled is LSP's RequestCancelled.
	CodeRequestCancelled = -32800
)

// The agent's values, each mapped to its wire name: renaming an agent constant or changing its
// value cannot change the protocol, and TestWireNamesCoverAgent fails when the agent gains a value
// with no wire name here.
var (
	// updateNames: the events sent as reprise/sessionUpdate. "" marks the ones that are not.
	updateNames = map[agent.EventType]string{
		agent.EventText:       UpdateMessageChunk,
		agent.EventThought:    UpdateThoughtChunk,
		agent.EventToolCall:   UpdateToolCall,
		agent.EventToolUpdate: UpdateToolCallUpdate,
		agent.EventCompaction: UpdateCompaction,
		agent.EventTurnEnd:    UpdateTurnEnd,
		agent.EventRetry:      UpdateRetry,
		agent.EventPins:       UpdatePins,
		agent.EventPlan:       UpdatePlan,
		agent.EventSubagent:   UpdateSubagent,
		agent.EventUsage:      "", // sent as reprise/contextUsage
		agent.EventModelCall:  "", // a row of the command line's turn table
		agent.EventWarning:    "", // sent as window/showMessage
	}
	stopNames = map[agent.StopReason]string{
		agent.StopEndTurn:         StopEndTurn,
		agent.StopCancelled:       StopCancelled,
		agent.StopCapped:          StopCapped,
		agent.StopError:           StopError,
		agent.StopMaxTurnRequests: StopMaxTurnRequests,
		agent.StopCompactionLimit: StopCompactionLimit,
	}
	toolStatusNames = map[agent.ToolStatus]string{
		agent.ToolInProgress: ToolStatusInProgress,
		agent.ToolCompleted:  ToolStatusCompleted,
		agent.ToolFailed:     ToolStatusFailed,
	}
	toolKindNames = map[tools.Kind]string{
		tools.KindRead:    ToolKindRead,
		tools.KindEdit:    ToolKindEdit,
		tools.KindSearch:  ToolKindSearch,
		tools.KindExecute: ToolKindExecute,
		tools.KindThink:   ToolKindThink,
		tools.KindOther:   ToolKindOther,
	}
	compactionNames = map[agent.CompactionState]string{
		agent.CompactionIdle:      CompactionIdle,
		agent.CompactionRunning:   CompactionRunning,
		agent.CompactionBlocking:  CompactionBlocking,
		agent.CompactionDone:      CompactionDone,
		agent.CompactionCancelled: CompactionCancelled,
		agent.CompactionSkipped:   CompactionSkipped,
	}
	triggerNames = map[contextwin.Trigger]string{
		contextwin.TriggerAuto:   TriggerAuto,
		contextwin.TriggerManual: TriggerManual,
	}
	sourceNames = map[contextwin.Source]string{
		contextwin.SourceUsage:    SourceUsage,
		contextwin.SourceEstimate: SourceEstimate,
	}
	statusNames = map[agent.Status]string{
		agent.StatusIdle:    StatusIdle,
		agent.StatusRunning: StatusRunning,
		agent.StatusCapped:  StatusCapped,
	}
	entryNames = map[agent.EntryKind]string{
		agent.EntryUser:       EntryUser,
		agent.EntryAgent:      EntryAgent,
		agent.EntryThought:    EntryThought,
		agent.EntryTool:       EntryTool,
		agent.EntryCompaction: EntryCompaction,
		agent.EntryTurnEnd:    EntryTurnEnd,
	}
	reviewNames = map[agent.ReviewState]string{
		agent.ReviewPending: ReviewPending,
		agent.ReviewKept:    ReviewKept,
		agent.ReviewUndone:  ReviewUndone,
		agent.ReviewRefused: ReviewRefused,
	}
	sandboxNames = map[sandbox.Mode]string{
		sandbox.WorkspaceWrite: SandboxWorkspaceWrite,
		sandbox.Off:            SandboxOff,
	}
)

// wire is v's wire name in names. Every value the agent defines has one; a value that has none
// (it could only come from a log written by another version) goes out as it is.
func wire[V ~string](names map[V]string, v V) string {
	if n, ok := names[v]; ok {
		return n
	}
	return string(v)
}

// parseSandbox reads the sandbox setting; "" is the default.
func parseSandbox(s string) (sandbox.Mode, error) {
	if s == "" {
		return sandbox.WorkspaceWrite, nil
	}
	for m, name := range sandboxNames {
		if name == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("sandbox must be %q or %q, got %q", SandboxWorkspaceWrite, SandboxOff, s)
}
