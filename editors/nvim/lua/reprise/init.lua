-- Reprise for Neovim: the public API. See :help reprise.
local client = require('reprise.client')
local config = require('reprise.config')
local protocol = require('reprise.protocol')

local M = {}

local did_setup = false

local function install_handlers()
  local chat = require('reprise.chat')
  local status = require('reprise.status')
  client.handlers[protocol.method.context_usage] = function(_, params, ctx)
    if params then
      status.on_usage(ctx.client_id, params)
    end
  end
  client.handlers[protocol.method.session_update] = function(_, params, ctx)
    if not params then
      return
    end
    local u = params.update or {}
    if u.sessionUpdate == protocol.update.compaction and u.compaction then
      local s = u.compaction.state
      status.set_compacting(params.sessionId, s == protocol.compaction.running or s == protocol.compaction.blocking)
    end
    chat.on_update(ctx.client_id, params)
    local st = client.state(ctx.client_id)
    require('reprise.buffers').on_update(st and st.root, u)
  end
  client.handlers['window/showMessageRequest'] = require('reprise.approvals').handler
  -- The server's once-per-session warnings (a routed or retired model, a cap it cannot enforce)
  -- go through vim.notify, as the plugin's own do: Neovim 0.7's default writes them to the
  -- message area, where a notification plugin never sees them.
  client.handlers['window/showMessage'] = function(_, params)
    if type(params) == 'table' and type(params.message) == 'string' then
      local L = vim.log.levels
      local level = ({ L.ERROR, L.WARN, L.INFO, L.DEBUG })[params.type] or L.INFO
      vim.notify(params.message, level)
    end
  end
end

--- Configures the plugin. Safe to call again: the settings are pushed to running servers, the
--- other options apply to servers started afterwards.
---@param opts RepriseOptions|nil {cmd, cmd_env, settings, root_markers, root_dir, chat, attach}
function M.setup(opts)
  config.set(opts)
  install_handlers()
  local group = vim.api.nvim_create_augroup('reprise', { clear = true })
  vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile' }, {
    group = group,
    callback = function(args)
      client.attach_buffer(args.buf)
    end,
  })
  did_setup = true
  client.push_settings()
end

--- setup() with the defaults, when a command runs before the user called it.
function M.ensure_setup()
  if not did_setup then
    M.setup({})
  end
end

--- Ask the agent; without text, prompts with vim.ui.input.
---@param text string|nil
function M.ask(text)
  M.ensure_setup()
  require('reprise.actions').ask(text)
end

--- Runs a :Reprise command line ('compact', 'checkpoint 2', …).
---@param args string
function M.command(args)
  M.ensure_setup()
  require('reprise.commands').run(args)
end

--- The context usage of the current buffer's session, for a statusline: `◔ 42% 10.1k/24k`,
--- with a compaction mark while one runs; '' before the first update.
---@param opts table|nil {escape = true} doubles '%' for statusline expressions ('%!', lualine)
---@return string
function M.statusline(opts)
  local status = require('reprise.status')
  local id = client.find(0) or client.ids()[#client.ids()]
  local st = id and client.state(id)
  local s = status.statusline(id, st and st.session)
  if opts and opts.escape then
    s = s:gsub('%%', '%%%%')
  end
  return s
end

--- The last reprise/contextUsage record of the current buffer's session (nil before any).
---@return table|nil
function M.usage()
  local id = client.find(0) or client.ids()[#client.ids()]
  local st = id and client.state(id)
  return require('reprise.status').get(id, st and st.session)
end

return M
