-- :Reprise models — pick the model new sessions use, from the server's reprise.models (the API's
-- list joined with the model catalogue): id, status, context window, prices, thinking levels.
local util = require('reprise.util')

local M = {}

--- One model as the picker shows it.
---@param m table a reprise.models row
---@return string
function M.format(m)
  local mark = m.current and '● ' or '  '
  local note = m.default and ' (default)' or ''
  return string.format('%s%-24s %s%s', mark, m.id or '?', m.detail or m.statusText or '', note)
end

--- The lines of the heading: where the list comes from, and the server's warning.
---@param r table a reprise.models result
---@return string
function M.prompt(r)
  local p = string.format('Model for new sessions (now %s; prices of the catalogue as of %s)', r.model or '?',
    r.catalogueAsOf or '?')
  if r.warning and r.warning ~= '' then
    p = p .. ' — ' .. r.warning
  end
  -- A model the server does not list (another provider's, after the provider changed) would fail
  -- at the first call: said before then.
  local rows = type(r.models) == 'table' and r.models or {}
  local listed = false
  for _, m in ipairs(rows) do
    listed = listed or m.current == true
  end
  if #rows > 0 and not listed then
    p = p .. string.format(' — ⚠ %s is not listed by this server: pick one', r.model or '?')
  end
  return p
end

--- Asks which model new sessions use; choose(id) is called with the pick. A retired model is
--- offered only with all, and picking it warns and names its replacement.
---@param r table a reprise.models result
---@param choose fun(id: string, row: table)
function M.pick(r, choose)
  local rows = type(r) == 'table' and type(r.models) == 'table' and r.models or {}
  if #rows == 0 then
    return util.notify('the server lists no models' .. (r.warning and (': ' .. r.warning) or ''), vim.log.levels.WARN)
  end
  vim.ui.select(rows, { prompt = M.prompt(r), format_item = M.format, kind = 'reprise.models' }, function(row)
    if not row then
      return
    end
    if row.status == 'retired' then
      util.notify(string.format('%s is retired%s; sessions would fail or be answered by another model', row.id,
        row.replacement and row.replacement ~= '' and (': use ' .. row.replacement) or ''), vim.log.levels.WARN)
    end
    choose(row.id, row)
  end)
end

return M
