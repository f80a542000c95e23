-- Reviewing the agent's changes (reprise.changes): the quickfix list, the restore point rebuilt by
-- reverse-applying an entry's unified diff to the file on disk, and the diff split.
local client = require('reprise.client')
local protocol = require('reprise.protocol')
local util = require('reprise.util')

local M = {}

-- The quickfix list's title; its context holds {reprise = {client, args}}, what to ask again.
local qf_title = 'Reprise changes'

--- The hunks of a unified diff: {new_start, new_count, lines = {'+x', '-y', ' z'}}.
---@param diff string
---@return table[]
function M.hunks(diff)
  local out, cur = {}, nil
  for _, line in ipairs(util.lines(diff)) do
    local ns, nc = line:match('^@@ %-%d+,?%d* %+(%d+),?(%d*) @@')
    if ns then
      cur = { new_start = tonumber(ns), new_count = nc == '' and 1 or tonumber(nc), lines = {} }
      table.insert(out, cur)
    elseif cur and line:match('^[ +-]') then
      table.insert(cur.lines, line)
    end
  end
  return out
end

--- The text before the change: `diff` (from the restore point to now) applied in reverse to the
--- current lines. Context lines are taken from the diff, so a mismatch cannot corrupt them.
---@param current string[] the file's lines now
---@param diff string
---@return string[]
function M.reverse(current, diff)
  local old, pos = {}, 1 -- pos: next line of `current` not yet consumed
  for _, hk in ipairs(M.hunks(diff)) do
    local start = hk.new_count == 0 and hk.new_start + 1 or hk.new_start
    while pos < start and pos <= #current do
      table.insert(old, current[pos])
      pos = pos + 1
    end
    for _, l in ipairs(hk.lines) do
      local kind, text = l:sub(1, 1), l:sub(2)
      if kind == ' ' then
        table.insert(old, text)
        pos = pos + 1
      elseif kind == '-' then
        table.insert(old, text)
      else
        pos = pos + 1
      end
    end
  end
  while pos <= #current do
    table.insert(old, current[pos])
    pos = pos + 1
  end
  return old
end

--- The first changed line of an entry's diff (1 when there is none).
---@param file table an entry of reprise.changes
---@return integer
function M.first_line(file)
  local hk = file.diff and M.hunks(file.diff)[1]
  if not hk then
    return 1
  end
  local n = hk.new_start
  for _, l in ipairs(hk.lines) do
    if l:sub(1, 1) ~= ' ' then
      return math.max(n, 1)
    end
    n = n + 1
  end
  return math.max(hk.new_start, 1)
end

--- The lines of the file a hunk covers, on one side of the diff: 'new' (the file now) or 'old'
--- (the restore point). A hunk with no line on that side covers the lines either side of its gap,
--- so that the cursor can still reach it.
---@param hk table {oldStart, oldLines, newStart, newLines}
---@param side string 'new' or 'old'
---@return integer first, integer last, boolean gap
function M.span(hk, side)
  local start, count = hk.newStart or 0, hk.newLines or 0
  if side == 'old' then
    start, count = hk.oldStart or 0, hk.oldLines or 0
  end
  if count == 0 then
    return math.max(start, 1), start + 1, true
  end
  return start, start + count - 1, false
end

--- The hunk under the cursor: the one whose lines hold `line` on that side of the diff; a hunk
--- with lines there wins over one whose gap is beside it (two may share the line before a gap).
---@param hunks table[]|nil reprise.changes' hunks of one file
---@param line integer 1-based
---@param side string 'new' (the file now) or 'old' (the restore point)
---@return table|nil
function M.hunk_at(hunks, line, side)
  local beside
  for _, hk in ipairs(hunks or {}) do
    local first, last, gap = M.span(hk, side)
    if line >= first and line <= last then
      if not gap then
        return hk
      end
      beside = beside or hk
    end
  end
  return beside
end

--- Where a hunk is in the file now, as a person says it: "line 4", "lines 12–14", "removed
--- after line 9" (its lines gone, the gap after line 9).
---@param hk table
---@return string
function M.hunk_lines(hk)
  local s, n = hk.newStart or 0, hk.newLines or 0
  if n == 0 then
    return s == 0 and 'removed at the top' or string.format('removed after line %d', s)
  end
  if n == 1 then
    return string.format('line %d', s)
  end
  return string.format('lines %d–%d', s, s + n - 1)
end

--- The progress of a file's review: "3 changes · 1 kept · 1 undone" (zero counts left out).
---@param file table an entry of reprise.changes
---@return string
function M.progress(file)
  local kept = 0
  for _, hk in ipairs(file.hunks or {}) do
    if hk.review == 'kept' then
      kept = kept + 1
    end
  end
  local undone = file.hunksUndone or 0
  local total = #(file.hunks or {}) + undone
  local parts = { string.format('%d change%s', total, total == 1 and '' or 's') }
  if kept > 0 then
    table.insert(parts, kept .. ' kept')
  end
  if undone > 0 then
    table.insert(parts, undone .. ' undone')
  end
  return table.concat(parts, ' · ')
