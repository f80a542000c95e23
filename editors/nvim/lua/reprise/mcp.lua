-- :Reprise mcp — the user's MCP servers (reprise.mcp) in a floating window: each server's state,
-- where it was declared, its tools and what their declarations cost in every request.
local protocol = require('reprise.protocol')
local util = require('reprise.util')

local S = protocol.mcp_state

local M = {}

local function plural(n, one)
  return string.format('%d %s%s', n, one, n == 1 and '' or 's')
end

-- The lines of one server: a header, its error when it did not start, then its tools.
local function server_lines(s)
  local declared, deferred = 0, 0
  for _, t in ipairs(s.tools or {}) do
    if t.deferred then
      deferred = deferred + 1
    else
      declared = declared + 1
    end
  end
  local lines = {
    string.format('%s  %s · %s · %s', s.name or '?', s.state or '?', s.type or '?', s.source or '?'),
    string.format('  %d declared, %d via catalogue · %s tokens per request', declared, deferred,
      util.kilo(s.tokens or 0)),
  }
  if s.error and s.error ~= '' and s.state ~= S.running then
    for i, l in ipairs(util.lines(s.error)) do
      table.insert(lines, (i == 1 and '  error: ' or '         ') .. l)
    end
  elseif s.state == S.untrusted then
    table.insert(lines, '  not started: declared by the workspace, and not agreed to')
  end
  for _, t in ipairs(s.tools or {}) do
    table.insert(lines, string.format('  %-40s %7s%s', t.name or t.tool or '?', util.kilo(t.tokens or 0),
      t.deferred and '  (via catalogue)' or ''))
  end
  return lines
end

--- The lines of the view for a reprise.mcp result.
---@param r table {servers: [{name, source, type, state, error?, tools, tokens}], tokens}
---@return string[]
function M.render(r)
  r = type(r) == 'table' and r or {}
  local servers = type(r.servers) == 'table' and r.servers or {}
  local tools = 0
  for _, s in ipairs(servers) do
    tools = tools + #(s.tools or {})
  end
  local lines = {
    string.format('MCP servers · %s, %s · %s tokens per request', plural(#servers, 'server'), plural(tools, 'tool'),
      util.kilo(r.tokens or 0)),
  }
  local deferred, own = false, 0
  for _, s in ipairs(servers) do
    own = own + (s.tokens or 0)
    for _, t in ipairs(s.tools or {}) do
      deferred = deferred or t.deferred == true
    end
  end
  if deferred then
    table.insert(lines, string.format('Past mcpToolBudget: the model finds the rest with mcp_find_tools and calls them '
      .. 'with mcp_call_tool (%s tokens)', util.kilo(math.max(0, (r.tokens or 0) - own))))
  end
  if #servers == 0 then
    vim.list_extend(lines, { '', 'None, or no session has needed them yet (they start with the first one).',
      'Declare them in setup({ settings = { mcpServers = { … } } }), in',
      "Reprise's mcp.json, or in the workspace's .vscode/mcp.json." })
  end
  for _, s in ipairs(servers) do
    table.insert(lines, '')
    vim.list_extend(lines, server_lines(s))
  end
  return lines
end

--- Shows a reprise.mcp result in a floating window; q or <Esc> closes it.
---@param r table
---@return integer win
function M.show(r)
  return util.float(M.render(r), 'reprise-mcp')
end

return M
