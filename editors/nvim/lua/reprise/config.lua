-- User options, merged over the defaults by setup().
local M = {}

---@class RepriseChatOptions
---@field split string command that opens the chat window ('botright vsplit', 'split', …)
---@field width integer|nil width of a vertical split
---@field open_on_ask boolean show the chat when a question is asked

---@class RepriseOptions
---@field cmd string[] the server command
---@field cmd_env table<string,string>|nil extra environment for the server
---@field settings table server settings (PROTOCOL.md, "Settings")
---@field root_markers string[] files or folders that mark a workspace root
---@field root_dir nil|string|fun(bufnr: integer): string the workspace root (overrides root_markers)
---@field chat RepriseChatOptions
---@field attach boolean attach file buffers under the root (the agent then sees unsaved edits)

---@type RepriseOptions
M.defaults = {
  cmd = { 'reprise', 'serve', '--stdio' },
  cmd_env = nil,
  settings = {},
  root_markers = { '.git', 'AGENTS.md', 'GEMINI.md', '.hg' },
  root_dir = nil,
  chat = { split = 'botright vsplit', width = 80, open_on_ask = true },
  attach = true,
}

---@type RepriseOptions
M.options = vim.deepcopy(M.defaults)

---@param opts RepriseOptions|nil
---@return RepriseOptions
function M.set(opts)
  M.options = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts or {})
  -- Lists are replaced, not merged by index.
  if opts and opts.cmd then
    M.options.cmd = opts.cmd
  end
  if opts and opts.root_markers then
    M.options.root_markers = opts.root_markers
  end
  return M.options
end

return M
