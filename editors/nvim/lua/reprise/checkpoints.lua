-- Checkpoints: the list through vim.ui.select, one checkpoint's summary in a scratch buffer.
local util = require('reprise.util')

local M = {}

--- How a checkpoint reads in the picker.
---@param cp table {n, title, trigger, replaced, tokensBefore, tokensAfter, time}
---@return string
function M.format(cp)
  return string.format('%d. %s (%s, %s → %s tokens%s)', cp.n, cp.title or '', cp.trigger or '',
    util.kilo(cp.tokensBefore), util.kilo(cp.tokensAfter), cp.time and cp.time ~= '' and (', ' .. cp.time) or '')
end

--- Lets the user pick a checkpoint; calls on_choice(n) with its number.
---@param list table[] the result of reprise.checkpoints
---@param on_choice fun(n: integer)
function M.pick(list, on_choice)
  if not list or #list == 0 then
    util.notify('no checkpoints in this session yet')
    return
  end
  vim.ui.select(list, { prompt = 'Reprise checkpoints', format_item = M.format, kind = 'reprise.checkpoint' },
    function(cp)
      if cp then
        on_choice(cp.n)
      end
    end)
end

--- Shows one checkpoint (the result of reprise.checkpoint) in a markdown scratch buffer in a split.
---@param cp table
---@return integer bufnr
function M.show(cp)
  local text = cp.markdown
  if not text or text == '' then
    text = string.format('# Checkpoint %d: %s\n\n%s', cp.n, cp.title or '', cp.summary or '')
  end
  local buf = util.scratch(util.lines(text), 'markdown')
  pcall(vim.api.nvim_buf_set_name, buf, string.format('reprise://checkpoint/%d/%d', cp.n, buf))
  vim.cmd('botright split')
  vim.api.nvim_win_set_buf(0, buf)
  return buf
end

return M
