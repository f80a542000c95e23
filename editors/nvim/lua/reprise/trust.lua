-- Who may set what. A cloned repository is not the user (DESIGN.md §8): the files a project brings
-- and Neovim or a plugin manager load by themselves ('exrc': .nvim.lua, .nvimrc, .exrc; lazy.nvim's
-- .lazy.lua) must not choose the binary, its environment, the workspace root, the allowlist, the
-- sandbox, the network or the MCP servers (programs that run with the user's rights; the server asks
-- before it starts one from the workspace's .vscode/mcp.json). config.set() asks project_caller()
-- where a call comes from and, for a project file, keeps those options as the user's own
-- configuration (or the defaults) set them.
--
-- This guards the plugin's API, not Neovim: a project file that Neovim runs is code, and one
-- written to get around the rule could start a program itself. Neovim 0.9+ asks before it runs an
-- exrc file it has not been told to trust; Neovim 0.7–0.8 runs it whenever 'exrc' is set.
local M = {}

--- Options only the user's own configuration may set.
M.protected = { 'cmd', 'cmd_env', 'root_dir', 'root_markers' }

--- Server settings (options.settings) only the user's own configuration may set.
M.protected_settings = { 'allow', 'sandbox', 'allowNetwork', 'hidePaths', 'readPaths', 'provider', 'baseURL',
  'apiKeyEnv', 'mcpServers' }

--- The spending settings: the server takes the user's level from initializationOptions, and lets
--- what comes through workspace/configuration only lower the caps, never raise or remove them,
--- nor change prices. From a project file they go out as the project's, through the second only.
M.spending_settings = { 'sessionTokenCap', 'maxCostUSD', 'prices', 'models' }

--- The cost settings: what a token costs or how many a session spends. The server holds a value
--- from workspace/configuration dearer than the user's to the user's, which it takes from
--- initializationOptions and reprise/didChangeUserSettings (sent with the user's values when
--- setup() runs again). From a project file they go out as the project's, like the spending ones.
M.cost_settings = { 'model', 'compactionModel', 'thinking', 'contextBudget', 'maxTurnRequests', 'explicitCache',
  'explicitCacheIdle', 'cacheHead', 'subagents', 'subagentModel', 'subagentBudget', 'subagentParallel',
  'subagentMaxCalls' }

--- Files that Neovim ('exrc') or lazy.nvim (local specs) load from the project folder by themselves.
M.project_config_names = { ['.nvim.lua'] = true, ['.nvimrc'] = true, ['.exrc'] = true, ['.lazy.lua'] = true }

local function clean(path)
  path = vim.fn.fnamemodify(path, ':p')
  if #path > 1 then
    path = path:gsub('/$', '')
  end
  return path
end

local function under(path, dir)
  return path == dir or dir == '/' or path:sub(1, #dir + 1) == dir .. '/'
end

-- This plugin's folder (editors/nvim): its own frames are on every stack.
local plugin_dir = clean(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h:h:h'))

---@class RepriseTrustContext
---@field workspaces string[] folders of the project: the working directory and the roots of running servers
---@field user string[] folders and files that are the user's own (config, data, runtime, -u file, this plugin)

--- The context of the current call: where the project is, and what belongs to the user.
---@return RepriseTrustContext
function M.context()
  local home = vim.env.HOME and clean(vim.env.HOME)
  local workspaces = {}
  local roots = { vim.fn.getcwd() }
  local ok, client = pcall(require, 'reprise.client')
  if ok then
    vim.list_extend(roots, client.roots())
  end
  for _, dir in ipairs(roots) do
    dir = clean(dir)
    -- A repository is never the home folder itself: a workspace that holds it (Neovim started in
    -- ~ or /) would make every dotfile a project file. The project files by name still count there.
    if not (home and under(home, dir)) then
      table.insert(workspaces, dir)
    end
  end
  local user = { plugin_dir, clean(vim.fn.stdpath('config')), clean(vim.fn.stdpath('data')) }
  if vim.env.VIMRUNTIME then
    table.insert(user, clean(vim.env.VIMRUNTIME))
  end
  if vim.env.MYVIMRC and vim.env.MYVIMRC ~= '' then
    table.insert(user, clean(vim.env.MYVIMRC))
  end
  local argv = vim.v.argv or {}
  for i, arg in ipairs(argv) do
    if arg == '-u' and argv[i + 1] and argv[i + 1] ~= 'NONE' and argv[i + 1] ~= 'NORC' then
      table.insert(user, clean(argv[i + 1]))
    end
  end
  return { workspaces = workspaces, user = user }
end

--- Whether a file belongs to the project rather than to the user: a project config file by its
--- name wherever it lies, else a file under a workspace folder that is not under a user folder.
---@param file string
---@param ctx RepriseTrustContext
---@return boolean
function M.is_project_file(file, ctx)
  if M.project_config_names[file:match('[^/]+$') or file] then
    return true
  end
  local path = clean(file)
  for _, dir in ipairs(ctx.user) do
    if under(path, dir) then
      return false
    end
  end
  for _, dir in ipairs(ctx.workspaces) do
    if under(path, dir) then
      return true
    end
  end
  return false
end

-- Neovim's own exrc loader (0.12): its frame is on the stack while it runs an exrc file.
local exrc_loader = '/lua/vim/_core/exrc.lua'

--- The project file the current call comes from, or nil. Looked at: every Lua function on the
--- stack (the file it was defined in, so a function an exrc scheduled still counts), the file
--- Vimscript is sourcing (`<sfile>`: a .nvimrc or .exrc running `:lua`), Neovim's exrc loader,
--- and the unnamed chunk Neovim 0.9–0.10 run .nvim.lua as ("<nvim>") while starting with 'exrc' set.
---@param ctx RepriseTrustContext|nil
---@return string|nil
function M.project_caller(ctx)
  ctx = ctx or M.context()
  local level = 2
  while true do
    local info = debug.getinfo(level, 'S')
    if not info then
      break
    end
    local src = info.source or ''
    if src:sub(-#exrc_loader) == exrc_loader then
      return 'an exrc file' -- Neovim 0.12 runs .nvimrc and .exrc through nvim_exec2, without their name
    elseif src:sub(1, 1) == '@' then
      local file = src:sub(2)
      if (M.project_config_names[file:match('[^/]+$') or file] or vim.fn.filereadable(file) == 1)
        and M.is_project_file(file, ctx) then
        return clean(file)
      end
    elseif src == '<nvim>' then
      if vim.v.vim_did_enter == 0 and vim.o.exrc then
        return clean('.nvim.lua')
      end
    elseif not src:find('\n') and src:sub(1, 1) ~= '=' and M.project_config_names[src:match('[^/]+$') or src] then
      return src -- loadstring(code, '.lazy.lua')
    end
    level = level + 1
  end
  local ok, sfile = pcall(vim.fn.expand, '<sfile>')
  if ok and type(sfile) == 'string' and sfile ~= '' and vim.fn.filereadable(sfile) == 1
    and M.is_project_file(sfile, ctx) then
    return clean(sfile)
  end
  return nil
end

--- opts without what a project file may not set, and the names of what was taken out; then the
--- spending and cost settings it gave, taken out too (sent as the project's), and their names.
---@param opts table
---@return table opts, string[] dropped, table spending, string[] spending_names
function M.strip(opts)
  local out = vim.deepcopy(opts)
  local dropped = {}
  local spending, spending_names = {}, {}
  if type(out.settings) == 'table' then
    for _, k in ipairs(vim.list_extend(vim.list_extend({}, M.spending_settings), M.cost_settings)) do
      if out.settings[k] ~= nil then
        spending[k] = out.settings[k]
        out.settings[k] = nil
        table.insert(spending_names, k)
      end
    end
  end
  for _, k in ipairs(M.protected) do
    if out[k] ~= nil then
      out[k] = nil
      table.insert(dropped, k)
    end
  end
  if type(out.settings) == 'table' then
    for _, k in ipairs(M.protected_settings) do
      if out.settings[k] ~= nil then
        out.settings[k] = nil
        table.insert(dropped, 'settings.' .. k)
      end
    end
  end
  return out, dropped, spending, spending_names
end

return M
