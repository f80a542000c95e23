-- What the :Reprise subcommands do: each runs a server command on the current buffer's client
-- and shows the result with the feature modules.
local buffers = require('reprise.buffers')
local changes = require('reprise.changes')
local chat = require('reprise.chat')
local checkpoints = require('reprise.checkpoints')
local client = require('reprise.client')
local config = require('reprise.config')
local context = require('reprise.context')
local mcp = require('reprise.mcp')
local models = require('reprise.models')
local protocol = require('reprise.protocol')
local review = require('reprise.review')
local status = require('reprise.status')
local util = require('reprise.util')

local C = protocol.command
local levels = vim.log.levels

local M = {}

-- Completion candidates learnt from the last listings.
M.known = { sessions = {}, checkpoints = {}, notes = {} }

local function fail(what, err)
  util.notify(what .. ': ' .. util.error_message(err), levels.ERROR)
end

--- Runs a command on the current buffer's client (started if needed).
---@return integer|nil id, table|nil state
local function with_client()
  local id = client.ensure(0)
  if not id then
    return nil, nil
  end
  return id, client.state(id)
end

local function session_of(id, st)
  return st and st.session or status.last(id)
end

--- Runs a server command on the current buffer's client; an error is shown as `what: message`.
---@param what string
---@param command string
---@param args fun(id: integer, st: table): table|nil
---@param done fun(res: any, id: integer, st: table)
local function run(what, command, args, done)
  local id, st = with_client()
  if not id then
    return
  end
  client.execute(id, command, args(id, st), function(err, res)
    if err then
      return fail(what, err)
    end
    done(res, id, st)
  end)
end

local function current_session(id, st)
  return { sessionId = session_of(id, st) }
end

--- Asks the agent; the answer streams into the chat.
---@param text string|nil the question; nil or blank asks for it with vim.ui.input
function M.ask(text)
  if not text or vim.trim(text) == '' then
    vim.ui.input({ prompt = 'Ask Reprise: ' }, function(input)
      if input and vim.trim(input) ~= '' then
        M.ask(input)
      end
    end)
    return
  end
  local id, st = with_client()
  if not id then
    return
  end
  if st.awaiting_new then
    table.insert(st.awaiting_new, function()
      M.ask(text)
    end)
    return
  end
  if config.options.chat.open_on_ask then
    local win = vim.api.nvim_get_current_win()
    chat.open(id, st.root)
    if vim.api.nvim_win_is_valid(win) then
      vim.api.nvim_set_current_win(win)
    end
  end
  chat.user(id, text, st.session)
  client.execute(id, C.ask, { text = text }, function(err, res)
    if err then
      chat.note(id, '✗ ' .. util.error_message(err))
      return fail('ask', err)
    end
    st.session = res.sessionId
  end)
end

--- Opens the chat of the current buffer's client, the cursor in its prompt buffer.
function M.chat()
  local id, st = with_client()
  if id then
    chat.open(id, st.root)
    local prompt = chat.prompt(id)
    local win = prompt and vim.fn.bufwinid(prompt) or -1
    if win ~= -1 then
      vim.api.nvim_set_current_win(win)
    end
  end
end

--- Cancels the running turn of the current session.
function M.cancel()
  run('cancel', C.cancel, current_session, function(res)
    util.notify(res and res.cancelled and 'turn cancelled' or 'no turn was running')
  end)
end

--- Compacts the current session now (reprise.compact).
---@param focus string|nil what the summary should keep
function M.compact(focus)
  local id, st = with_client()
  if not id then
    return
  end
  local session = session_of(id, st)
  status.set_compacting(session, true)
  local args = { sessionId = session }
  if focus and vim.trim(focus) ~= '' then
    args.focus = focus
  end
  client.execute(id, C.compact, args, function(err, res)
    status.set_compacting(session, false)
    if err then
      return fail('compact', err)
    end
    local cp = res.checkpoint or {}
    util.notify(string.format('checkpoint %d «%s»: %s → %s tokens', cp.n or 0, cp.title or '', util.kilo(res.before),
      util.kilo(res.after)))
  end)
