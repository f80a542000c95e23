-- :Reprise {subcommand} [argument] and its completion.
local actions = require('reprise.actions')
local util = require('reprise.util')

local M = {}

local function number_arg(name, rest, fn)
  local n = tonumber(rest)
  if not n then
    return util.notify(name .. ' needs a number', vim.log.levels.ERROR)
  end
  fn(n)
end

-- subcommand = function(rest of the line)
M.subcommands = {
  ask = function(rest)
    actions.ask(rest)
  end,
  cancel = actions.cancel,
  changes = actions.changes,
  chat = actions.chat,
  checkpoint = function(rest)
    if rest == '' then
      return actions.checkpoints()
    end
    number_arg('checkpoint', rest, actions.checkpoint)
  end,
  checkpoints = actions.checkpoints,
  compact = function(rest)
    actions.compact(rest)
  end,
  context = actions.context,
  diff = function(rest)
    actions.diff(rest)
  end,
  keephunk = function()
    actions.hunk('keep')
  end,
  mcp = actions.mcp,
  models = function(rest)
    actions.models(rest)
  end,
  new = actions.new,
  pin = function(rest)
    actions.pin(rest)
  end,
  pins = function()
    actions.pins()
  end,
  unpin = function(rest)
    actions.unpin(rest)
  end,
  forget = function(rest)
    actions.forget(rest)
  end,
  fork = function(rest)
    actions.fork(rest)
  end,
  export = function(rest)
    actions.export(rest)
  end,
  restore = function(rest)
    if rest == '' then
      return actions.restore(nil)
    end
    number_arg('restore', rest, actions.restore)
  end,
  resume = function(rest)
    actions.resume(rest)
  end,
  sessions = actions.sessions,
  subagents = actions.subagents,
  undo = function(rest)
    actions.undo(rest)
  end,
  undohunk = function()
    actions.hunk('undo')
  end,
}

--- Runs `:Reprise {args}`; no subcommand opens the chat.
---@param args string
function M.run(args)
  local sub, rest = (args or ''):match('^%s*(%S*)%s*(.-)%s*$')
  if sub == '' then
    return actions.chat()
  end
  local fn = M.subcommands[sub]
  if not fn then
    return util.notify('unknown subcommand ' .. sub .. '; try ' .. table.concat(M.names(), ', '), vim.log.levels.ERROR)
  end
  fn(rest)
end

---@return string[] the subcommands, sorted
function M.names()
  local out = vim.tbl_keys(M.subcommands)
  table.sort(out)
  return out
end

local function starting(list, lead)
  return vim.tbl_filter(function(s)
    return s:sub(1, #lead) == lead
  end, list)
end

--- Completion for :Reprise (subcommands, then session ids or checkpoint numbers seen last, or files).
---@param arglead string
---@param cmdline string
---@return string[]
function M.complete(arglead, cmdline)
  local words = vim.split(vim.trim(cmdline), '%s+')
  local n = #words + (cmdline:match('%s$') and 1 or 0)
  if n <= 2 then
    return starting(M.names(), arglead)
  end
  if n == 3 and words[2] == 'resume' then
    return starting(actions.known.sessions, arglead)
  end
  if n == 3 and (words[2] == 'diff' or words[2] == 'undo') then
    return vim.fn.getcompletion(arglead, 'file')
  end
  if n == 3 and words[2] == 'pin' then
    return vim.list_extend(starting({ 'message', 'text' }, arglead), vim.fn.getcompletion(arglead, 'file'))
  end
  if n == 3 and words[2] == 'unpin' then
    return starting(require('reprise.chat').pin_ids(), arglead)
  end
  if n == 3 and words[2] == 'forget' then
    return starting(actions.known.notes, arglead)
  end
  if n == 3 and words[2] == 'export' then
    return vim.list_extend(starting({ 'html', 'md' }, arglead), vim.fn.getcompletion(arglead, 'file'))
  end
  if n == 4 and words[2] == 'export' then
    return vim.fn.getcompletion(arglead, 'file')
  end
  if n == 3 and words[2] == 'fork' then
    return starting({ 'checkpoint', 'here', 'turn' }, arglead)
  end
  if n == 4 and words[2] == 'fork' and words[3] == 'checkpoint' then
    return starting(actions.known.checkpoints, arglead)
  end
  if n == 3 and words[2] == 'models' then
    return starting({ 'all' }, arglead)
  end
  if n == 3 and words[2] == 'checkpoint' then
    return starting(actions.known.checkpoints, arglead)
  end
  return {}
end

return M
