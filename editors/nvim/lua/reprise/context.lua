-- :Reprise context — the /context view (reprise.context) in a floating window: usage, the
-- breakdown by category (the MCP servers' shares under MCP tools), and the largest items in the messages.
local util = require('reprise.util')

local M = {}

local categories = {
  { 'systemPrompt', 'System prompt' },
  { 'customInstructions', 'Custom instructions' },
  { 'tools', 'System tools' },
  { 'mcpTools', 'MCP tools' },
  { 'messages', 'Messages' },
  { 'free', 'Free space' },
  { 'buffer', 'Reserved buffer' },
}

local function bar(n, size, width)
  if not size or size <= 0 then
    return ''
  end
  return string.rep('█', math.floor(width * n / size + 0.5))
end

--- The rows under "MCP tools": what each server's declared tools cost per request, as the
--- server's own text puts them (the catalogue, server "", first when tools are deferred).
---@param mcp table[]|nil reprise.context's mcp: {server, tools, deferred?, tokens}
---@return string[]
function M.mcp_rows(mcp)
  local out = {}
  for _, m in ipairs(type(mcp) == 'table' and mcp or {}) do
    local name = (m.server == nil or m.server == '') and '(catalogue)' or m.server
    if vim.fn.strchars(name) > 18 then
      name = vim.fn.strcharpart(name, 0, 17) .. '…'
    end
    local label = string.format('%d tools', m.tools or 0)
    if (m.deferred or 0) > 0 then
      label = label .. string.format(', %d via catalogue', m.deferred)
    end
    table.insert(out, string.format('    %-18s %7s  %s', name, util.kilo(m.tokens or 0), label))
  end
  return out
end

--- The lines of the view for a reprise.context result.
---@param r table the result of reprise.context
---@return string[]
function M.render(r)
  local lines = {
    string.format('Context %d%% · %s/%s tokens (%s) · %s', math.floor((r.percent or 0) + 0.5), util.kilo(r.used),
      util.kilo(r.size), r.source or '?', (r.servedModel and r.servedModel ~= '' and r.servedModel ~= r.model)
        and string.format('%s (answered by %s)', r.model or '', r.servedModel) or (r.model or '')),
    string.format('Compacts at %d%%, blocks at %d%% · %d checkpoint(s) · %s',
      math.floor((r.compactAt or 0) * 100 + 0.5),
      math.floor((r.blockAt or 0) * 100 + 0.5), r.checkpoints or 0, r.status or ''),
    '',
    'Breakdown',
  }
  local b = r.breakdown or {}
  for _, c in ipairs(categories) do
    local n = b[c[1]] or 0
    table.insert(lines, string.format('  %-20s %7s  %s', c[2], util.kilo(n), bar(n, r.size, 30)))
    if c[1] == 'mcpTools' then
      vim.list_extend(lines, M.mcp_rows(r.mcp))
    end
  end
  table.insert(lines, '')
  table.insert(lines, 'Largest items')
  local largest = r.largest or {}
  if #largest == 0 then
    table.insert(lines, '  (none)')
  end
  for i, item in ipairs(largest) do
    if i > 10 then
      break
    end
    local label = item.path and item.path ~= '' and item.path or item.label or ''
    table.insert(lines, string.format('  %7s  %-8s %s%s', util.kilo(item.tokens or 0), item.kind or '', label,
      item.stale and ' (stale)' or ''))
  end
  local t = r.totals
  if t then
    table.insert(lines, '')
    table.insert(lines, string.format('Session: %s in (%s cached) · %s out · %s · %s',
      util.kilo(t.inputTokens), util.kilo(t.cachedTokens), util.kilo(t.outputTokens), util.cost(t.cost),
      util.turns_and_calls(r.turns, r.calls)))
  end
  local c = r.cache
  if c then
    table.insert(lines, string.format('Cache: %s of %s expected cached tokens · %d %% of the expected hits',
      util.kilo(c.reported), util.kilo(c.expected), math.floor(100 * c.hitRate + 1e-9)))
  end
  return lines
end

--- Shows a reprise.context result in a floating window; q or <Esc> closes it.
---@param r table
---@return integer win
function M.show(r)
  return util.float(M.render(r), 'reprise-context')
end

return M
