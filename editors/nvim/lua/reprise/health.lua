-- :checkhealth reprise — binary found, its version, an API key in the environment, and a server
-- that answers initialize.
local config = require('reprise.config')

local M = {}

local h = vim.health or require('health')
local start = h.start or h.report_start
local ok = h.ok or h.report_ok
local warn = h.warn or h.report_warn
local err = h.error or h.report_error
local info = h.info or h.report_info

local key_vars = { 'GEMINI_API_KEY', 'GOOGLE_API_KEY' }

local function env(name)
  local extra = config.options.cmd_env or {}
  local v = extra[name]
  if v == nil then
    v = vim.env[name]
  end
  return v ~= nil and v ~= '' and v or nil
end

--- The ways to get the binary, offered when it is missing (:help reprise-install).
M.install_advice = {
  'Download the archive for your platform from https://github.com/reprise-dev/reprise/releases '
    .. '(reprise_VERSION_OS_ARCH.tar.gz, .zip on Windows) and put `reprise` in a folder on $PATH',
  'Or build it with Go: `go install github.com/reprise-dev/reprise/cmd/reprise@latest` '
    .. '(it lands in $(go env GOPATH)/bin, which must be on $PATH)',
  'Or give its path in your own configuration: '
    .. "require('reprise').setup({ cmd = { '/path/to/reprise', 'serve', '--stdio' } })",
}

--- Starts the server, sends initialize and waits for the answer.
---@param cmd string[]
---@param timeout integer ms
---@return table|nil result, string|nil error
function M.probe(cmd, timeout)
  local buf, result, failure = '', nil, nil
  local job = vim.fn.jobstart(cmd, {
    env = config.options.cmd_env,
    cwd = vim.fn.getcwd(),
    stdout_buffered = false,
    on_stdout = function(_, data)
      buf = buf .. table.concat(data, '\n')
      local len, rest = buf:match('Content%-Length: (%d+)\r\n\r\n(.*)$')
      if len and #rest >= tonumber(len) then
        local okd, msg = pcall(vim.json.decode, rest:sub(1, tonumber(len)))
        if okd and msg.result then
          result = msg.result
        else
          failure = okd and vim.inspect(msg.error) or 'undecodable answer'
        end
      end
    end,
    on_exit = function(_, code)
      if not result then
        failure = failure or string.format('the server exited with code %d before answering', code)
      end
    end,
  })
  if job <= 0 then
    return nil, 'cannot run ' .. table.concat(cmd, ' ')
  end
  local body = vim.json.encode({
    jsonrpc = '2.0',
    id = 1,
    method = 'initialize',
    params = { processId = vim.NIL, rootUri = vim.uri_from_fname(vim.fn.getcwd()), capabilities = vim.empty_dict() },
  })
  vim.fn.chansend(job, string.format('Content-Length: %d\r\n\r\n%s', #body, body))
  vim.wait(timeout, function()
    return result ~= nil or failure ~= nil
  end, 20)
  vim.fn.jobstop(job)
  if not result and not failure then
    failure = string.format('no answer to initialize within %d ms', timeout)
  end
  return result, failure
end

function M.check()
  local cmd = config.options.cmd
  start('reprise')
  local bin = cmd[1]
  if vim.fn.executable(bin) ~= 1 then
    err(string.format('%s not found (options.cmd = %s)', bin, vim.inspect(cmd)), M.install_advice)
    return
  end
  ok('binary: ' .. vim.fn.exepath(bin))
  local version = vim.fn.system({ bin, 'version' })
  if vim.v.shell_error == 0 then
    ok('version: ' .. vim.trim(version))
  else
    warn('`' .. bin .. ' version` failed: ' .. vim.trim(version))
  end
  local key
  for _, name in ipairs(key_vars) do
    if env(name) then
      key = name
      break
    end
  end
  if key then
    ok('API key: ' .. key .. ' is set')
  elseif env('GOOGLE_GENAI_USE_VERTEXAI') then
    ok('Vertex AI: GOOGLE_GENAI_USE_VERTEXAI is set (project ' .. (env('GOOGLE_CLOUD_PROJECT') or '?') .. ')')
  else
    err('no API key: set GEMINI_API_KEY (or GOOGLE_API_KEY) in the environment or in cmd_env')
  end
  if env('GOOGLE_GEMINI_BASE_URL') then
    info('GOOGLE_GEMINI_BASE_URL = ' .. env('GOOGLE_GEMINI_BASE_URL'))
  end
  local result, failure = M.probe(cmd, 5000)
  if result then
    local si = result.serverInfo or {}
    ok(string.format('server starts: %s %s', si.name or '?', si.version or ''))
  else
    err('the server does not start: ' .. (failure or '?'))
  end
end

return M
