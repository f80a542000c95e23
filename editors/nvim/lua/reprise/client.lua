-- One language client per workspace root: start, find, attach buffers, run commands.
local config = require('reprise.config')
local protocol = require('reprise.protocol')
local util = require('reprise.util')

local uv = vim.uv or vim.loop

local M = {}

-- roots[root] = client id; state[client id] = {root, ready, queue, session, server_info}.
local roots = {}
local state = {}

--- The handlers installed on the Reprise client only. Filled by init.lua (which owns the
--- feature modules) before the first client starts.
M.handlers = {}

local function is_file_buffer(bufnr)
  return vim.api.nvim_buf_is_valid(bufnr) and vim.bo[bufnr].buftype == ''
    and vim.api.nvim_buf_get_name(bufnr) ~= ''
end

local function under(path, root)
  return path == root or path:sub(1, #root + 1) == root .. '/'
end

--- The workspace root of a buffer: options.root_dir, else the nearest parent holding one of
--- options.root_markers, else the working directory.
---@param bufnr integer|nil
---@return string
function M.root(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local o = config.options
  local given = type(o.root_dir) == 'function' and o.root_dir(bufnr) or nil
  if given then
    return (vim.fn.fnamemodify(given, ':p'):gsub('/$', ''))
  elseif type(o.root_dir) == 'string' then
    return (vim.fn.fnamemodify(o.root_dir, ':p'):gsub('/$', ''))
  end
  local dir = vim.fn.getcwd()
  if is_file_buffer(bufnr) then
    dir = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ':p:h')
  end
  local d = dir
  while true do
    for _, marker in ipairs(o.root_markers) do
      if uv.fs_stat(d .. '/' .. marker) then
        return d
      end
    end
    local parent = vim.fn.fnamemodify(d, ':h')
    if parent == d then
      break
    end
    d = parent
  end
  return vim.fn.getcwd()
end

local function alive(id)
  return id and vim.lsp.get_client_by_id(id) ~= nil
end

--- The running client for a buffer (its chat buffer's client, or its root's), without starting one.
---@param bufnr integer|nil
---@return integer|nil
function M.find(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local id = vim.b[bufnr].reprise_client
  if alive(id) then
    return id
  end
  id = roots[M.root(bufnr)]
  if alive(id) then
    return id
  end
  return nil
end

---@param id integer
---@return table|nil state {root, ready, session, server_info}
function M.state(id)
  return state[id]
end

---@return string[] the workspace roots of the running Reprise clients
function M.roots()
  local out = {}
  for root, id in pairs(roots) do
    if alive(id) then
      table.insert(out, root)
    end
  end
  return out
end

---@return integer[] ids of the running Reprise clients
function M.ids()
  local out = {}
  for id in pairs(state) do
    if alive(id) then
      table.insert(out, id)
    end
  end
  table.sort(out)
  return out
end

local function call(client, method, ...)
  if util.has('0.11') then
    return client[method](client, ...)
  end
  return client[method](...)
end

--- The settings as they go out: a table that is empty must still be a JSON object where the server
--- reads one (settings, mcpServers, a server's env or headers), not the array Neovim makes of it.
---@param s table|nil
---@return table
function M.wire_settings(s)
  s = vim.deepcopy(s or {})
  if type(s.mcpServers) == 'table' then
    for _, server in pairs(s.mcpServers) do
      if type(server) == 'table' then
        server.env = server.env and util.object(server.env)
        server.headers = server.headers and util.object(server.headers)
      end
    end
    s.mcpServers = util.object(s.mcpServers)
  end
  return util.object(s)
end

--- The user's settings: initializationOptions, the level the server holds the spending caps to.
local function settings()
  return M.wire_settings(config.options.settings)
end

--- The answer to workspace/configuration: the user's settings with a project's spending settings
--- over them (config.lua), which the server takes as the workspace's: they may only lower the caps.
local function workspace_settings()
  return { [protocol.config_section] = M.wire_settings(vim.tbl_extend('force', config.options.settings or {},
    config.options.project_settings or {})) }
end

local function make_config(root)
  local capabilities = vim.lsp.protocol.make_client_capabilities()
  capabilities.experimental = vim.tbl_extend('force', capabilities.experimental or {},
    { [protocol.experimental_capability] = true })
  return {
    name = protocol.server_name,
    cmd = config.options.cmd,
    cmd_env = config.options.cmd_env,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
    init_options = settings(),
    settings = workspace_settings(),
    capabilities = capabilities,
    handlers = M.handlers,
    on_init = function(client, result)
      local st = state[client.id]
      if not st then
        return
      end
      st.server_info = result and result.serverInfo
      -- Neovim registers the client only after on_init returns: send the queued commands next.
      vim.schedule(function()
        st.ready = true
        if config.options.project_settings then
          -- A project's spending settings reach the server as the workspace's (it lets them lower
          -- the caps only). Neovim before 0.9 offers no workspace/configuration to pull them with.
          call(client, 'notify', 'workspace/didChangeConfiguration', { settings = client.config.settings })
        end
        local queue = st.queue
        st.queue = {}
        for _, send in ipairs(queue) do
          send()
        end
      end)
    end,
    on_exit = function(code, signal, id)
      local st = state[id]
      if st then
        if roots[st.root] == id then
          roots[st.root] = nil
        end
        state[id] = nil
        for _, send in ipairs(st.queue) do
          send()
        end
      end
      if code ~= 0 then
        vim.schedule(function()
          util.notify(string.format('the server exited (code %d, signal %d); see :LspLog', code, signal or 0),
            vim.log.levels.WARN)
        end)
      end
    end,
  }
end

local function attach(id, bufnr)
  if config.options.attach and is_file_buffer(bufnr) and vim.api.nvim_buf_is_loaded(bufnr) then
    local st = state[id]
    if st and under(vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ':p'), st.root) then
      vim.lsp.buf_attach_client(bufnr, id)
    end
  end
end

--- Attaches a file buffer to the running client of its root, if there is one.
---@param bufnr integer
function M.attach_buffer(bufnr)
  local id = roots[M.root(bufnr)]
  if alive(id) then
    attach(id, bufnr)
  end
end

--- The client for a buffer's root, started if needed.
---@param bufnr integer|nil
---@return integer|nil id
function M.ensure(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local existing = M.find(bufnr)
  if existing then
    return existing
  end
  local root = M.root(bufnr)
  local cfg = make_config(root)
  local id
  if vim.lsp.start and util.has('0.8') and config.options.attach and is_file_buffer(bufnr) then
    id = vim.lsp.start(cfg, { bufnr = bufnr })
  elseif util.has('0.11') then
    id = vim.lsp.start(cfg, { attach = false })
  else
    id = vim.lsp.start_client(cfg)
  end
  if not id then
    util.notify('cannot start ' .. table.concat(config.options.cmd, ' '), vim.log.levels.ERROR)
    return nil
  end
  roots[root] = id
  if not state[id] then
    local client = vim.lsp.get_client_by_id(id)
    state[id] = { root = root, ready = client and client.initialized or false, queue = {} }
  end
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    attach(id, b)
  end
  return id
end

--- Runs a server command (workspace/executeCommand with arguments [args]) on a client.
---@param id integer the client
---@param command string one of protocol.command
---@param args table|nil the argument object; nil sends no argument
---@param cb fun(err: table|nil, result: any)
function M.execute(id, command, args, cb)
  local function send()
    local client = vim.lsp.get_client_by_id(id)
    if not client or not state[id] then
      cb({ message = 'the server is not running' }, nil)
      return
    end
    local params = { command = command, arguments = args and { util.object(args) } or {} }
    local ok = call(client, 'request', 'workspace/executeCommand', params, function(err, result)
      cb(err, result)
    end)
    if not ok then
      cb({ message = 'the server is not running' }, nil)
    end
  end
  local st = state[id]
  if st and not st.ready then
    table.insert(st.queue, send)
  else
    send()
  end
end

--- The settings the server reads from initializationOptions only (trust.protected_settings, and
--- the user's level of trust.spending_settings) that differ between two settings tables.
---@param old table|nil
---@param new table
---@return string[]
local function protected_changes(old, new)
  local out = {}
  local trust = require('reprise.trust')
  for _, k in ipairs(vim.list_extend(vim.list_extend({}, trust.protected_settings), trust.spending_settings)) do
    if not vim.deep_equal((old or {})[k], new[k]) then
      table.insert(out, k)
    end
  end
  return out
end

--- Sends the current settings to every running client (workspace/didChangeConfiguration), so
--- that setup() called again applies them without a restart. The server takes the protected
--- settings, and the user's spending caps, from initializationOptions only (a project reaches the
--- other channels in most clients): when one of them changed, the client is stopped instead, and
--- the next command starts a server with them.
function M.push_settings()
  for _, id in ipairs(M.ids()) do
    local client = vim.lsp.get_client_by_id(id)
    local changed = client and protected_changes(client.config.init_options, settings()) or {}
    if client and #changed > 0 then
      util.notify('the server stops to apply ' .. table.concat(changed, ', ')
        .. ' (read when it starts); the next command starts it again')
      call(client, 'stop')
    elseif client and state[id].ready then
      -- The user's own cost settings first: the server holds the workspace's to them.
      local costs = {}
      for _, k in ipairs(require('reprise.trust').cost_settings) do
        costs[k] = config.options.settings[k]
      end
      call(client, 'notify', protocol.method.did_change_user_settings, { settings = util.object(costs) })
      client.config.settings = workspace_settings()
      if client.settings ~= nil then -- Neovim 0.11+ answers workspace/configuration from it
        client.settings = client.config.settings
      end
      call(client, 'notify', 'workspace/didChangeConfiguration', { settings = client.config.settings })
    end
  end
end

--- Stops one client (its server gets shutdown and exit).
---@param id integer
function M.stop(id)
  local client = vim.lsp.get_client_by_id(id)
  if client then
    call(client, 'stop')
  end
end

--- Stops every Reprise client.
function M.stop_all()
  for _, id in ipairs(M.ids()) do
    M.stop(id)
  end
end

return M
