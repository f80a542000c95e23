-- User options, merged over the defaults by setup().
local trust = require('reprise.trust')
local util = require('reprise.util')

local M = {}

---@class RepriseChatOptions
---@field split string command that opens the chat window ('botright vsplit', 'split', …)
---@field width integer|nil width of a vertical split
---@field open_on_ask boolean show the chat when a question is asked
---@field prompt boolean a prompt buffer under the chat: type there, <CR> (normal mode) or <C-s> sends
---@field prompt_height integer height of the prompt window

---@class RepriseReviewKeys
---@field keep string|false keeps the agent's change under the cursor in the diff split ('' or false: no key)
---@field undo string|false undoes it

---@class RepriseOptions
---@field cmd string[] the server command
---@field cmd_env table<string,string>|nil extra environment for the server
---@field settings table server settings (PROTOCOL.md, "Settings"; allow, sandbox, allowNetwork,
---  hidePaths, readPaths and mcpServers: user only)
---@field root_markers string[] files or folders that mark a workspace root
---@field root_dir nil|string|fun(bufnr: integer): string the workspace root (overrides root_markers)
---@field chat RepriseChatOptions
---@field review RepriseReviewKeys keys of :Reprise diff's split, on both sides while it is open
---@field attach boolean attach file buffers under the root (the agent then sees unsaved edits)
---@field project_settings table|nil spending settings a project file gave (trust.spending_settings):
---  sent through workspace/configuration only, where the server lets them lower the caps only

---@type RepriseOptions
M.defaults = {
  cmd = { 'reprise', 'serve', '--stdio' },
  cmd_env = nil,
  settings = {},
  root_markers = { '.git', 'AGENTS.md', 'GEMINI.md', '.hg' },
  root_dir = nil,
  chat = { split = 'botright vsplit', width = 80, open_on_ask = true, prompt = true, prompt_height = 5 },
  review = { keep = '<localleader>k', undo = '<localleader>u' },
  attach = true,
}

---@type RepriseOptions
M.options = vim.deepcopy(M.defaults)

--- Replaces the options with the defaults merged with opts. A call from a project file (see
--- trust.lua) cannot change the options only the user may set: those keep their values, and a
--- warning names what was ignored. Its spending settings are kept apart (project_settings), and
--- options.settings keeps the user's: initializationOptions, the user's level, never carry them.
---@param opts RepriseOptions|nil
---@return RepriseOptions
function M.set(opts)
  opts = opts or {}
  local keep, spending
  local from = trust.project_caller()
  if from then
    local dropped, spending_names
    opts, dropped, spending, spending_names = trust.strip(opts)
    keep = M.options
    if #dropped > 0 then
      util.notify(string.format('%s is a project file: ignored %s. A project cannot choose the binary, its '
        .. 'environment, the workspace root, the allowlist, the sandbox, the network or the MCP servers; set them '
        .. 'in your own configuration.', from, table.concat(dropped, ', ')), vim.log.levels.WARN)
    end
    if #spending_names > 0 then
      util.notify(string.format("%s is a project file: %s sent as the project's settings, which may lower your "
        .. 'spending caps and choose a cheaper model, lighter thinking or a smaller budget, never spend more than '
        .. 'you chose; set your own in your configuration.',
        from, table.concat(spending_names, ', ')), vim.log.levels.WARN)
    end
  end
  local o = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts)
  -- Lists are replaced, not merged by index.
  if opts.cmd then
    o.cmd = opts.cmd
  end
  if opts.root_markers then
    o.root_markers = opts.root_markers
  end
  if keep then
    for _, k in ipairs(trust.protected) do
      o[k] = vim.deepcopy(keep[k])
    end
    for _, k in ipairs(trust.protected_settings) do
      o.settings[k] = vim.deepcopy(keep.settings and keep.settings[k])
    end
    for _, k in ipairs(vim.list_extend(vim.list_extend({}, trust.spending_settings), trust.cost_settings)) do
      o.settings[k] = vim.deepcopy(keep.settings and keep.settings[k])
    end
    if next(spending) then
      o.project_settings = spending
    end
  end
  M.options = o
  return o
end

return M
