-- A minimal test harness for headless Neovim: tests run in order, each in pcall; waits are on
-- conditions (vim.wait), never fixed sleeps. The last line is "nvim: N passed, M failed".
local M = { tests = {} }

---@param name string
---@param fn fun()
function M.test(name, fn)
  table.insert(M.tests, { name = name, fn = fn })
end

---@param ms integer
---@param cond fun(): boolean
---@param what string|fun(): string what was awaited, for the failure message; a function is called
--- on failure, to show the state at the timeout
function M.wait(ms, cond, what)
  if not vim.wait(ms, cond, 10) then
    if type(what) == 'function' then
      what = what()
    end
    error('timed out after ' .. ms .. ' ms waiting for ' .. what, 2)
  end
end

function M.eq(got, want, what)
  if not vim.deep_equal(got, want) then
    error(string.format('%s: got %s, want %s', what or 'value', vim.inspect(got), vim.inspect(want)), 2)
  end
end

function M.truthy(v, what)
  if not v then
    error(what or 'expected a true value', 2)
  end
  return v
end

---@param buf integer
---@return string the buffer's text
function M.text(buf)
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n')
end

function M.contains(haystack, needle, what)
  if not haystack:find(needle, 1, true) then
    error(string.format('%s: %q not in:\n%s', what or 'text', needle, haystack), 2)
  end
end

local function out(s)
  io.stdout:write(s .. '\n')
  io.stdout:flush()
end

--- Runs every registered test and exits Neovim (status 1 when one failed).
---@param label string the prefix of the closing line
function M.run(label)
  local passed, failed = 0, 0
  for _, t in ipairs(M.tests) do
    local ok, err = xpcall(t.fn, debug.traceback)
    if ok then
      passed = passed + 1
      out('ok   ' .. t.name)
    else
      failed = failed + 1
      out('FAIL ' .. t.name .. '\n' .. tostring(err))
    end
  end
  out(string.format('%s: %d passed, %d failed', label, passed, failed))
  if failed > 0 then
    vim.cmd('cquit 1')
  else
    vim.cmd('qall!')
  end
end

return M
