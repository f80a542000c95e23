-- Reviewing the agent's changes one by one in the diff split of :Reprise diff, as gitsigns stages
-- and resets hunks: keys on both sides keep or undo the change under the cursor, kept ones are
-- marked, and a hint line gives the keys and the progress. The server does the work
-- (reprise.keep and reprise.restore with hunk ids), so the model learns what was undone.
local buffers = require('reprise.buffers')
local changes = require('reprise.changes')
local client = require('reprise.client')
local config = require('reprise.config')
local protocol = require('reprise.protocol')
local util = require('reprise.util')

local C = protocol.command
local levels = vim.log.levels

local M = {}

local ns = vim.api.nvim_create_namespace('reprise_review')

-- The open reviews by restore-point buffer: {client, session, turn, file, old, cur, saved}, where
-- old is the restore point's scratch buffer, cur the file's buffer and saved the hint options of
-- the file's window, put back when the review closes.
local reviews = {}

--- The review a buffer is a side of, and which side: 'old' (the restore point) or 'new' (the file).
---@param buf integer
---@return table|nil review, string|nil side
function M.of(buf)
  if reviews[buf] then
    return reviews[buf], 'old'
  end
  for _, rv in pairs(reviews) do
    if rv.cur == buf then
      return rv, 'new'
    end
  end
  return nil, nil
end

--- A key as the user types it: <localleader> and <leader> replaced by their values.
---@param lhs string
---@return string
function M.key_label(lhs)
  local function leader(v)
    return (v == nil or v == '') and '\\' or v
  end
  return (lhs:gsub('<[Ll][Oo][Cc][Aa][Ll][Ll][Ee][Aa][Dd][Ee][Rr]>', function()
    return leader(vim.g.maplocalleader)
  end):gsub('<[Ll][Ee][Aa][Dd][Ee][Rr]>', function()
    return leader(vim.g.mapleader)
  end))
end

