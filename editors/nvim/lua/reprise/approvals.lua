-- Approvals: the server asks with window/showMessageRequest (Allow once / Always allow / Reject,
-- or its own actions for an MCP server or a broad workspace). The question opens a floating
-- window that stays until it is answered: each action has a key, and the statusline says
-- "waiting for your approval" meanwhile. No answer (<C-c>) is a rejection.
local protocol = require('reprise.protocol')
local status = require('reprise.status')
local util = require('reprise.util')

local M = {}

M.filetype = 'reprise-approval'

local function answer(choice)
  if type(choice) == 'string' and choice ~= '' then
    return { title = choice }
  end
  return vim.NIL
end

--- The key of each action: its first letter no earlier action took ("Allow once" a, "Always
--- allow" l, "Reject" r), and its number.
---@param titles string[]
---@return table[] {key, index, title}
function M.keys(titles)
  local used, out = {}, {}
  for i, t in ipairs(titles) do
    local key
    for j = 1, #t do
      local c = t:sub(j, j):lower()
      if c:match('%a') and not used[c] then
        used[c], key = true, c
        break
      end
    end
    table.insert(out, { key = key, index = i, title = t })
  end
  return out
end

--- confirm() buttons with the same accelerators: "&Allow once\nA&lways allow\n&Reject".
---@param titles string[]
---@return string
function M.buttons(titles)
  local out = {}
  for _, k in ipairs(M.keys(titles)) do
    local b = k.title
    if k.key then
      local at = k.title:lower():find(k.key, 1, true)
      b = k.title:sub(1, at - 1) .. '&' .. k.title:sub(at)
    end
    table.insert(out, b)
  end
  return table.concat(out, '\n')
end

--- The lines of the window: the question whole, then one line per action with its keys.
---@param message string
---@param titles string[]
---@return string[]
function M.render(message, titles)
  local lines = { 'Reprise asks for your approval', '' }
  for _, l in ipairs(vim.split(message or '', '\n', { plain = true })) do
    table.insert(lines, '  ' .. l)
  end
  table.insert(lines, '')
  for _, k in ipairs(M.keys(titles)) do
    table.insert(lines, string.format('  [%s] %s', k.key and (k.key .. ' or ' .. k.index) or tostring(k.index),
      k.title))
  end
  table.insert(lines, '')
  table.insert(lines, '  The agent waits for your answer. <C-c> rejects.')
  return lines
end

-- The question on screen: {buf, win, titles, message, finish}; nil when none is asked.
local pending
-- Questions asked while another is on screen (sessions run side by side): shown in turn.
local queue = {}

local function open_window(lines)
  local width = 30
  for _, l in ipairs(lines) do
    width = math.max(width, vim.fn.strdisplaywidth(l))
  end
  width = math.min(width + 2, vim.o.columns - 4)
  -- The window wraps: a line wider than it takes several rows, all of which must show.
  local rows = 0
  for _, l in ipairs(lines) do
    rows = rows + math.max(1, math.ceil(vim.fn.strdisplaywidth(l) / width))
  end
  local height = math.max(1, math.min(rows, vim.o.lines - 4))
  local buf = pending and pending.buf
  if not (buf and vim.api.nvim_buf_is_valid(buf)) then
    buf = vim.api.nvim_create_buf(false, true)
    vim.bo[buf].buftype = 'nofile'
    vim.bo[buf].bufhidden = 'hide' -- kept when a window is closed over it: it opens again
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
    vim.bo[buf].modifiable = false
    vim.bo[buf].filetype = M.filetype
  end
  local config = util.centered(width, height)
  config.zindex = 200 -- above other floats: the agent waits for this one
  local win = vim.api.nvim_open_win(buf, true, config)
  util.float_style(win)
  vim.wo[win].wrap = true
  return buf, win
end

local function close()
  local p = pending
  pending = nil
  status.set_waiting(false)
  if p and p.win and vim.api.nvim_win_is_valid(p.win) then
    pcall(vim.api.nvim_win_close, p.win, true)
  end
  if p and p.buf and vim.api.nvim_buf_is_valid(p.buf) then
    pcall(vim.api.nvim_buf_delete, p.buf, { force = true })
  end
end

-- Opens the pending question's window, and again whenever it is closed unanswered.
local function present()
  pcall(vim.cmd, 'stopinsert') -- the keys answer in normal mode
  local buf, win = open_window(M.render(pending.message, pending.titles))
  pending.buf, pending.win = buf, win
  vim.api.nvim_create_autocmd('WinClosed', {
    pattern = tostring(win),
    once = true,
    callback = function()
      vim.schedule(function()
        if pending and pending.win == win then
          present()
        end
      end)
    end,
  })
end

--- Shows the question; it stays until M.answer (a key in the window) settles it. Closing the
--- window another way opens it again.
---@param message string
---@param titles string[]
---@param finish fun(choice: string|nil)
function M.show(message, titles, finish)
  if pending then
    table.insert(queue, { message = message, titles = titles, finish = finish })
    return
  end
  pending = { titles = titles, message = message, finish = finish }
  status.set_waiting(true)
  present()
  local buf = pending.buf
  for _, k in ipairs(M.keys(titles)) do
    for _, lhs in ipairs({ k.key, tostring(k.index) }) do
      if lhs then
        vim.keymap.set('n', lhs, function()
          M.answer(k.title)
        end, { buffer = buf, nowait = true, silent = true, desc = k.title })
      end
    end
  end
  vim.keymap.set('n', '<C-c>', function()
    M.answer(nil)
  end, { buffer = buf, nowait = true, silent = true, desc = 'Reject' })
  pcall(vim.cmd, 'redraw')
end

--- The question on screen, for tests and statuslines: {message, titles, buf, win}, or nil.
---@return table|nil
function M.pending()
  return pending and { message = pending.message, titles = pending.titles, buf = pending.buf, win = pending.win }
end

--- Answers the question on screen with one of its actions (nil rejects).
---@param title string|nil
function M.answer(title)
  local p = pending
  if not p then
    return
  end
  close()
  p.finish(title)
  local nxt = table.remove(queue, 1)
  if nxt then
    M.show(nxt.message, nxt.titles, nxt.finish)
  end
end

--- Reads one key for the synchronous path (Neovim 0.7–0.9); replaced in tests.
---@return string
function M.read_key()
  local ok, c = pcall(vim.fn.getchar)
  if not ok then
    return '\3' -- <C-c> interrupts getchar()
  end
  return type(c) == 'number' and vim.fn.nr2char(c) or c
end

--- The window/showMessageRequest handler of the Reprise client.
---@param _ any error (unused)
---@param params table ShowMessageRequestParams
---@return table|userdata the chosen MessageActionItem, or vim.NIL to reject
function M.handler(_, params)
  params = params or {}
  local titles = {}
  for _, a in ipairs(params.actions or {}) do
    table.insert(titles, a.title)
  end
  if #titles == 0 then
    titles = { protocol.action.allow_once, protocol.action.always_allow, protocol.action.reject }
  end
  local message = params.message or 'Reprise asks for approval'
  -- Newer releases run server requests in a coroutine (as their own showMessageRequest handler
  -- assumes): the window's keys answer whenever the user is done.
  local co, is_main = coroutine.running()
  if co and not is_main then
    M.show(message, titles, function(choice)
      vim.schedule(function()
        coroutine.resume(co, choice)
      end)
    end)
    return answer(coroutine.yield())
  end
  -- Older releases send the answer when the handler returns, and read no keys while it waits:
  -- the window is shown and the keys are read here, as confirm() would.
  local choice, done = nil, false
  M.show(message, titles, function(c)
    choice, done = c, true
  end)
  local by_key = {}
  for _, k in ipairs(M.keys(titles)) do
    if k.key then
      by_key[k.key] = k.title
    end
    by_key[tostring(k.index)] = k.title
  end
  while not done do
    if pending and not vim.api.nvim_win_is_valid(pending.win) then
      present() -- closed unanswered, and no event loop runs here to open it again
    end
    local key = M.read_key()
    if #key == 1 then
      key = key:lower()
    end
    if key == '\3' then
      M.answer(nil)
    elseif by_key[key] then
      M.answer(by_key[key])
    end
  end
  return answer(choice)
end

return M
