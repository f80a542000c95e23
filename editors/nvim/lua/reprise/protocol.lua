-- Names shared with the server. The single source of truth is lsp/protocol.go: every constant
-- there is here, once, with its Go name in the line's comment, and nothing else is.
-- lsp/names_test.go (TestNeovimProtocolNames) checks both directions; test/unit_spec.lua
-- ('protocol names match lsp/protocol.go') checks the strings from the plugin's side.
local M = {}

M.method = {
  context_usage = 'reprise/contextUsage', -- MethodContextUsage
  session_update = 'reprise/sessionUpdate', -- MethodSessionUpdate
  did_change_user_settings = 'reprise/didChangeUserSettings', -- MethodDidChangeUserSettings (client → server)
}

M.command = {
  ask = 'reprise.ask', -- CommandAsk
  cancel = 'reprise.cancel', -- CommandCancel
  compact = 'reprise.compact', -- CommandCompact
  context = 'reprise.context', -- CommandContext
  checkpoints = 'reprise.checkpoints', -- CommandCheckpoints
  checkpoint = 'reprise.checkpoint', -- CommandCheckpoint
  sessions = 'reprise.sessions', -- CommandSessions
  new_session = 'reprise.newSession', -- CommandNewSession
  resume = 'reprise.resume', -- CommandResume
  restore = 'reprise.restore', -- CommandRestore
  changes = 'reprise.changes', -- CommandChanges
  undo_compaction = 'reprise.undoCompaction', -- CommandUndoCompaction
  history = 'reprise.history', -- CommandHistory
  show_context = 'reprise.showContext', -- CommandShowContext (code action for plain clients)
  undo_file = 'reprise.undoFile', -- CommandUndoFile (code action for plain clients)
  undo_hunk = 'reprise.undoHunk', -- CommandUndoHunk (code action for plain clients)
  keep_hunk = 'reprise.keepHunk', -- CommandKeepHunk (code action for plain clients)
  show_changes = 'reprise.showChanges', -- CommandShowChanges (code action for plain clients)
  mcp = 'reprise.mcp', -- CommandMCP
  models = 'reprise.models', -- CommandModels
  keep = 'reprise.keep', -- CommandKeep
  pin = 'reprise.pin', -- CommandPin
  unpin = 'reprise.unpin', -- CommandUnpin
  pins = 'reprise.pins', -- CommandPins
  forget_note = 'reprise.forgetNote', -- CommandForgetNote
  fork = 'reprise.fork', -- CommandFork
  export = 'reprise.export', -- CommandExport
  cancel_subagent = 'reprise.cancelSubagent', -- CommandCancelSubagent
}

M.experimental_capability = 'reprise' -- ExperimentalCapability
M.config_section = 'reprise' -- ConfigSection
M.server_name = 'reprise' -- ServerName

M.action = {
  allow_once = 'Allow once', -- ActionAllowOnce
  always_allow = 'Always allow', -- ActionAlwaysAllow
  reject = 'Reject', -- ActionReject
  start_server = 'Start it', -- ActionStartServer
  dont_start_server = 'Do not start', -- ActionDontStartServer
  use_workspace = 'Use it as the workspace', -- ActionUseWorkspace
  refuse_workspace = 'Do not use it', -- ActionRefuseWorkspace
}

M.mcp_state = {
  starting = 'starting', -- MCPStateStarting
  running = 'running', -- MCPStateRunning
  failed = 'failed', -- MCPStateFailed
  stopped = 'stopped', -- MCPStateStopped
  untrusted = 'untrusted', -- MCPStateUntrusted
}

M.update = {
  message_chunk = 'agent_message_chunk', -- UpdateMessageChunk
  thought_chunk = 'agent_thought_chunk', -- UpdateThoughtChunk
  tool_call = 'tool_call', -- UpdateToolCall
  tool_call_update = 'tool_call_update', -- UpdateToolCallUpdate
  compaction = 'compaction', -- UpdateCompaction
  turn_end = 'turn_end', -- UpdateTurnEnd
  retry = 'retry', -- UpdateRetry
  pins = 'pins', -- UpdatePins
  plan = 'plan', -- UpdatePlan
  subagent = 'subagent', -- UpdateSubagent
}

-- turn_end's stopReason
M.stop = {
  end_turn = 'end_turn', -- StopEndTurn
  cancelled = 'cancelled', -- StopCancelled
  capped = 'capped', -- StopCapped
  error = 'error', -- StopError
  max_turn_requests = 'max_turn_requests', -- StopMaxTurnRequests
  compaction_limit = 'compaction_limit', -- StopCompactionLimit
}

M.tool_status = {
  in_progress = 'in_progress', -- ToolStatusInProgress
  completed = 'completed', -- ToolStatusCompleted
  failed = 'failed', -- ToolStatusFailed
}

M.tool_kind = {
  read = 'read', -- ToolKindRead
  edit = 'edit', -- ToolKindEdit
  search = 'search', -- ToolKindSearch
  execute = 'execute', -- ToolKindExecute
  think = 'think', -- ToolKindThink
  other = 'other', -- ToolKindOther
}

-- a compaction update's state, and contextUsage's compaction.state (idle, running or blocking)
M.compaction = {
  idle = 'idle', -- CompactionIdle
  running = 'running', -- CompactionRunning
  blocking = 'blocking', -- CompactionBlocking
  done = 'done', -- CompactionDone
  cancelled = 'cancelled', -- CompactionCancelled
  skipped = 'skipped', -- CompactionSkipped
}

M.trigger = {
  auto = 'auto', -- TriggerAuto
  manual = 'manual', -- TriggerManual
}

-- contextUsage's source
M.source = {
  usage = 'usage', -- SourceUsage
  estimate = 'estimate', -- SourceEstimate
}

-- reprise.context's status
M.status = {
  idle = 'idle', -- StatusIdle
  running = 'running', -- StatusRunning
  capped = 'capped', -- StatusCapped
}

-- reprise.history's entry kinds
M.entry = {
  user = 'user', -- EntryUser
  agent = 'agent', -- EntryAgent
  thought = 'thought', -- EntryThought
  tool = 'tool', -- EntryTool
  compaction = 'compaction', -- EntryCompaction
  turn_end = 'turn_end', -- EntryTurnEnd
}

-- what became of a file a turn changed (turn_end's and a history turn end's changes)
M.review = {
  pending = 'pending', -- ReviewPending
  kept = 'kept', -- ReviewKept
  undone = 'undone', -- ReviewUndone
  refused = 'refused', -- ReviewRefused
}

-- values of the sandbox setting
M.sandbox = {
  workspace_write = 'workspace-write', -- SandboxWorkspaceWrite
  off = 'off', -- SandboxOff
}

M.code = {
  invalid_request = -32600,
  method_not_found = -32601,
  invalid_params = -32602,
  model_unavailable = -32001, -- CodeModelUnavailable
  request_cancelled = -32800, -- CodeRequestCancelled
}

return M