--- The hint lines over the two sides: the restore point's with the review's progress, the file's
--- with the keys ("\k keep · \u undo the change · ]c [c move").
---@param file table an entry of reprise.changes
---@param keys table {keep, undo}
---@return string old, string new
function M.hints(file, keys)
  local old = 'Before the agent · ' .. changes.progress(file)
  local parts = {}
  for _, k in ipairs({ 'keep', 'undo' }) do
    if type(keys[k]) == 'string' and keys[k] ~= '' then
      table.insert(parts, M.key_label(keys[k]) .. ' ' .. k)
    end
  end
  local new = 'Now'
  if #file.hunks > 0 then
    new = new .. ' · ' .. (#parts > 0 and (table.concat(parts, ' · ') .. ' the change · ') or '') .. ']c [c move'
  end
  return old, new
end

local function hl_groups()
  -- DiagnosticOk (0.9+) is green in most schemes; before it, MoreMsg is the green the default
  -- scheme has in light and dark (0.7's DiagnosticHint is light grey, unreadable on white).
  vim.cmd('highlight default link RepriseHunkKept ' .. (vim.fn.hlexists('DiagnosticOk') == 1 and 'DiagnosticOk'
    or 'MoreMsg'))
end

-- Again after each colour scheme: its `highlight clear` drops default links.
vim.api.nvim_create_autocmd('ColorScheme', {
  group = vim.api.nvim_create_augroup('reprise_review_colors', { clear = true }),
  callback = hl_groups,
})

-- The windows of a buffer in the current tab page.
local function wins_of(buf)
  return vim.tbl_filter(function(w)
    return vim.api.nvim_win_get_buf(w) == buf
  end, vim.api.nvim_tabpage_list_wins(0))
end

-- The hint goes in the winbar (0.8+), on both sides so that their lines stay level, else in the
-- window's statusline.
local hint_option = util.has('0.8') and 'winbar' or 'statusline'

local function set_hint(rv, buf, text)
  for _, w in ipairs(wins_of(buf)) do
    if buf == rv.cur and not rv.saved[w] then
      rv.saved[w] = vim.wo[w][hint_option]
    end
    vim.wo[w][hint_option] = ' ' .. text:gsub('%%', '%%%%')
  end
end

local function mark(buf, line, text)
  if not vim.api.nvim_buf_is_valid(buf) then
    return
  end
  local n = vim.api.nvim_buf_line_count(buf)
  vim.api.nvim_buf_set_extmark(buf, ns, math.min(math.max(line, 1), n) - 1, 0,
    { virt_text = { { text, 'RepriseHunkKept' } }, virt_text_pos = 'eol' })
end

-- Draws the review: kept changes marked on both sides, the hints, the diff updated.
local function draw(rv)
  hl_groups()
  for _, buf in ipairs({ rv.old, rv.cur }) do
    if vim.api.nvim_buf_is_valid(buf) then
      vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
    end
  end
  for _, hk in ipairs(rv.file.hunks) do
    if hk.review == protocol.review.kept then
      mark(rv.cur, (changes.span(hk, 'new')), '✓ kept')
      if (hk.oldLines or 0) > 0 then -- an addition has only filler lines on that side
        mark(rv.old, hk.oldStart, '✓ kept')
      end
    end
  end
  local old, new = M.hints(rv.file, config.options.review or {})
  set_hint(rv, rv.old, old)
  set_hint(rv, rv.cur, new)
  for _, w in ipairs(wins_of(rv.old)) do
    vim.api.nvim_win_call(w, function()
      vim.cmd('diffupdate')
    end)
  end
end

-- Ends a review: its keys, marks and hint leave the file's buffer and window, and so does diff mode.
local function close(rv)
  reviews[rv.old] = nil
  pcall(vim.api.nvim_del_augroup_by_id, rv.group)
  if not vim.api.nvim_buf_is_valid(rv.cur) then
    return
  end
  vim.api.nvim_buf_clear_namespace(rv.cur, ns, 0, -1)
  for _, lhs in pairs(config.options.review or {}) do
    if type(lhs) == 'string' and lhs ~= '' then
      pcall(vim.keymap.del, 'n', lhs, { buffer = rv.cur })
    end
  end
  for w, value in pairs(rv.saved) do
    if vim.api.nvim_win_is_valid(w) then
      vim.wo[w][hint_option] = value
      vim.api.nvim_win_call(w, function()
        vim.cmd('diffoff')
      end)
    end
  end
end

local function map(buf)
  local keys = config.options.review or {}
  local function set(lhs, kind, desc)
    if type(lhs) == 'string' and lhs ~= '' then
      vim.keymap.set('n', lhs, function()
        require('reprise.actions').hunk(kind)
      end, { buffer = buf, silent = true, desc = desc })
    end
  end
  set(keys.keep, 'keep', "Reprise: keep the agent's change under the cursor")
  set(keys.undo, 'undo', "Reprise: undo the agent's change under the cursor")
end

--- Opens the diff split of a file against its restore point, its changes reviewed one by one.
---@param id integer the client
---@param session string|nil
---@param turn integer the turn of reprise.changes the file comes from (its hunks' ids are of it)
---@param file table an entry of reprise.changes
---@return integer|nil bufnr of the restore point
function M.open(id, session, turn, file)
  local prev = M.of(vim.fn.bufnr(file.absPath))
  if prev and vim.api.nvim_buf_is_valid(prev.old) then
    vim.api.nvim_buf_delete(prev.old, { force = true }) -- its name is the one the new one takes
  end
  local old = changes.show_diff(file)
  if not old then
    return nil
  end
  local rv = { client = id, session = session, turn = turn, file = file, old = old,
    cur = vim.fn.bufnr(file.absPath), saved = {} }
  rv.file.hunks = rv.file.hunks or {}
  reviews[old] = rv
  map(old)
  map(rv.cur)
  rv.group = vim.api.nvim_create_augroup('reprise_review_' .. old, { clear = true })
  vim.api.nvim_create_autocmd('BufWipeout', { group = rv.group, buffer = old, callback = function()
    close(rv)
  end })
  -- Saved edits change the hunks: their ids and lines are asked again.
  vim.api.nvim_create_autocmd('BufWritePost', { group = rv.group, buffer = rv.cur, callback = function()
    M.refresh(rv)
  end })
  draw(rv)
  return old
end

--- Asks the server for the file's changes again and redraws the review: the restore point
--- rebuilt, the marks and the hints. A file no longer listed had all its changes undone.
---@param rv table
function M.refresh(rv)
  client.execute(rv.client, C.changes, { sessionId = rv.session, turn = rv.turn }, function(err, res)
    if not reviews[rv.old] or not vim.api.nvim_buf_is_valid(rv.old) then
      return
    end
    if err then
      return util.notify('review: ' .. util.error_message(err), levels.ERROR)
    end
    local file = changes.find(res and res.files, rv.file.absPath)
    if not file then
      local prev = rv.file
      file = { path = prev.path, absPath = prev.absPath, state = prev.state, hunks = {},
        hunksUndone = #prev.hunks + (prev.hunksUndone or 0) }
    end
    file.hunks = file.hunks or {}
    rv.file = file
    vim.bo[rv.old].modifiable = true
    vim.api.nvim_buf_set_lines(rv.old, 0, -1, false, changes.restore_point(file))
    vim.bo[rv.old].modifiable = false
    draw(rv)
  end)
end

--- Keeps or undoes the change under the cursor of a side of the review (line on that side). An
--- undo is refused here, before the server, when the file's buffer has unsaved edits: reloading
--- it afterwards would lose them. Then the file's buffer is reloaded and the review redrawn.
---@param rv table a review, or {client, session, turn, file} for a file outside the diff split
---@param side string 'new' or 'old'
---@param line integer
---@param kind string 'keep' or 'undo'
function M.apply(rv, side, line, kind)
  local hk = changes.hunk_at(rv.file.hunks, line, side)
  if not hk then
    return util.notify(string.format('%s: no change of the agent on line %d (]c and [c move between changes)',
      rv.file.path, line), levels.WARN)
  end
  local where = string.format('%s %s', rv.file.path, changes.hunk_lines(hk))
  local buf = vim.fn.bufnr(rv.file.absPath)
  if kind == 'undo' and buf > 0 and vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].modified then
    return util.notify(string.format('undo %s: the buffer has unsaved edits; :write or :edit! it first',
      where), levels.WARN)
  end
  local command = kind == 'keep' and C.keep or C.restore
  local args = { sessionId = rv.session, turn = rv.turn, hunks = { hk.id } }
  client.execute(rv.client, command, args, function(err, res)
    if kind == 'undo' then
      -- Reloaded even when refused: the refusal says the file changed on disk.
      buffers.reload({ rv.file.absPath }, 'was changed on disk')
    end
    if err then
      local what = kind == 'keep' and 'keep ' or 'undo refused for '
      util.notify(what .. where .. ': ' .. util.error_message(err), levels.WARN)
    else
      local refused = res and res.refused or {}
      for _, r in ipairs(refused) do
        util.notify(string.format('undo refused for %s: %s', where, r.reason or '?'), levels.WARN)
      end
      if #refused == 0 then
        util.notify(string.format('%s %s', kind == 'keep' and 'kept' or 'undone:', where))
      end
    end
    if reviews[rv.old or -1] then
      M.refresh(rv)
    end
    changes.refresh_quickfix()
  end)
end

return M
