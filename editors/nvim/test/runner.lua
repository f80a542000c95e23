-- Entry point of the headless suite (run by test/run.sh): loads every spec, then runs them.
local here = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h')
package.path = here .. '/?.lua;' .. package.path

local h = require('harness')
local ok, err = xpcall(function()
  require('unit_spec')
  require('e2e_spec')
  require('exrc_spec')
end, debug.traceback)
if not ok then
  h.test('load specs', function()
    error(err)
  end)
end
h.run('nvim')
