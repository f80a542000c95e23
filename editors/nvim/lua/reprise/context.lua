-- :Reprise context — the /context view (reprise.context) in a floating window: usage, the
-- breakdown by category (the MCP servers' shares under MCP tools), and the largest items in the
-- messages. The labels are VS Code's context view's (editors/vscode/src/contextHtml.ts, meter.ts).
local util = require('reprise.util')

local M = {}

-- VS Code's breakdownLabels, in its order.
M.categories = {
  { 'systemPrompt', 'System prompt' },
  { 'customInstructions', 'Custom instructions' },
  { 'workspaceMap', 'Workspace map' },
  { 'tools', 'Tools' },
  { 'mcpTools', 'MCP tools' },
  { 'messages', 'Messages' },
  { 'free', 'Free' },
  { 'buffer', 'Buffer' },
}

local function count(n, noun)
  n = n or 0
  return string.format('%d %s%s', n, noun, n == 1 and '' or 's')
end

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

--- The agent's plan and notes (reprise.context's state), as the head restates them after each
--- compaction: the plan's progress and items, each note's key and value on one line.
---@param state table|nil {plan?, notes?}
---@return string[]
function M.memo_lines(state)
  local lines = {}
  local plan = type(state) == 'table' and type(state.plan) == 'table' and state.plan or {}
  if #plan > 0 then
    local done = 0
    for _, t in ipairs(plan) do
      done = done + (t.status == 'completed' and 1 or 0)
    end
    vim.list_extend(lines, { '', string.format('Plan · %d of %d done', done, #plan) })
    for _, t in ipairs(plan) do
      local status = (t.status or ''):gsub('_', ' ')
      table.insert(lines, string.format('  %-12s %s', status, t.description or ''))
    end
  end
  local notes = type(state) == 'table' and type(state.notes) == 'table' and state.notes or {}
  if #notes > 0 then
    vim.list_extend(lines, { '', string.format('Notes · %d, restated after each compaction (:Reprise forget {key})',
      #notes) })
    for _, n in ipairs(notes) do
      local value = (n.value or ''):gsub('%s+', ' ')
      table.insert(lines, string.format('  %-20s %s', n.key or '', value))
    end
  end
  return lines
end

--- The lines of the view for a reprise.context result.
---@param r table the result of reprise.context
---@return string[]
function M.render(r)
  local model = r.model or ''
  if r.servedModel and r.servedModel ~= '' and r.servedModel ~= r.model then
    model = string.format('%s (answered by %s)', model, r.servedModel)
  end
  local sub = { model }
  if r.sessionId and r.sessionId ~= '' then
    table.insert(sub, 'session ' .. r.sessionId)
  end
  if r.status and r.status ~= '' then
    table.insert(sub, r.status)
  end
  if r.source == 'estimate' then
    table.insert(sub, 'estimated')
  end
  local lines = {
    string.format('Context · %d%% · %s/%s tokens', math.floor((r.percent or 0) + 0.5), util.kilo(r.used),
      util.kilo(r.size)),
    table.concat(sub, ' · '),
    string.format('Compacts at %d%%, blocks at %d%% · %s · %s',
      math.floor((r.compactAt or 0) * 100 + 0.5), math.floor((r.blockAt or 0) * 100 + 0.5),
      count(r.compaction and r.compaction.count, 'compaction'), count(r.checkpoints, 'checkpoint')),
  }
  local decision = type(r.compaction) == 'table' and r.compaction.decision
  if type(decision) == 'string' and decision ~= '' then
    table.insert(lines, decision)
  end
  vim.list_extend(lines, { '', 'Breakdown' })
  local b = r.breakdown or {}
  for _, c in ipairs(M.categories) do
    local n = b[c[1]] or 0
    -- The map is a row only when the head has one.
    if c[1] ~= 'workspaceMap' or n > 0 then
      local pct = (r.size and r.size > 0) and 100 * n / r.size or 0
      table.insert(lines, string.format('  %-20s %7s %5.1f%%  %s', c[2], util.kilo(n), pct, bar(n, r.size, 30)))
    end
    if c[1] == 'mcpTools' then
      vim.list_extend(lines, M.mcp_rows(r.mcp))
    end
  end
  local t = r.totals
  if t then
    table.insert(lines, '')
    local cached = (t.cachedTokens or 0) > 0 and string.format(' (%s cached)', util.kilo(t.cachedTokens)) or ''
    local thinking = (t.thoughtTokens or 0) > 0 and string.format(' (%s thinking)', util.kilo(t.thoughtTokens)) or ''
    table.insert(lines, string.format('Session: %s in%s · %s out%s · %s · %s · %s',
      util.kilo(t.inputTokens), cached, util.kilo(t.outputTokens), thinking, util.cost(t.cost),
      util.turns_and_calls(r.turns, r.calls), count(r.rereads, 're-read')))
    if t.summaries and t.summaries.text then
      table.insert(lines, 'Summaries: ' .. t.summaries.text)
    end
    if t.subagents and t.subagents.text then
      table.insert(lines, 'Subagents: ' .. t.subagents.text .. ', counted above')
    end
  end
  local pins = type(r.pins) == 'table' and r.pins or {}
  if #pins > 0 then
    local total = r.pinnedTokens
    if not total then
      total = 0
      for _, p in ipairs(pins) do
        total = total + (p.tokens or 0)
      end
    end
    vim.list_extend(lines, { '', string.format('Pinned · %s tokens, kept whatever is compacted', util.kilo(total)) })
    for _, p in ipairs(pins) do
      local label = p.kind == 'file' and p.path and p.path ~= '' and p.path or p.label or ''
      table.insert(lines, string.format('  %7s  %-8s %s  (%s)', util.kilo(p.tokens or 0), p.kind or '', label,
        p.id or ''))
    end
  end
  vim.list_extend(lines, M.memo_lines(r.state))
  table.insert(lines, '')
  table.insert(lines, 'Largest items')
  local largest = r.largest or {}
  if #largest == 0 then
    table.insert(lines, '  None yet.')
  end
  for i, item in ipairs(largest) do
    if i > 10 then
      break
    end
    local label = (item.path and item.path ~= '' and item.path or item.label or ''):gsub('%s+', ' ')
    -- A call's label starts with its tool, which the kind column already says.
    if item.kind and label:sub(1, #item.kind + 1) == item.kind .. ' ' then
      label = label:sub(#item.kind + 2)
    end
    table.insert(lines, string.format('  %7s  %-8s %s%s', util.kilo(item.tokens or 0), item.kind or '', label,
      item.stale and ' (stale)' or ''))
  end
  local cache = r.cache
  if cache then
    table.insert(lines, string.format('Cache: %s of %s expected cached tokens · %d %% of the expected hits',
      util.kilo(cache.reported), util.kilo(cache.expected), math.floor(100 * cache.hitRate + 1e-9)))
  end
  -- Why calls were billed in full, in the server's words.
  local misses = type(r.totals) == 'table' and r.totals.misses
  if type(misses) == 'table' and type(misses.text) == 'string' and misses.text ~= '' then
    table.insert(lines, misses.text)
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
