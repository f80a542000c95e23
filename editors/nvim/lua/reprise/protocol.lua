-- Names shared with the server. The single source of truth is lsp/protocol.go; the test suite
-- (test/protocol_spec.lua) checks that every string here matches its Go constant.
local M = {}

M.method = {
  context_usage = 'reprise/contextUsage', -- MethodContextUsage
  session_update = 'reprise/sessionUpdate', -- MethodSessionUpdate
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
  undo_compaction = 'reprise.undoCompaction', -- CommandUndoCompaction
  history = 'reprise.history', -- CommandHistory
}

M.experimental_capability = 'reprise' -- ExperimentalCapability
M.config_section = 'reprise' -- ConfigSection
M.server_name = 'reprise' -- ServerName

M.action = {
  allow_once = 'Allow once', -- ActionAllowOnce
  always_allow = 'Always allow', -- ActionAlwaysAllow
  reject = 'Reject', -- ActionReject
}

M.update = {
  message_chunk = 'agent_message_chunk', -- UpdateMessageChunk
  thought_chunk = 'agent_thought_chunk', -- UpdateThoughtChunk
  tool_call = 'tool_call', -- UpdateToolCall
  tool_call_update = 'tool_call_update', -- UpdateToolCallUpdate
  compaction = 'compaction', -- UpdateCompaction
  turn_end = 'turn_end', -- UpdateTurnEnd
  retry = 'retry', -- UpdateRetry
}

M.code = {
  invalid_request = -32600,
  method_not_found = -32601,
  invalid_params = -32602,
  model_unavailable = -32001, -- CodeModelUnavailable
  request_cancelled = -32800, -- CodeRequestCancelled
}

return M
