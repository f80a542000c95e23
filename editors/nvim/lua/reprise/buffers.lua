-- Buffers of files the agent changed: reloaded as soon as the change is announced, so that the
-- buffer never holds the text from before it (and :w never writes that text back over the agent's
-- work). A buffer with unsaved edits is never reloaded: the user is warned and keeps both, their
-- text in the buffer and the agent's on disk.
local protocol = require('reprise.protocol')
local util = require('reprise.util')

local M = {}

local U = protocol.update
local T = protocol.tool_status

local function loaded(path)
  local buf = vim.fn.bufnr(path)
  if buf > 0 and vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].buftype == '' then
    return buf
  end
  return nil
end

local function warn(path, why)
  util.notify(string.format('%s %s; your buffer has unsaved edits and was kept as it is '
    .. '(:edit! loads the new text, :write keeps yours)', vim.fn.fnamemodify(path, ':~:.'), why),
    vim.log.levels.WARN)
end

--- Reloads the buffers of files changed on disk; a buffer with unsaved edits is kept, with a
--- warning. Returns the buffers reloaded.
---@param paths string[] absolute paths
---@param why string|nil what changed them, for the warning ('was changed by the agent')
---@return integer[]
function M.reload(paths, why)
  local out = {}
  for _, p in ipairs(paths) do
    local buf = loaded(p)
    if buf then
      if vim.bo[buf].modified then
        warn(p, why or 'was changed by the agent')
      else
        vim.api.nvim_buf_call(buf, function()
          vim.cmd('silent! edit!')
        end)
        table.insert(out, buf)
      end
    end
  end
  return out
end

--- Checks the loaded file buffers under root against the disk (a command may have written any of
--- them): a changed file's buffer is reloaded, or kept with a warning when it has unsaved edits.
---@param root string
function M.check(root)
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    local name = vim.api.nvim_buf_get_name(buf)
    if name ~= '' and vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].buftype == ''
      and (name == root or name:sub(1, #root + 1) == root .. '/') then
      -- checktime asks what to do through FileChangedShell when it is defined: answered here for
      -- this buffer and this check only, so the user's own checks prompt as always.
      local au = vim.api.nvim_create_autocmd('FileChangedShell', {
        buffer = buf,
        once = true,
        callback = function()
          local reason = vim.v.fcs_reason
          if reason == 'deleted' then
            vim.v.fcs_choice = ''
            util.notify(vim.fn.fnamemodify(name, ':~:.') .. ' was deleted on disk; its buffer is kept',
              vim.log.levels.WARN)
          elseif vim.bo[buf].modified or reason == 'conflict' then
            vim.v.fcs_choice = ''
            warn(name, 'changed on disk')
          else
            vim.v.fcs_choice = 'reload'
          end
        end,
      })
      pcall(vim.cmd, 'silent checktime ' .. buf)
      pcall(vim.api.nvim_del_autocmd, au)
    end
  end
end

--- The files a tool call's update says it changed: the paths of its diff contents.
---@param u table a tool_call_update
---@return string[]
function M.changed_paths(u)
  local out = {}
  for _, c in ipairs(type(u.content) == 'table' and u.content or {}) do
    if type(c) == 'table' and c.type == 'diff' and type(c.path) == 'string' and c.path ~= '' then
      table.insert(out, c.path)
    end
  end
  return out
end

--- Handles a session update for a workspace: a finished edit reloads its file's buffer, a
--- finished command checks the buffers of the workspace.
---@param root string|nil
---@param u table the update
function M.on_update(root, u)
  if u.sessionUpdate ~= U.tool_call_update or u.status == T.in_progress then
    return
  end
  local paths = M.changed_paths(u)
  if #paths > 0 then
    M.reload(paths)
  elseif root and (u.kind == protocol.tool_kind.execute or u.kind == protocol.tool_kind.other) then
    M.check(root)
  end
end

return M