end

--- Shows the /context view in a floating window.
function M.context()
  run('context', C.context, current_session, function(r)
    M.known.notes = M.note_keys(r)
    context.show(r)
  end)
end

--- The keys of the agent's notes in a reprise.context result, for completion.
---@param r table|nil
---@return string[]
function M.note_keys(r)
  local keys = {}
  for _, n in ipairs(r and type(r.state) == 'table' and type(r.state.notes) == 'table' and r.state.notes or {}) do
    table.insert(keys, n.key)
  end
  return keys
end

--- Deletes one of the agent's notes by its key (reprise.forgetNote): the server tells the model at
--- its next call. Without a key, picks it from the session's notes.
---@param key string|nil
function M.forget(key)
  key = vim.trim(key or '')
  if key == '' then
    return run('context', C.context, current_session, function(r)
      M.known.notes = M.note_keys(r)
      local notes = r.state and r.state.notes or {}
      if type(notes) ~= 'table' or #notes == 0 then
        return util.notify('the agent keeps no note in this session')
      end
      vim.ui.select(notes, { prompt = 'Forget the note', kind = 'reprise.note', format_item = function(n)
        return string.format('%s: %s', n.key, n.value)
      end }, function(n)
        if n then
          M.forget(n.key)
        end
      end)
    end)
  end
  run('forget', C.forget_note, function(id, st)
    return { sessionId = session_of(id, st), key = key }
  end, function(res)
    M.known.notes = M.note_keys({ state = res })
    util.notify(string.format('note "%s" deleted; the agent is told at its next call (%d left)', key,
      #(res and res.notes or {})))
  end)
end

--- Lists the MCP servers, their state and their tools in a floating window.
function M.mcp()
  run('mcp', C.mcp, function()
    return {}
  end, mcp.show)
end

--- Picks the model new sessions use from the server's list; `all` also lists retired models.
--- The choice is the user's model setting, sent to every running client.
---@param rest string|nil 'all', or empty
function M.models(rest)
  local all = vim.trim(rest or '') == 'all'
  run('models', C.models, function()
    return all and { all = true } or {}
  end, function(res)
    models.pick(res, function(model)
      config.options.settings.model = model
      client.push_settings()
      util.notify(string.format('new sessions use %s (:Reprise new starts one)', model))
    end)
  end)
end

--- Opens one checkpoint's summary in a scratch buffer.
---@param n integer the checkpoint number
function M.checkpoint(n)
  run('checkpoint', C.checkpoint, function(id, st)
    return { sessionId = session_of(id, st), n = n }
  end, checkpoints.show)
end

--- Lists the checkpoints with vim.ui.select; the chosen one opens in a scratch buffer.
function M.checkpoints()
  run('checkpoints', C.checkpoints, current_session, function(res)
    M.known.checkpoints = {}
    for _, cp in ipairs(res or {}) do
      table.insert(M.known.checkpoints, tostring(cp.n))
    end
    checkpoints.pick(res, M.checkpoint)
  end)
end

---@param s table one entry of reprise.sessions
---@return string
function M.format_session(s)
  -- VS Code's picker row: the title; how full (a session not open has no window: saved), current,
  -- running; the id, turns, model calls, last activity in local time.
  local title = (s.title and s.title ~= '') and s.title or s.sessionId
  local usage = (s.size or 0) > 0
    and string.format('%d%% · %s/%s', math.floor((s.percent or 0) + 0.5), util.kilo(s.used), util.kilo(s.size))
    or 'saved'
  return string.format('%s · %s%s%s — %s · %s%s', title, usage, s.current and ' · current' or '',
    s.running and ' · running' or '', s.sessionId, util.turns_and_calls(s.turns, s.calls), M.when(s.lastActivity))
end

--- An RFC 3339 time (UTC) as " · YYYY-MM-DD HH:MM" in local time; "" when there is none.
---@param iso string|nil
---@return string
function M.when(iso)
  local y, mo, d, h, mi, sec = (iso or ''):match('^(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)')
  if not y then
    return ''
  end
  local utc = os.time({ year = tonumber(y), month = tonumber(mo), day = tonumber(d), hour = tonumber(h),
    min = tonumber(mi), sec = tonumber(sec) })
  -- os.time read the fields as local time: shift by this zone's offset from UTC.
  local now = os.time()
  local offset = os.difftime(now, os.time(os.date('!*t', now)))
  return ' · ' .. os.date('%Y-%m-%d %H:%M', utc + offset)
end

--- Resumes a session; without an id, lists them.
---@param session_id string|nil
function M.resume(session_id)
  if not session_id or session_id == '' then
    return M.sessions()
  end
  local id, st = with_client()
  if not id then
    return
  end
  client.execute(id, C.resume, { sessionId = session_id }, function(err, res)
    if err then
      return fail('resume', err)
    end
    local resumed = res.sessionId
    st.session = resumed
    util.notify('resumed session ' .. resumed)
    client.execute(id, C.history, { sessionId = resumed }, function(herr, h)
      if herr then
        return fail('history', herr)
      end
      chat.history(id, resumed, h.entries, h.pins)
    end)
  end)
end

--- Forks the current session: a new session from a point of it, which the chat then shows; the
--- original is kept, and so are the files (when the original changed some since that point, offers
--- to put them back with reprise.restore on it).
---@param rest string '' (as it is now), 'checkpoint N', 'turn N', or 'here' (in the chat buffer:
---  before the question under the cursor)
function M.fork(rest)
  local words = vim.split(vim.trim(rest or ''), '%s+', { trimempty = true })
  local args = {}
  if words[1] == 'here' and #words == 1 then
    local _, turn = chat.message_at(vim.api.nvim_get_current_buf(), vim.api.nvim_win_get_cursor(0)[1])
    if not turn then
      return util.notify('fork here: put the cursor on a question of the chat', levels.ERROR)
    end
    args.turn = turn
  elseif (words[1] == 'checkpoint' or words[1] == 'turn') and #words == 2 and tonumber(words[2]) then
    args[words[1]] = tonumber(words[2])
  elseif #words > 0 then
    return util.notify('fork: give nothing (as it is now), checkpoint N, turn N or here', levels.ERROR)
  end
  run('fork', C.fork, function(id, st)
    args.sessionId = session_of(id, st)
    return args
  end, function(res, id, st)
    st.session = res.sessionId
    client.execute(id, C.history, { sessionId = res.sessionId }, function(herr, h)
      if herr then
        return fail('history', herr)
      end
      chat.history(id, res.sessionId, h.entries, h.pins, string.format('forked from %s of %s', res.from, res.parent))
    end)
    if not res.restoreTurn then
      return util.notify(string.format(
        'forked from %s; the original session is kept, the files on disk were not changed', res.from))
    end
    vim.ui.select({ 'Keep the files as they are', 'Restore the files' }, {
      prompt = string.format(
        'Forked from %s. The files are as the original left them: restore what it changed from turn %d on?',
        res.from, res.restoreTurn),
      kind = 'reprise.fork',
    }, function(choice)
      if choice ~= 'Restore the files' then
        return
      end
      client.execute(id, C.restore, { sessionId = res.parent, turn = res.restoreTurn }, function(rerr, r)
        if rerr then
          return fail('restore', rerr)
        end
        local restored = r and r.restored or {}
        util.notify(#restored > 0 and ('restored ' .. table.concat(restored, ', ')) or 'no file to restore')
      end)
    end)
  end)
end

--- Exports the current session for people (reprise.export): the whole conversation with each
--- turn's tokens and dollars, secrets masked, as Markdown or one HTML page, written to path
--- (default: reprise-{id}.{format} in the current directory).
---@param rest string '[md|html] [path]'
function M.export(rest)
  local words = vim.split(vim.trim(rest or ''), '%s+', { trimempty = true })
  local format = 'md'
  if words[1] == 'md' or words[1] == 'html' then
    format = table.remove(words, 1)
  end
  local path = table.concat(words, ' ')
  if path ~= '' and format == 'md' and path:lower():match('%.html?$') then
    format = 'html'
  end
  run('export', C.export, function(id, st)
    return { sessionId = session_of(id, st), format = format }
  end, function(res)
    local dest = vim.fn.fnamemodify(vim.fn.expand(path ~= '' and path or res.fileName), ':p')
    local ok = vim.fn.writefile(vim.split(res.content or '', '\n', { plain = true }), dest, 'b') == 0
    if not ok then
      return util.notify('export: cannot write ' .. dest, levels.ERROR)
    end
    util.notify('session exported to ' .. dest)
  end)
end

--- A subagent as the picker lists it: "⋯ survey the notes · gemini-3.5-flash-lite · 3 calls · $0.0012".
---@param sa table
---@return string
function M.format_subagent(sa)
  local chat_view = require('reprise.chat')
  return string.format('%s %s · %s', chat_view.subagent_icon[sa.status] or sa.status, sa.description or '?',
    (chat_view.subagent_line(sa):gsub('^%s*↳ %S+ subagent ', '')))
end

--- Lists the subagents of the current session with vim.ui.select: a running one is stopped (its
--- task call says so and the turn goes on), an ended one's transcript opens in a scratch buffer.
function M.subagents()
  local id, st = with_client()
  if not id then
    return
  end
  local session = session_of(id, st)
  local list = chat.subagents(id, session)
  if #list == 0 then
    return util.notify('no subagent in this session yet')
  end
  vim.ui.select(list, { prompt = 'Reprise subagents: a running one is stopped, an ended one opened',
    format_item = M.format_subagent, kind = 'reprise.subagent' }, function(sa)
    if not sa then
      return
    end
    if sa.status == 'running' then
      local args = { sessionId = session, subagentId = sa.subagentId }
      return client.execute(id, C.cancel_subagent, args, function(err, res)
        if err then
          return fail('subagents', err)
        end
        util.notify(res and res.cancelled and ('subagent «' .. sa.description .. '» stopped; the turn goes on')
          or 'that subagent has already ended')
      end)
    end
    if not sa.saved then
      return util.notify('subagent «' .. sa.description .. '» was not saved: sessions are not saved here')
    end
    client.execute(id, C.export, { sessionId = session, subagentId = sa.subagentId, format = 'md' }, function(err, res)
      if err then
        return fail('subagents', err)
      end
      local buf = util.scratch(util.lines(res.content or ''), 'markdown')
      vim.cmd('botright split')
      vim.api.nvim_win_set_buf(0, buf)
    end)
  end)
end

--- Lists the sessions with vim.ui.select; the chosen one is resumed.
function M.sessions()
  local id = with_client()
  if not id then
    return
  end
  client.execute(id, C.sessions, nil, function(err, res)
    if err then
      return fail('sessions', err)
    end
    M.known.sessions = {}
    for _, s in ipairs(res or {}) do
      table.insert(M.known.sessions, s.sessionId)
    end
    if not res or #res == 0 then
      return util.notify('no sessions yet')
    end
    vim.ui.select(res, { prompt = 'Reprise sessions', format_item = M.format_session, kind = 'reprise.session' },
      function(s)
        if s then
          M.resume(s.sessionId)
          M.chat() -- picked to be worked on: its chat is shown
        end
      end)
  end)
end

--- Starts a new session, which becomes the current one. A question asked before the server
--- answers waits for it (st.awaiting_new), so that it goes to the new session, not the old one.
function M.new()
  local id, st = with_client()
  if not id then
    return
  end
  st.awaiting_new = st.awaiting_new or {}
  client.execute(id, C.new_session, nil, function(err, res)
    local waiting = st.awaiting_new or {}
    st.awaiting_new = nil
    if err then
      fail('new session', err)
    else
      st.session = res.sessionId
      util.notify('new session ' .. res.sessionId)
    end
    for _, resume in ipairs(waiting) do
      resume()
    end
  end)
end

--- Takes the current session back to a turn (reprise.restore); the server's error is shown as is.
---@param turn integer|nil the turn to go back to; nil asks for it
function M.restore(turn)
  if not turn then
    vim.ui.input({ prompt = 'Restore the session to turn: ' }, function(input)
      local n = tonumber(input or '')
      if n then
        M.restore(n)
      end
    end)
    return
  end
  run('restore', C.restore, function(id, st)
    return { sessionId = session_of(id, st), turn = turn }
  end, function(res, _, st)
    util.notify(string.format('session restored to turn %d', turn))
    if res and res.sessionId then
      st.session = res.sessionId
    end
  end)
end

--- Lists the files the agent changed in the current session (reprise.changes) in the quickfix list.
function M.changes()
  local args
  run('changes', C.changes, function(id, st)
    args = current_session(id, st)
    return args
  end, function(res, id)
    changes.quickfix(res, id, args)
  end)
end

-- The path a diff or undo is about: the argument, else the current buffer's file.
local function target(path)
  if path and path ~= '' then
    return path
  end
  local name = vim.api.nvim_buf_get_name(0)
  if name == '' then
    util.notify('no file: give a path or run this from a file buffer', levels.ERROR)
    return nil
  end
  return name
end

--- Shows a diff split of a file against its restore point (the current buffer's file by default).
---@param path string|nil
function M.diff(path)
  path = target(path)
  if not path then
    return
  end
  run('diff', C.changes, current_session, function(res, id, st)
    local file = changes.find(res and res.files, path, st.root)
    if not file then
      return util.notify(path .. ' was not changed by the agent in this session', levels.WARN)
    end
    review.open(id, res.sessionId or session_of(id, st), res.turn or 1, file)
  end)
end

--- Keeps or undoes the agent's change under the cursor: in the diff split of :Reprise diff (either
--- side), the change as shown there; in a file's buffer, the change on the cursor's line now.
---@param kind string 'keep' or 'undo'
function M.hunk(kind)
  local buf = vim.api.nvim_get_current_buf()
  local line = vim.api.nvim_win_get_cursor(0)[1]
  local rv, side = review.of(buf)
  if rv then
    return review.apply(rv, side, line, kind)
  end
  local path = vim.api.nvim_buf_get_name(buf)
  if path == '' or vim.bo[buf].buftype ~= '' then
    return util.notify(kind .. 'hunk: put the cursor on a change of a file the agent changed (:Reprise diff)',
      levels.ERROR)
  end
  run(kind .. 'hunk', C.changes, current_session, function(res, id, st)
    local file = changes.find(res and res.files, path, st.root)
    if not file then
      return util.notify(vim.fn.fnamemodify(path, ':~:.') .. ' was not changed by the agent in this session',
        levels.WARN)
    end
    review.apply({ client = id, session = res.sessionId or session_of(id, st), turn = res.turn or 1, file = file },
      'new', line, kind)
  end)
end

--- Undoes the agent's changes to one file since the session began (reprise.restore with paths);
--- a file the user changed since is refused, with the server's reason.
---@param path string|nil the current buffer's file by default
function M.undo(path)
  path = target(path)
  if not path then
    return
  end
  local abs = vim.fn.fnamemodify(path, ':p')
  run('undo', C.restore, function(id, st)
    return { sessionId = session_of(id, st), turn = 1, paths = { abs } }
  end, function(res, _, st)
    local restored = res and res.restored or {}
    local full = {}
    for _, p in ipairs(restored) do
      table.insert(full, vim.fn.fnamemodify(p:sub(1, 1) == '/' and p or (st.root .. '/' .. p), ':p'))
    end
    buffers.reload(full, 'was restored on disk')
    for _, r in ipairs(res and res.refused or {}) do
      util.notify(string.format('undo refused for %s: %s', r.path, r.reason), levels.WARN)
    end
    if #restored > 0 then
      util.notify('undone: ' .. table.concat(restored, ', '))
    end
    changes.refresh_quickfix()
  end)
end

--- Pins a file or a text to the current session's context (reprise.pin): it stays in the model's
--- context whatever compaction does. `rest` is empty (the current buffer's file), `text {text}`
--- (a text; without one, asked with vim.ui.input), `message` (the chat message under the cursor),
--- or a path.
---@param rest string|nil
function M.pin(rest)
  rest = vim.trim(rest or '')
  local sub, arg = rest:match('^(%S+)%s*(.-)$')
  local args
  if sub == 'text' then
    if arg == '' then
      vim.ui.input({ prompt = 'Pin to Reprise\'s context: ' }, function(input)
        if input and vim.trim(input) ~= '' then
          M.pin('text ' .. input)
        end
      end)
      return
    end
    args = { kind = 'message', text = arg }
  elseif sub == 'message' then
    local chat_id = vim.b.reprise_client
    local buf = vim.api.nvim_get_current_buf()
    if not chat_id or chat.buf(chat_id) ~= buf then
      return util.notify('pin message: put the cursor on a message in the chat buffer', levels.ERROR)
    end
    local text, turn, session = chat.message_at(buf, vim.api.nvim_win_get_cursor(0)[1])
    if not text then
      return util.notify('pin message: no message under the cursor', levels.ERROR)
    end
    args = { kind = 'message', text = text }
    -- The turn is the session's: sent only when the message is of the session pinned to.
    local st = client.state(chat_id)
    local current = session_of(chat_id, st)
    if turn and current and (session or chat.first_session(chat_id)) == current then
      args.turn = turn
    end
  else
    local path = rest
    if path == '' then
      path = vim.api.nvim_buf_get_name(0)
      if path == '' or vim.bo.buftype ~= '' then
        return util.notify('pin: no file here: give a path, or `text {text}`, or run it from a file buffer',
          levels.ERROR)
      end
    end
    args = { kind = 'file', path = vim.fn.fnamemodify(vim.fn.expand(path), ':p') }
  end
  run('pin', C.pin, function(id, st)
    args.sessionId = session_of(id, st)
    return args
  end, function(res, id)
    local p = res and res.pin or {}
    chat.set_pins(id, res and res.pins or { p })
    util.notify(string.format('pinned %s %s (%s tokens)', p.id or '', chat.pin_name(p), util.kilo(p.tokens)))
  end)
end

--- Unpins one pin by its id (reprise.unpin); without one, picks it from the session's pins.
---@param pin_id string|nil
function M.unpin(pin_id)
  pin_id = vim.trim(pin_id or '')
  if pin_id == '' then
    return M.pins(function(pins)
      vim.ui.select(pins, { prompt = 'Unpin', kind = 'reprise.pin', format_item = function(p)
        return string.format('%s %s (%s tokens)', p.id, chat.pin_name(p), util.kilo(p.tokens))
      end }, function(p)
        if p then
          M.unpin(p.id)
        end
      end)
    end)
  end
  run('unpin', C.unpin, function(id, st)
    return { sessionId = session_of(id, st), id = pin_id }
  end, function(res, id)
    chat.set_pins(id, res and res.pins or {})
    util.notify('unpinned ' .. pin_id)
  end)
end

--- Lists the current session's pins (reprise.pins) in a notification; `then_` gets them instead
--- when there are any.
---@param then_ fun(pins: table[])|nil
function M.pins(then_)
  run('pins', C.pins, current_session, function(res, id)
    local pins = res and res.pins or {}
    chat.set_pins(id, pins)
    if #pins == 0 then
      return util.notify('nothing is pinned in this session (:Reprise pin, :Reprise pin text …)')
    end
    if type(then_) == 'function' then
      return then_(pins)
    end
    local lines = { chat.pins_line(pins) }
    for _, p in ipairs(pins) do
      table.insert(lines, string.format('  %s  %-7s %s  %s tokens', p.id, p.kind,
        p.kind == 'file' and (p.label or p.path or '') or chat.pin_name(p), util.kilo(p.tokens)))
    end
    util.notify(table.concat(lines, '\n'))
  end)
end

return M
