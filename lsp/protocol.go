// Package lsp is Reprise's editor backend: JSON-RPC 2.0 with LSP framing over stdio. Standard LSP
// where it fits (lifecycle, executeCommand, progress, showMessageRequest, configuration, text
// synchronisation), and two custom notifications for clients that declare
// capabilities.experimental.reprise. The wire contract is PROTOCOL.md; the names below are its
// single source of truth, and the editor clients are tested against them.
package lsp

// Custom notifications, server → client.
const (
	MethodContextUsage  = "reprise/contextUsage"
	MethodSessionUpdate = "reprise/sessionUpdate"
)

// Commands, through workspace/executeCommand with arguments [ {…} ].
const (
	CommandAsk            = "reprise.ask"
	CommandCancel         = "reprise.cancel"
	CommandCompact        = "reprise.compact"
	CommandContext        = "reprise.context"
	CommandCheckpoints    = "reprise.checkpoints"
	CommandCheckpoint     = "reprise.checkpoint"
	CommandSessions       = "reprise.sessions"
	CommandNewSession     = "reprise.newSession"
	CommandResume         = "reprise.resume"
	CommandRestore        = "reprise.restore"
	CommandUndoCompaction = "reprise.undoCompaction"
	// CommandShowContext shows the /context view with window/showMessage, for plain clients
	// (code action "Show context").
	CommandShowContext = "reprise.showContext"
	// CommandHistory returns a session's whole conversation, for an editor reopening it.
	CommandHistory = "reprise.history"
)

// Commands lists every command the server announces in executeCommandProvider.
var Commands = []string{
	CommandAsk, CommandCancel, CommandCompact, CommandContext, CommandCheckpoints,
	CommandCheckpoint, CommandSessions, CommandNewSession, CommandResume, CommandRestore,
	CommandUndoCompaction, CommandShowContext, CommandHistory,
}

// ExperimentalCapability is the key a client sets to true in capabilities.experimental to get
// the custom notifications instead of the plain-LSP fallback.
const ExperimentalCapability = "reprise"

// ConfigSection is the workspace/configuration section holding the settings.
const ConfigSection = "reprise"

// Approval actions offered with window/showMessageRequest. No answer, null, or any other title
// means Reject.
const (
	ActionAllowOnce   = "Allow once"
	ActionAlwaysAllow = "Always allow"
	ActionReject      = "Reject"
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
