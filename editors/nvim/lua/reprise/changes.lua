-- Reviewing the agent's changes (reprise.changes): the quickfix list, the restore point rebuilt by
-- reverse-applying an entry's unified diff to the file on disk, and the diff split.
local util = require('reprise.util')

local M = {}

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

--- The quickfix items of reprise.changes' files: state and +added/−removed counts.
---@param files table[]
---@return table[]
function M.items(files)
  local out = {}
  for _, f in ipairs(files or {}) do
    local text = string.format('%s +%d −%d', f.state, f.added or 0, f.removed or 0)
    if f.userChanged then
      text = text .. ' (changed by you since)'
    end
    if f.note then
      text = text .. ' · ' .. f.note
    end
    table.insert(out, { filename = f.absPath, lnum = M.first_line(f), col = 1, text = text })
  end
  return out
end

--- Fills and opens the quickfix list with the changed files.
---@param res table the result of reprise.changes
function M.quickfix(res)
  local files = res and res.files or {}
  if #files == 0 then
    return util.notify('the agent changed no file in this session')
  end
  vim.fn.setqflist({}, ' ', { title = 'Reprise changes', items = M.items(files) })
  vim.cmd('botright copen')
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

--- Opens a vertical diff of the file against its restore point (a read-only scratch buffer).
---@param file table an entry of reprise.changes
---@return integer|nil bufnr of the restore point
function M.show_diff(file)
  if not file.diff and file.note then
    util.notify(file.path .. ': ' .. file.note, vim.log.levels.WARN)
    return nil
  end
  local current = {}
  if file.state ~= 'deleted' and vim.fn.filereadable(file.absPath) == 1 then
    current = vim.fn.readfile(file.absPath)
  end
  local old = file.state == 'created' and {} or M.reverse(current, file.diff or '')
  if vim.api.nvim_buf_get_name(0) ~= file.absPath then
    vim.cmd('edit ' .. vim.fn.fnameescape(file.absPath))
  end
  local ft = vim.bo.filetype
  local buf = util.scratch(old, ft ~= '' and ft or nil)
  pcall(vim.api.nvim_buf_set_name, buf, 'reprise://restore/' .. file.path)
  vim.cmd('diffthis')
  vim.cmd('leftabove vertical split')
  vim.api.nvim_win_set_buf(0, buf)
  vim.cmd('diffthis')
  return buf
end

return M
