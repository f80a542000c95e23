-- The chat buffer: one per client, markdown, in a split. The answer streams into it; tool calls
-- show with their status, compactions and stop reasons are marked.
local config = require('reprise.config')
local protocol = require('reprise.protocol')
local util = require('reprise.util')

local M = {}

local ns = vim.api.nvim_create_namespace('reprise_chat')
local U = protocol.update
local C = protocol.compaction
local E = protocol.entry
local T = protocol.tool_status
local R = protocol.review
local K = protocol.tool_kind

-- chats[client id] = {buf, stream ('text', 'thought' or nil), tools = {'session toolCallId' = extmark},
-- live = {'session toolCallId' = lines of output under it}, calls = {'session toolCallId' = its last
-- tool update}, subagents = {'session toolCallId' = its subagent}, session (the one shown last)}
local chats = {}

-- refused is the plugin's own: a failed call the policy or the user refused.
M.status_icon = { [T.in_progress] = '⋯', [T.completed] = '✓', [T.failed] = '✗', refused = '⊘' }

local function valid(chat)
  return chat and vim.api.nvim_buf_is_valid(chat.buf)
end

-- Windows showing the buffer that follow its end: all but the current one when the user has
-- moved the cursor up to read.
local function followers(buf)
  local n = vim.api.nvim_buf_line_count(buf)
  local out = {}
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == buf
      and (win ~= vim.api.nvim_get_current_win() or vim.api.nvim_win_get_cursor(win)[1] >= n) then
      table.insert(out, win)
    end
  end
  return out
end

local function follow(buf, wins)
  local n = vim.api.nvim_buf_line_count(buf)
  for _, win in ipairs(wins or followers(buf)) do
    if vim.api.nvim_win_is_valid(win) then
      vim.api.nvim_win_set_cursor(win, { n, 0 })
    end
  end
end

local function edit(chat, fn)
  local wins = followers(chat.buf)
  vim.bo[chat.buf].modifiable = true
  fn(chat.buf)
  vim.bo[chat.buf].modifiable = false
  follow(chat.buf, wins)
end

--- Appends whole lines, after a blank line unless the buffer is empty or `tight`.
local function append(chat, lines, tight)
  chat.stream = nil
  edit(chat, function(buf)
    local n = vim.api.nvim_buf_line_count(buf)
    local lastline = vim.api.nvim_buf_get_lines(buf, n - 1, n, false)[1]
    if n == 1 and lastline == '' then
      vim.api.nvim_buf_set_lines(buf, 0, 1, false, lines)
      return
    end
    if not tight and lastline ~= '' then
      lines = vim.list_extend({ '' }, lines)
    end
    vim.api.nvim_buf_set_lines(buf, n, n, false, lines)
  end)
end

--- Appends a streamed chunk to the end of the buffer; a thought is quoted.
local function stream(chat, kind, text)
  if chat.stream ~= kind then
    append(chat, { kind == 'thought' and '> ' or '' })
    chat.stream = kind
  end
  edit(chat, function(buf)
    local n = vim.api.nvim_buf_line_count(buf)
    local lastline = vim.api.nvim_buf_get_lines(buf, n - 1, n, false)[1]
    local lines = util.lines(lastline .. text)
    if kind == 'thought' then
      for i = 2, #lines do
        lines[i] = '> ' .. lines[i]
      end
    end
    vim.api.nvim_buf_set_lines(buf, n - 1, n, false, lines)
  end)
end

--- The chat of a client, created (hidden) if needed.
---@param id integer client id
---@param root string|nil workspace root, for the buffer name
---@return table chat
function M.get(id, root)
  local chat = chats[id]
  if valid(chat) then
    return chat
  end
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = 'markdown'
  vim.bo[buf].modifiable = false
  pcall(vim.api.nvim_buf_set_name, buf, 'reprise://chat/' .. (root or tostring(id)))
  vim.b[buf].reprise_client = id
  vim.keymap.set('n', 'q', '<cmd>close<cr>',
    { buffer = buf, silent = true, nowait = true, desc = 'Close the Reprise chat' })
  vim.keymap.set('n', 'gp', function()
    require('reprise.actions').pin('message')
  end, { buffer = buf, silent = true, nowait = true, desc = 'Pin the Reprise message under the cursor' })
  chat = { buf = buf, tools = {}, live = {}, calls = {}, subagents = {} }
  chats[id] = chat
  return chat
