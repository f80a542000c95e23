-- Approvals: the server asks with window/showMessageRequest (Allow once / Always allow /
-- Reject); the Reprise client answers through vim.ui.select. No choice is a rejection.
local protocol = require('reprise.protocol')

local M = {}

local function select_opts(params)
  return {
    prompt = params.message or 'Reprise asks for approval',
    kind = 'reprise.approval',
  }
end

local function answer(choice)
  if type(choice) == 'string' and choice ~= '' then
    return { title = choice }
  end
  return vim.NIL
end

--- confirm() buttons with distinct accelerators: "&Allow once\nA&lways allow\n&Reject".
---@param titles string[]
---@return string
function M.buttons(titles)
  local used, out = {}, {}
  for _, t in ipairs(titles) do
    local b = t
    for i = 1, #t do
      local c = t:sub(i, i):lower()
      if c:match('%a') and not used[c] then
        used[c] = true
        b = t:sub(1, i - 1) .. '&' .. t:sub(i)
        break
      end
    end
    table.insert(out, b)
  end
  return table.concat(out, '\n')
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
  -- Newer releases run server requests in a coroutine (as their own showMessageRequest handler
  -- assumes): an asynchronous vim.ui.select can answer whenever the user is done.
  local co, is_main = coroutine.running()
  if co and not is_main then
    vim.ui.select(titles, select_opts(params), function(choice)
      vim.schedule(function()
        coroutine.resume(co, choice)
      end)
    end)
    return answer(coroutine.yield())
  end
  -- Older releases (0.7) send the answer when the handler returns, and no keys are read while
  -- it waits: the builtin vim.ui.select (and any synchronous one) answers at once; when a
  -- replacement answers later, confirm() asks instead and the late answer is ignored.
  local done, choice = false, nil
  vim.ui.select(titles, select_opts(params), function(c)
    if not done then
      choice, done = c, true
    end
  end)
  if not done then
    done = true
    local n = vim.fn.confirm(params.message or 'Reprise asks for approval', M.buttons(titles), #titles)
    choice = titles[n]
  end
  return answer(choice)
end

return M
