-- :Reprise context — the /context view (reprise.context) in a floating window: usage, the
-- breakdown by category, and the largest items in the messages.
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

--- The lines of the view for a reprise.context result.
---@param r table the result of reprise.context
---@return string[]
function M.render(r)
  local lines = {
    string.format('Context %d%% · %s/%s tokens (%s) · %s', math.floor((r.percent or 0) + 0.5), util.kilo(r.used),
      util.kilo(r.size), r.source or '?', r.model or ''),
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
    table.insert(lines, string.format('Session: %s in (%s cached) · %s out · %.4f %s · %d model calls',
      util.kilo(t.inputTokens), util.kilo(t.cachedTokens), util.kilo(t.outputTokens),
      t.cost and t.cost.amount or 0, t.cost and t.cost.currency or '', r.calls or 0))
  end
  return lines
end

--- Shows a reprise.context result in a floating window; q or <Esc> closes it.
---@param r table
---@return integer win
function M.show(r)
  local lines = M.render(r)
  local width = 20
  for _, l in ipairs(lines) do
    width = math.max(width, vim.fn.strdisplaywidth(l))
  end
  width = math.min(width + 2, vim.o.columns - 4)
  local height = math.min(#lines, vim.o.lines - 4)
  local buf = util.scratch(lines, 'reprise-context')
  vim.keymap.set('n', '<Esc>', '<cmd>close<cr>', { buffer = buf, silent = true, nowait = true })
  local win = vim.api.nvim_open_win(buf, true, {
    relative = 'editor',
    width = width,
    height = height,
    row = math.max(0, math.floor((vim.o.lines - height) / 2) - 1),
    col = math.max(0, math.floor((vim.o.columns - width) / 2)),
    style = 'minimal',
    border = 'rounded',
  })
  return win
end

return M
