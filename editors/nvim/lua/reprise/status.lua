-- Context usage per session, the statusline component and the User RepriseContextUsage event.
local protocol = require('reprise.protocol')
local util = require('reprise.util')

local M = {}

-- usage[session id] = the last reprise/contextUsage params for it.
local usage = {}
-- compacting[session id] = true while a compaction runs (from either side).
local compacting = {}
-- last session updated per client, for the statusline when no session is current yet.
local last = {}
-- waiting is true while an approval is asked (approvals.lua): the agent waits for the user.
local waiting = false

M.waiting_text = 'waiting for your approval'

M.compaction_mark = '⟳'

local pies = { '○', '◔', '◑', '◕', '●' }

--- The statusline text for a usage record: `◔ 42% 10.1k/24k`, with the compaction mark while
--- one runs. Pure, so it can be used with any statusline plugin.
---@param u table|nil reprise/contextUsage params
---@param running boolean|nil a compaction is in progress
---@return string
function M.render(u, running)
  if not u then
    return ''
  end
  local pct = tonumber(u.percent) or 0
  local pie = pies[math.min(#pies, math.floor(pct / 25) + 1)]
  local s = string.format('%s %d%% %s/%s', pie, math.floor(pct + 0.5), util.kilo(u.used), util.kilo(u.size))
  local state = u.compaction and u.compaction.state
  if running or state == protocol.compaction.running or state == protocol.compaction.blocking then
    s = s .. ' ' .. M.compaction_mark
  end
  return s
end

local function fire(u)
  local opts = { pattern = 'RepriseContextUsage', modeline = false }
  if util.has('0.8') then
    opts.data = u
  end
  pcall(vim.api.nvim_exec_autocmds, 'User', opts)
  pcall(vim.cmd, 'redrawstatus')
end

--- Records a reprise/contextUsage notification.
---@param client_id integer
---@param u table
function M.on_usage(client_id, u)
  usage[u.sessionId] = u
  last[client_id] = u.sessionId
  fire(u)
end

--- Marks a compaction running or finished for a session (manual compactions, sessionUpdate).
---@param session string|nil
---@param running boolean
function M.set_compacting(session, running)
  if session then
    compacting[session] = running or nil
    fire(usage[session])
  end
end

--- Marks an approval asked or answered: the statusline says the agent waits for the user.
---@param on boolean
function M.set_waiting(on)
  waiting = on and true or false
  pcall(vim.api.nvim_exec_autocmds, 'User', { pattern = 'RepriseApproval', modeline = false })
  pcall(vim.cmd, 'redrawstatus')
end

--- Whether an approval is waiting for the user.
---@return boolean
function M.is_waiting()
  return waiting
end

--- The last session a client reported usage for.
---@param client_id integer
---@return string|nil
function M.last(client_id)
  return last[client_id]
end

--- The usage record of a session, or of the client's last updated session.
---@param client_id integer|nil
---@param session string|nil
---@return table|nil
function M.get(client_id, session)
  session = session or (client_id and last[client_id])
  return session and usage[session] or nil
end

--- The statusline text for a client's session ('' before the first update), led by "waiting for
--- your approval" while an approval is asked.
---@param client_id integer|nil
---@param session string|nil
---@return string
function M.statusline(client_id, session)
  session = session or (client_id and last[client_id])
  local s = session and M.render(usage[session], compacting[session]) or ''
  if waiting then
    s = s == '' and M.waiting_text or (M.waiting_text .. ' · ' .. s)
  end
  return s
end

return M