end

--- The quickfix items of reprise.changes' files: state, +added/−removed counts and the review's
--- progress; then, for a file of several changes, one item per change at its first line
--- ("lines 12–14 · pending").
---@param files table[]
---@return table[]
function M.items(files)
  local out = {}
  for _, f in ipairs(files or {}) do
    local text = string.format('%s +%d −%d', f.state, f.added or 0, f.removed or 0)
    -- A file of one change not yet reviewed: its counts say it all.
    local one = #(f.hunks or {}) == 1 and f.hunks[1].review ~= 'kept' and (f.hunksUndone or 0) == 0
    if (f.hunks or (f.hunksUndone or 0) > 0) and not one then
      text = text .. ' · ' .. M.progress(f)
    end
    if f.userChanged then
      text = text .. ' (changed by you since)'
    end
    if f.note then
      text = text .. ' · ' .. f.note
    end
    table.insert(out, { filename = f.absPath, lnum = M.first_line(f), col = 1, text = text })
    if #(f.hunks or {}) > 1 then
      for _, hk in ipairs(f.hunks) do
        table.insert(out, { filename = f.absPath, lnum = math.max(hk.newStart or 1, 1), col = 1,
          text = M.hunk_lines(hk) .. ' · ' .. (hk.review or 'pending') })
      end
    end
  end
  return out
end

--- Fills and opens the quickfix list with the changed files.
---@param res table the result of reprise.changes
---@param id integer|nil the client asked, kept with args to list them again after a review
---@param args table|nil the arguments it was asked with
function M.quickfix(res, id, args)
  local files = res and res.files or {}
  if #files == 0 then
    return util.notify('the agent changed no file in this session')
  end
  vim.fn.setqflist({}, ' ', { title = qf_title, items = M.items(files),
    context = id and { reprise = { client = id, args = args } } or nil })
  vim.cmd('botright copen')
end

--- Lists the changes again in the current quickfix list when it is Reprise's, after a keep or an
--- undo, so that its progress and each change's state follow the review (as gitsigns' list
--- follows a stage). The list keeps its place and cursor; another list is left alone.
function M.refresh_quickfix()
  local qf = vim.fn.getqflist({ id = 0, title = 0, context = 0 })
  local ctx = type(qf.context) == 'table' and qf.context.reprise or nil
  if qf.title ~= qf_title or type(ctx) ~= 'table' then
    return
  end
  client.execute(ctx.client, protocol.command.changes, ctx.args, function(err, res)
    if not err then
      vim.fn.setqflist({}, 'r', { id = qf.id, items = M.items(res and res.files or {}) })
    end
  end)
end

--- The entry of `files` for a path (absolute, or relative to the current directory or the root).
---@param files table[]
---@param path string
---@param root string|nil
---@return table|nil
function M.find(files, path, root)
  local abs = vim.fn.fnamemodify(path, ':p')
  for _, f in ipairs(files or {}) do
    if f.absPath == abs or f.path == path or (root and f.absPath == root .. '/' .. path) then
      return f
    end
  end
  return nil
end

--- The lines of the file at its restore point: its diff reversed over the file on disk.
---@param file table an entry of reprise.changes
---@return string[]
function M.restore_point(file)
  if file.state == 'created' then
    return {}
  end
  local current = {}
  if file.state ~= 'deleted' and vim.fn.filereadable(file.absPath) == 1 then
    current = vim.fn.readfile(file.absPath)
  end
  return M.reverse(current, file.diff or '')
end

--- Opens a vertical diff of the file against its restore point (a read-only scratch buffer).
---@param file table an entry of reprise.changes
---@return integer|nil bufnr of the restore point
function M.show_diff(file)
  if not file.diff and file.note then
    util.notify(file.path .. ': ' .. file.note, vim.log.levels.WARN)
    return nil
  end
  local old = M.restore_point(file)
  if vim.api.nvim_buf_get_name(0) ~= file.absPath then
    vim.cmd('edit ' .. vim.fn.fnameescape(file.absPath))
  end
  local ft = vim.bo.filetype
  local buf = util.scratch(old, ft ~= '' and ft or nil)
  pcall(vim.api.nvim_buf_set_name, buf, 'reprise://restore/' .. file.path)
  -- Diff mode compares every buffer of the tab page that has it, hidden ones included: one left
  -- over would make every line differ here.
  vim.cmd('diffoff!')
  vim.cmd('diffthis')
  vim.cmd('leftabove vertical split')
  vim.api.nvim_win_set_buf(0, buf)
  vim.cmd('diffthis')
  return buf
end

return M