end

M.prompt_hint = 'Ask Reprise · <CR> sends (normal mode), <C-s> from insert mode'

--- Sends what the prompt buffer holds through the same path as :Reprise ask, and empties it.
---@param buf integer the prompt buffer
---@return string|nil the text sent
function M.submit(buf)
  local text = vim.trim(table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n'))
  if text == '' then
    return nil
  end
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, {})
  vim.bo[buf].modified = false
  require('reprise.actions').ask(text)
  return text
end

-- The prompt buffer of a chat: a scratch buffer under it where the question is typed.
local function prompt_buf(id, chat)
  if chat.prompt and vim.api.nvim_buf_is_valid(chat.prompt) then
    return chat.prompt
  end
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = 'markdown'
  pcall(vim.api.nvim_buf_set_name, buf, 'reprise://prompt/' .. tostring(id))
  vim.b[buf].reprise_client = id
  vim.b[buf].reprise_prompt = true
  local function send()
    vim.cmd('stopinsert')
    M.submit(buf)
  end
  vim.keymap.set('n', '<CR>', send, { buffer = buf, silent = true, desc = 'Send the question to Reprise' })
  vim.keymap.set({ 'n', 'i' }, '<C-s>', send, { buffer = buf, silent = true, desc = 'Send the question to Reprise' })
  vim.keymap.set('n', 'q', '<cmd>close<cr>',
    { buffer = buf, silent = true, nowait = true, desc = 'Close the Reprise prompt' })
  chat.prompt = buf
  return buf
end

--- Shows the chat of a client in a split (or focuses it when already visible), with its prompt
--- buffer under it (chat.prompt).
---@param id integer client id
---@param root string|nil
---@return integer win
function M.open(id, root)
  local chat = M.get(id, root)
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == chat.buf then
      return win
    end
  end
  local o = config.options.chat
  vim.cmd(o.split)
  local win = vim.api.nvim_get_current_win()
  vim.api.nvim_win_set_buf(win, chat.buf)
  if o.width and o.split:find('vsplit') then
    vim.api.nvim_win_set_width(win, o.width)
  end
  vim.wo[win].wrap = true
  vim.wo[win].linebreak = true
  vim.wo[win].number = false
  if o.prompt then
    local buf = prompt_buf(id, chat)
    if vim.fn.bufwinid(buf) == -1 then
      vim.cmd('belowright ' .. (o.prompt_height or 5) .. 'split')
      local pwin = vim.api.nvim_get_current_win()
      vim.api.nvim_win_set_buf(pwin, buf)
      vim.wo[pwin].wrap = true
      vim.wo[pwin].number = false
      vim.wo[pwin].winfixheight = true
      vim.wo[pwin].statusline = M.prompt_hint
      vim.api.nvim_set_current_win(win)
    end
  end
  follow(chat.buf)
  M.show_pins(chat)
  return win
end

--- The prompt buffer of a client's chat, if it exists.
---@param id integer
---@return integer|nil bufnr
function M.prompt(id)
  local chat = chats[id]
  return valid(chat) and chat.prompt and vim.api.nvim_buf_is_valid(chat.prompt) and chat.prompt or nil
end

--- Adds the user's question; a header first when it goes to another session than the last shown.
---@param id integer client id
---@param text string
---@param session string|nil the session asked, when known
function M.user(id, text, session)
  local chat = M.get(id)
  local lines = { '## You', '' }
  if session and chat.session and session ~= chat.session then
    lines = { '# Session ' .. session, '', '## You', '' }
  end
  chat.session = session or chat.session
  chat.first_session = chat.first_session or chat.session
  vim.list_extend(lines, util.lines(text))
  vim.list_extend(lines, { '', '## Reprise' })
  append(chat, lines)
end

--- Adds a remark (errors, command results) as a quoted line.
---@param id integer client id
---@param text string
function M.note(id, text)
  local lines = {}
  for _, l in ipairs(util.lines(text)) do
    table.insert(lines, '> ' .. l)
  end
  append(M.get(id), lines)
