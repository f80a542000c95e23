-- Small helpers shared by the feature modules.
local M = {}

--- Formats a token count the way the server does: 950, 10.1k, 24k, 1.2M.
---@param n number
---@return string
function M.kilo(n)
  n = n or 0
  if n >= 1000000 then
    return string.format('%.1fM', n / 1e6)
  elseif n >= 1000 then
    return (string.format('%.1f', n / 1e3):gsub('%.0$', '')) .. 'k'
  end
  return tostring(math.floor(n))
end

--- A cost as the server words it (cost.text: "$0.0336", "unknown", "$0.0063 + unknown"); only
--- an older server without text gets the amount printed here. Never "$0" for an unknown price.
---@param cost table|nil {amount, currency, text?, unknown?}
---@return string
function M.cost(cost)
  if type(cost) ~= 'table' then
    return 'unknown'
  end
  if type(cost.text) == 'string' and cost.text ~= '' then
    return cost.text
  end
  if cost.unknown then
    return 'unknown'
  end
  local s = string.format('%.4f', cost.amount or 0)
  return (cost.currency == nil or cost.currency == 'USD') and ('$' .. s) or (s .. ' ' .. cost.currency)
end

--- Says how many prompts a session answered and how many model calls they took, which differ as
--- soon as a turn calls a tool: "1 turn · 3 model calls".
---@param turns number|nil
---@param calls number|nil
---@return string
function M.turns_and_calls(turns, calls)
  turns, calls = turns or 0, calls or 0
  return string.format('%d %s · %d model %s', turns, turns == 1 and 'turn' or 'turns', calls,
    calls == 1 and 'call' or 'calls')
end

---@param msg string
---@param level integer|nil
function M.notify(msg, level)
  vim.notify('Reprise: ' .. msg, level or vim.log.levels.INFO)
end

--- An LSP error as a message: its own text, which the server writes for the user.
---@param err table|string
---@return string
function M.error_message(err)
  if type(err) == 'table' then
    return err.message or vim.inspect(err)
  end
  return tostring(err)
end

--- The argument object of a command: {} must go out as a JSON object, not an array.
---@param t table|nil
---@return table
function M.object(t)
  if t == nil or next(t) == nil then
    return vim.empty_dict()
  end
  return t
end

--- Whether this Neovim is at least the given version ('0.11').
---@param version string
---@return boolean
function M.has(version)
  return vim.fn.has('nvim-' .. version) == 1
end

--- A scratch buffer (nofile, wiped when hidden) with the given lines, read-only.
---@param lines string[]
---@param filetype string|nil
---@return integer bufnr
function M.scratch(lines, filetype)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].modifiable = false
  if filetype then
    vim.bo[buf].filetype = filetype
  end
  vim.keymap.set('n', 'q', '<cmd>close<cr>', { buffer = buf, silent = true, nowait = true })
  return buf
end

--- A floating window in the middle of the editor showing a scratch buffer of the lines; q or
--- <Esc> closes it.
---@param lines string[]
---@param filetype string|nil
---@return integer win
function M.float(lines, filetype)
  local width = 20
  for _, l in ipairs(lines) do
    width = math.max(width, vim.fn.strdisplaywidth(l))
  end
  width = math.min(width + 2, vim.o.columns - 4)
  local height = math.max(1, math.min(#lines, vim.o.lines - 4))
  local buf = M.scratch(lines, filetype)
  vim.keymap.set('n', '<Esc>', '<cmd>close<cr>', { buffer = buf, silent = true, nowait = true })
  local win = vim.api.nvim_open_win(buf, true, M.centered(width, height))
  M.float_style(win)
  return win
end

--- Gives a float of the plugin the editor's own colours: RepriseFloat and RepriseFloatBorder,
--- linked by default to Normal. Neovim 0.7's default NormalFloat is Pmenu's bright magenta, which
--- made a question hard to read; a colour scheme or the user may link them elsewhere.
---@param win integer
function M.float_style(win)
  -- Again each time: a colour scheme's `highlight clear` drops default links.
  vim.cmd('highlight default link RepriseFloat Normal')
  vim.cmd('highlight default link RepriseFloatBorder Normal')
  vim.wo[win].winhighlight = 'NormalFloat:RepriseFloat,FloatBorder:RepriseFloatBorder'
end

--- The configuration of a floating window of width × height in the middle of the editor.
---@param width integer
---@param height integer
---@return table
function M.centered(width, height)
  return {
    relative = 'editor',
    width = width,
    height = height,
    row = math.max(0, math.floor((vim.o.lines - height) / 2) - 1),
    col = math.max(0, math.floor((vim.o.columns - width) / 2)),
    style = 'minimal',
    border = 'rounded',
  }
end

--- Splits text into lines (a trailing newline gives a last empty line).
---@param text string
---@return string[]
function M.lines(text)
  return vim.split(text or '', '\n', { plain = true })
end

return M