end

-- The +added −removed counts of an edit's diff content, as VS Code shows them beside the title.
local function diff_counts(u)
  for _, c in ipairs(type(u.content) == 'table' and u.content or {}) do
    if type(c) == 'table' and c.type == 'diff' and type(c.newText) == 'string' then
      local old = type(c.oldText) == 'string' and c.oldText or ''
      local added, removed = 0, 0
      local ok, hunks = pcall(vim.diff, old, c.newText, { result_type = 'indices' })
      if not ok or type(hunks) ~= 'table' then
        return ''
      end
      for _, hk in ipairs(hunks) do
        removed, added = removed + hk[2], added + hk[4]
      end
      return string.format(' +%d −%d', added, removed)
    end
  end
  return ''
end

-- How many lines of a running command's output show under its line.
M.live_lines = 5

--- A duration as VS Code's chat writes it: "4 s", "1 min 5 s".
---@param ms number
---@return string
function M.seconds(ms)
  local s = math.max(0, math.floor((ms or 0) / 1000 + 0.5))
  if s < 60 then
    return s .. ' s'
  end
  return math.floor(s / 60) .. ' min' .. (s % 60 > 0 and (' ' .. s % 60 .. ' s') or '')
end

-- The last M.live_lines lines of a running command's output, quoted under its line.
local function live_lines(live)
  if (live.tail or '') == '' and type(live.note) == 'string' and live.note ~= '' then
    return { '  │ ' .. live.note .. '…' } -- silent for a few seconds: what it is likely doing
  end
  local lines = util.lines(live.tail or '')
  if lines[#lines] == '' then
    table.remove(lines)
  end
  local out = {}
  for i = math.max(1, #lines - M.live_lines + 1), #lines do
    table.insert(out, '  │ ' .. lines[i]:gsub('\r', ''))
  end
  return out
end

--- Why a call was refused, in a few words: the first clause of what the model was told ("cart.go
--- has unsaved changes in the editor"), "refused" leading it, as VS Code's row says it.
---@param output string|nil
---@return string
function M.refusal(output)
  local why = vim.trim(((output or ''):gsub('\n.*', '')))
  why = vim.trim((why:gsub(';.*', '')))
  if #why > 100 then
    why = why:sub(1, 99) .. '…'
  end
  if why == '' then
    return 'refused'
  end
  return why:find('^refused') and why or ('refused: ' .. why)
end

--- The status a command that ran reported when it said no (a test run with failures, a grep that
--- found nothing): the tool worked, the command said no, as VS Code's row tells it. nil otherwise.
---@param u table a tool_call_update
---@param status string
---@return integer|nil
function M.exit_code(u, status)
  local out = u.rawOutput
  if status ~= T.failed or u.kind ~= K.execute or type(out) ~= 'table' or out.refused then
    return nil
  end
  return tonumber((out.output or ''):match('exit status (%d+)%s*$'))
end

local function tool_line(u, status)
  local exit = M.exit_code(u, status)
  local icon = exit and '!' or (M.status_icon[status] or status)
  local line = string.format('- %s %s', icon, u.title or u.kind or 'tool')
  local out = u.rawOutput
  if exit then
    local verdict = type(out.verdict) == 'string' and out.verdict ~= '' and (' · ' .. out.verdict) or ''
    line = line .. ' · exit ' .. exit .. verdict
  end
  if u.live and status == T.in_progress then
    return line .. ' · running ' .. M.seconds(u.live.elapsedMs)
  end
  if out and out.refused then
    line = line .. ' (' .. M.refusal(out.output) .. ')'
  else
    line = line .. diff_counts(u)
    if out and out.savedPath and out.savedPath ~= '' then
      line = line .. ' · whole output: ' .. out.savedPath
    end
  end
  return line
end

--- A subagent's progress as the line under its task call: its model, calls, tokens with their
--- cached share, cost and what it runs now, as VS Code's row shows them.
---@param sa table the subagent update's subagent
---@return string
function M.subagent_line(sa)
  local t = sa.totals or {}
  local parts = { sa.model or '?', string.format('%d call%s', sa.calls or 0, sa.calls == 1 and '' or 's') }
  if (t.inputTokens or 0) > 0 then
    local cached = (t.cachedTokens or 0) > 0 and string.format(' (%s cached)', util.kilo(t.cachedTokens)) or ''
    table.insert(parts, util.kilo(t.inputTokens) .. ' in' .. cached)
  end
  if (sa.calls or 0) > 0 and t.cost then
    table.insert(parts, util.cost(t.cost))
  end
  local line = '  ↳ ' .. (M.subagent_icon[sa.status] or sa.status or '') .. ' subagent ' .. table.concat(parts, ' · ')
  if sa.status == 'running' and sa.tool and sa.tool ~= '' then
    line = line .. ' · → ' .. sa.tool
  end
  return line
end

M.subagent_icon = { running = '⋯', completed = '✓', failed = '✗', cancelled = '⊘' }

-- Tool call ids are unique within a session only. A running command's line has the last lines
-- of its output under it (chat.live[key] of them), replaced by the one final line; a task call's
-- line has its subagent's under it.
local function on_tool(chat, session, u)
  local key = (session or '') .. ' ' .. tostring(u.toolCallId)
  if u.sessionUpdate == U.subagent then
    if not chat.calls[key] then
      return -- a subagent of no known call
    end
    chat.subagents[key] = u.subagent
    u = vim.tbl_extend('force', chat.calls[key], { sessionUpdate = U.tool_call_update })
  else
    chat.calls[key] = vim.tbl_extend('force', chat.calls[key] or {}, u)
  end
  local status = u.status or T.in_progress
  if u.rawOutput and u.rawOutput.refused then
    status = 'refused'
  end
  local lines = { tool_line(u, status) }
  if u.live and status == T.in_progress then
    vim.list_extend(lines, live_lines(u.live))
  end
  if chat.subagents[key] then
    table.insert(lines, M.subagent_line(chat.subagents[key]))
  end
  local mark = u.sessionUpdate == U.tool_call_update and chat.tools[key]
  if mark then
    local pos = vim.api.nvim_buf_get_extmark_by_id(chat.buf, ns, mark, {})
    if pos and pos[1] then
      edit(chat, function(buf)
        vim.api.nvim_buf_set_lines(buf, pos[1], pos[1] + 1 + (chat.live[key] or 0), false, lines)
        vim.api.nvim_buf_set_extmark(buf, ns, pos[1], 0, { id = mark })
      end)
      chat.live[key] = #lines - 1
      return
    end
  end
  append(chat, lines, chat.stream == nil and chat.last_tool)
  chat.live[key] = #lines - 1
  local row = vim.api.nvim_buf_line_count(chat.buf) - #lines
  chat.tools[key] = vim.api.nvim_buf_set_extmark(chat.buf, ns, row, 0, {})
  chat.last_tool = true
end

-- The markers read as VS Code's chat words them (editors/vscode/src/chat/render.ts).
local function on_compaction(chat, c)
  if c.state == C.running or c.state == C.blocking then
    append(chat, { string.format('> ⟳ Compacting the context%s…',
      c.state == C.blocking and ' (the agent waits)' or '') })
  elseif c.state == C.done and c.checkpoint then
    local cp = c.checkpoint
    local trigger = c.trigger and c.trigger ~= '' and string.format(' (%s)', c.trigger) or ''
    local counts = ((cp.tokensBefore or 0) > 0 or (cp.tokensAfter or 0) > 0)
      and string.format(': %s → %s tokens', util.kilo(cp.tokensBefore), util.kilo(cp.tokensAfter)) or ''
    if (cp.cleared or 0) > 0 then
      append(chat, { string.format('> ✂ %d old tool result%s cleared, %s tokens freed; '
        .. 'the model reads them again on demand · Checkpoint %d', cp.cleared, cp.cleared == 1 and '' or 's',
        util.kilo((cp.tokensBefore or 0) - (cp.tokensAfter or 0)), cp.n or 0) })
    else
      append(chat, { string.format('> ✂ Context compacted%s%s · Checkpoint %d: %s', trigger, counts, cp.n or 0,
        cp.title or '') })
    end
  else
    append(chat, { string.format('> Compaction %s%s', c.state or '?', c.note and (': ' .. c.note) or '') })
  end
end

-- What became of a changed file, as VS Code's Changes list words it.
local review_text = { [R.kept] = 'kept', [R.undone] = 'undone', [R.refused] = 'not undone' }

--- The changes of a file reviewed one by one, as a Changes line says them: "1 change kept ·
--- 2 undone" ("" when none was).
---@param kept integer|nil
---@param undone integer|nil
---@return string
function M.hunk_counts(kept, undone)
  kept, undone = kept or 0, undone or 0
  local parts = {}
  if kept > 0 then
    table.insert(parts, string.format('%d change%s kept', kept, kept == 1 and '' or 's'))
  end
  if undone > 0 then
    table.insert(parts, string.format(kept > 0 and '%d undone' or '%d change%s undone', undone,
      undone == 1 and '' or 's'))
  end
  return table.concat(parts, ' · ')
end

--- The lines listing the files a turn changed (turn_end's changes): path, state, counts, and what
--- became of each when the chat is rebuilt from the history.
---@param changes table[]
---@return string[]
function M.change_lines(changes)
  local lines = { string.format('Changes · %d file%s', #changes, #changes == 1 and '' or 's') }
  for _, f in ipairs(changes) do
    local line = '- `' .. f.path .. '`'
    if f.state and f.state ~= 'modified' then
      line = line .. ' ' .. f.state
    end
    line = line .. (f.binary and ' binary' or string.format(' +%d −%d', f.added or 0, f.removed or 0))
    if f.userChanged and (f.review or R.pending) == R.pending then
      line = line .. ' · edited since'
    end
    -- A file undone whole says only that: its changes undone one by one are part of it.
    local hunks = M.hunk_counts(f.hunksKept, f.hunksUndone)
    if hunks ~= '' and f.review ~= R.undone then
      line = line .. ' · ' .. hunks
    end
    if review_text[f.review] then
      line = line .. ' · ' .. review_text[f.review]
      if f.review == R.refused and f.reason and f.reason ~= '' then
        line = line .. ': ' .. f.reason
      end
    end
    table.insert(lines, line)
  end
  return lines
end

local function on_turn_end(chat, u)
  -- The server counts the session's calls; the line says the turn's.
  local total = u.turn and u.turn.calls
  local calls
  if total then
    chat.calls_at = chat.calls_at or {}
    calls = total - (chat.calls_at[chat.session or ''] or 0)
    chat.calls_at[chat.session or ''] = total
  end
  local lines = {}
  if u.stopReason and u.stopReason ~= protocol.stop.end_turn then
    table.insert(lines, string.format('> ⚠ Stopped: %s%s', (u.stopReason:gsub('_', ' ')),
      (u.error and u.error ~= '') and (' — ' .. u.error) or ''))
  elseif u.error and u.error ~= '' then
    table.insert(lines, '> ✗ ' .. u.error)
  end
  table.insert(lines, calls and string.format('_%d model call%s_', calls, calls == 1 and '' or 's') or '_done_')
  if type(u.changes) == 'table' and #u.changes > 0 then
    table.insert(lines, '')
    vim.list_extend(lines, M.change_lines(u.changes))
  end
  append(chat, lines)
end

--- What the chat shows of a pin: a file's name, or the start of a text in quotes, and its tokens.
---@param p table {id, kind, label, path?, text?, tokens}
---@return string
function M.pin_name(p)
  if p.kind == 'file' then
    local path = (p.path and p.path ~= '') and p.path or (p.label or '')
    return vim.fn.fnamemodify(path, ':t')
  end
  local one = ((p.label ~= nil and p.label ~= '') and p.label or (p.text or '')):gsub('%s+', ' ')
  one = vim.trim(one)
  if vim.fn.strchars(one) > 40 then
    one = vim.trim(vim.fn.strcharpart(one, 0, 39)) .. '…'
  end
  return '“' .. one .. '”'
end

--- The one line that lists the pins: `📌 Pinned: app.ts (1.2k tokens)`, or with several
--- `📌 2 pinned, 1.2k tokens: app.ts (1.2k) · “Use tabs” (14)`: each count said once.
---@param pins table[]
---@return string
function M.pins_line(pins)
  if not pins or #pins == 0 then
    return '📌 Nothing pinned'
  end
  if #pins == 1 then
    return string.format('📌 Pinned: %s (%s tokens)', M.pin_name(pins[1]), util.kilo(pins[1].tokens))
  end
  local total, parts = 0, {}
  for _, p in ipairs(pins) do
    total = total + (p.tokens or 0)
    table.insert(parts, string.format('%s (%s)', M.pin_name(p), util.kilo(p.tokens)))
  end
  return string.format('📌 %d pinned, %s tokens: %s', #pins, util.kilo(total), table.concat(parts, ' · '))
end

--- The plan's progress as the winbar shows it: `☰ Plan 1/4: the item in progress`.
---@param plan table[]|nil {description, status}
---@return string
function M.plan_progress(plan)
  if not plan or #plan == 0 then
    return ''
  end
  local done, now = 0, nil
  for _, t in ipairs(plan) do
    if t.status == 'completed' then
      done = done + 1
    elseif t.status == 'in_progress' then
      now = t.description
    end
  end
  return string.format('☰ Plan %d/%d%s', done, #plan, now and (': ' .. now) or '')
end

-- The plan's progress and the pins in the winbar of the windows showing the chat (Neovim 0.8+),
-- where they stay in view.
function M.show_pins(chat)
  if not valid(chat) or not util.has('0.8') then
    return
  end
  local parts = {}
  if chat.plan and #chat.plan > 0 then
    table.insert(parts, M.plan_progress(chat.plan))
  end
  if chat.pins and #chat.pins > 0 then
    table.insert(parts, M.pins_line(chat.pins))
  end
  local line = table.concat(parts, '  │  '):gsub('%%', '%%%%')
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == chat.buf then
      vim.wo[win].winbar = line
    end
  end
end

M.plan_icon = { pending = '○', in_progress = '▶', completed = '✓', cancelled = '⊘' }

--- The lines of a plan as the chat shows it where the agent wrote it, quoted (not message text):
--- a head with the progress, then each item with its status.
---@param plan table[] {description, status}
---@return string[]
function M.plan_lines(plan)
  if #plan == 0 then
    return { '> ☰ Plan cleared' }
  end
  local done = 0
  for _, t in ipairs(plan) do
    if t.status == 'completed' then
      done = done + 1
    end
  end
  local lines = { string.format('> ☰ Plan · %d of %d done', done, #plan) }
  for _, t in ipairs(plan) do
    local text = (t.description or ''):gsub('%s+', ' ')
    if t.status == 'cancelled' then
      text = '~~' .. text .. '~~'
    elseif t.status == 'in_progress' then
      text = '**' .. text .. '**'
    end
    table.insert(lines, string.format('>   %s %s', M.plan_icon[t.status] or '○', text))
  end
  return lines
end

--- Sets a chat's plan (a plan update, or a resumed session's last write_todos): the lines where it
--- was written, and its progress in the winbar.
---@param id integer client id
---@param plan table[]|nil
function M.set_plan(id, plan)
  local chat = M.get(id)
  chat.plan = type(plan) == 'table' and plan or {}
  append(chat, M.plan_lines(chat.plan))
  M.show_pins(chat)
end

--- Sets a chat's pins (a pins update, reprise.pin's result, a resumed session's history): the
--- winbar lists them, and a notice line says what they became when it changed.
---@param id integer client id
---@param pins table[]|nil
function M.set_pins(id, pins)
  local chat = M.get(id)
  pins = type(pins) == 'table' and pins or {}
  local line = M.pins_line(pins)
  local was = chat.pins_line or M.pins_line({})
  chat.pins = pins
  chat.pins_line = line
  if line ~= was then
    append(chat, { '> ' .. line })
  end
  M.show_pins(chat)
end

--- The ids of the pins the chats show last, for completion.
---@return string[]
function M.pin_ids()
  local out = {}
  for _, chat in pairs(chats) do
    for _, p in ipairs(chat.pins or {}) do
      table.insert(out, p.id)
    end
  end
  table.sort(out)
  return out
end

-- A line that is not part of a message's text: a tool row, a notice or thought, a turn's end.
local function chrome(line)
  for _, icon in pairs(M.status_icon) do
    if line:sub(1, #icon + 3) == '- ' .. icon .. ' ' then
      return true
    end
  end
  return line:match('^  │ ') or line:match('^>') or line:match('^_%d+ model calls?_$') or line == '_done_'
    or line:match('^Changes · ') or line:match('^%- `')
end

--- The message under the cursor of the chat buffer: its text (without tool rows and notices),
--- its turn (numbered per session, as the server does) and the session it belongs to when a
--- `# Session` header above names it (nil: the chat's first session).
---@param buf integer the chat buffer
---@param row integer 1-based cursor line
---@return string|nil text, integer|nil turn, string|nil session
function M.message_at(buf, row)
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local start
  for i = math.min(row, #lines), 1, -1 do
    if lines[i] == '## You' or lines[i] == '## Reprise' then
      start = i
      break
    elseif lines[i]:match('^# Session ') then
      break
    end
  end
  if not start then
    return nil
  end
  local body = {}
  for i = start + 1, #lines do
    local l = lines[i]
    if l:match('^##? ') then
      break
    end
    if not chrome(l) then
      table.insert(body, l)
    end
  end
  local text = vim.trim(table.concat(body, '\n'))
  if text == '' then
    return nil
  end
  local turn, session = 0, nil
  for i = start, 1, -1 do
    local s = lines[i]:match('^# Session (%S+)')
    if s then
      session = s
      break
    elseif lines[i] == '## You' then
      turn = turn + 1
    end
  end
  return text, turn > 0 and turn or nil, session
end

--- The session the chat's first lines belong to (before any `# Session` header).
---@param id integer client id
---@return string|nil
function M.first_session(id)
  local chat = chats[id]
  return chat and chat.first_session
end

--- Handles a reprise/sessionUpdate for a client.
---@param id integer client id
---@param params table {sessionId, update}
function M.on_update(id, params)
  local chat = M.get(id)
  local u = params.update or {}
  if params.sessionId and chat.session and chat.session ~= params.sessionId then
    append(chat, { '# Session ' .. params.sessionId })
  end
  chat.session = params.sessionId or chat.session
  chat.first_session = chat.first_session or chat.session
  local kind = u.sessionUpdate
  if kind ~= U.tool_call and kind ~= U.tool_call_update and kind ~= U.subagent then
    chat.last_tool = false
  end
  if kind == U.message_chunk and u.content then
    stream(chat, 'text', u.content.text or '')
  elseif kind == U.thought_chunk and u.content then
    stream(chat, 'thought', u.content.text or '')
  elseif kind == U.tool_call or kind == U.tool_call_update or kind == U.subagent then
    on_tool(chat, params.sessionId, u)
  elseif kind == U.compaction and u.compaction then
    on_compaction(chat, u.compaction)
  elseif kind == U.retry and u.retry then
    append(chat, { string.format('> ↻ Retrying (attempt %s): %s%s', tostring(u.retry.attempt), u.retry.error or '',
      u.retry.discard and ' — the text above is discarded' or '') })
  elseif kind == U.turn_end then
    on_turn_end(chat, u)
  elseif kind == U.pins then
    M.set_pins(id, u.pins)
  elseif kind == U.plan then
    M.set_plan(id, u.entries)
  end
end

-- The plan a history's write_todos call set, when it succeeded: the server told it live as a plan
-- update.
local function plan_of(e)
  if e.toolKind ~= K.think or e.status ~= T.completed or type(e.rawInput) ~= 'table'
    or type(e.rawInput.todos) ~= 'table' then
    return nil
  end
  local plan = {}
  for _, t in ipairs(e.rawInput.todos) do
    if type(t) ~= 'table' or type(t.description) ~= 'string' or M.plan_icon[t.status] == nil then
      return nil
    end
    table.insert(plan, { description = t.description, status = t.status })
  end
  return plan
end

-- The updates a history entry stands for: what the server streamed live for that step.
local function entry_updates(e)
  if e.kind == E.agent or e.kind == E.thought then
    return { { sessionUpdate = e.kind == E.agent and U.message_chunk or U.thought_chunk,
      content = { type = 'text', text = e.text or '' } } }
  elseif e.kind == E.tool then
    local plan = plan_of(e)
    return { { sessionUpdate = U.tool_call_update, toolCallId = e.toolCallId, title = e.title, kind = e.toolKind,
      status = e.status, rawInput = e.rawInput, content = e.content,
      rawOutput = { output = e.output or '', savedPath = e.savedPath, omitted = e.omitted,
        -- a log written before tool records: the policy's refusal reads so
        refused = e.refused or (e.output or ''):find('^refused by') ~= nil, verdict = e.verdict } },
      plan and { sessionUpdate = U.plan, entries = plan }
        or e.subagent and { sessionUpdate = U.subagent, toolCallId = e.toolCallId, subagent = e.subagent } or nil }
  elseif e.kind == E.compaction then
    return { { sessionUpdate = U.compaction, compaction = {
      state = C.done, checkpoint = { n = e.checkpoint or 0, title = e.title or '' } } } }
  elseif e.kind == E.turn_end then
    return { { sessionUpdate = U.turn_end, stopReason = e.stopReason, error = e.error, turn = { calls = e.calls },
      changes = e.changes } }
  end
  return {}
end

--- Replays a session's history (reprise.history entries) into the chat through the updates the
--- server streamed live, so that it reads as it did: used when a session is resumed from disk.
---@param id integer client id
---@param session string
---@param entries table[] {turn, kind, text?, toolCallId?, title?, toolKind?, status?, rawInput?, output?,
---  savedPath?, omitted?, refused?, content?, checkpoint?, stopReason?, error?, calls?, changes?}
---@param pins table[]|nil the session's pins (reprise.history's pins), shown as the pins update shows them
---@param how string|nil what the header says of the session (default: resumed)
function M.history(id, session, entries, pins, how)
  local chat = M.get(id)
  append(chat, { '# Session ' .. session .. ' (' .. (how or 'resumed') .. ')' })
  chat.session = session
  -- The resumed session's pins are listed under it, even when the chat showed the same ones; its
  -- turns' calls are counted again from its first.
  chat.pins_line = nil
  if chat.calls_at then
    chat.calls_at[session] = nil
  end
  -- Its tool calls are rows under the header, not updates of those the chat showed live (the keys
  -- are the session's and the call's ids, the same again when the chat resumes a session it shows).
  local prefix = session .. ' '
  for _, t in ipairs({ chat.tools, chat.live, chat.calls, chat.subagents }) do
    for key in pairs(t) do
      if key:sub(1, #prefix) == prefix then
        t[key] = nil
      end
    end
  end
  for _, e in ipairs(entries or {}) do
    if e.kind == E.user then
      M.user(id, e.text or '', session)
    end
    for _, u in ipairs(entry_updates(e)) do
      M.on_update(id, { sessionId = session, update = u })
    end
  end
  if type(pins) == 'table' and #pins > 0 then
    M.on_update(id, { sessionId = session, update = { sessionUpdate = U.pins, pins = pins } })
  end
end

--- The subagents the chat has shown for a session, in the order their task calls came, each as
--- its last subagent update had it.
---@param id integer client id
---@param session string|nil
---@return table[] subagents {subagentId, description, model, status, calls, totals, saved?}
function M.subagents(id, session)
  local chat = chats[id]
  local out = {}
  if not chat then
    return out
  end
  local prefix = (session or '') .. ' '
  for key, sa in pairs(chat.subagents or {}) do
    if key:sub(1, #prefix) == prefix then
      local mark = chat.tools[key]
      local pos = mark and vim.api.nvim_buf_get_extmark_by_id(chat.buf, ns, mark, {}) or {}
      table.insert(out, { row = pos[1] or 0, sa = sa })
    end
  end
  table.sort(out, function(a, b)
    return a.row < b.row
  end)
  return vim.tbl_map(function(x)
    return x.sa
  end, out)
end

--- The chat buffer of a client, if it exists.
---@param id integer
---@return integer|nil bufnr
function M.buf(id)
  local chat = chats[id]
  return valid(chat) and chat.buf or nil
end

return M
