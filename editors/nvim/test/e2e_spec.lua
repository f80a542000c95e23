-- End-to-end: the plugin against the real `reprise serve` and cmd/fakegemini (scripted by
-- fixtures/script.json). The tests run in order and share one session.
local h = require('harness')

local bin = assert(vim.env.REPRISE_TEST_BIN, 'REPRISE_TEST_BIN is not set (run test/run.sh)')
local tmp = assert(vim.env.REPRISE_TEST_TMP, 'REPRISE_TEST_TMP is not set (run test/run.sh)')
local here = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h')

local T = 15000 -- ms, the longest any condition may take
local ws = tmp .. '/ws'
local url
local reprise = require('reprise')
local client = require('reprise.client')
local chat = require('reprise.chat')

-- Stubs: the answer each vim.ui.select / vim.ui.input call gets, by kind; calls are recorded.
local asked = {}
local answers = {}
vim.ui.select = function(items, opts, on_choice)
  table.insert(asked, { items = items, opts = opts })
  local pick = answers[opts.kind or '']
  on_choice(type(pick) == 'function' and pick(items) or pick)
end
vim.ui.input = function(opts, on_confirm)
  table.insert(asked, { input = true, opts = opts })
  on_confirm(answers.input)
end

-- Notifications are recorded, not echoed into the test output.
local notes = {}
vim.notify = function(msg, level)
  table.insert(notes, { msg = msg, level = level })
end

-- Approvals: the floating window's keys are read by approvals.read_key on this Neovim; the stub
-- records what the window and the statusline show, and answers approval_key.
local approvals = require('reprise.approvals')
local approval_asked = {}
local approval_key = 'a'
local approval_hook -- runs while the float is open, once
approvals.read_key = function()
  local p = approvals.pending()
  if approval_hook then
    local hook = approval_hook
    approval_hook = nil
    hook()
  end
  table.insert(approval_asked, { titles = p.titles, message = p.message, text = h.text(p.buf),
    float = vim.api.nvim_win_get_config(p.win).relative ~= '', statusline = require('reprise.status').statusline() })
  return approval_key
end

local function last_note()
  return notes[#notes] and notes[#notes].msg or ''
end

local usage_events = 0
vim.api.nvim_create_autocmd('User', {
  pattern = 'RepriseContextUsage',
  callback = function()
    usage_events = usage_events + 1
  end,
})

local function write(path, text)
  vim.fn.mkdir(vim.fn.fnamemodify(path, ':h'), 'p')
  local f = assert(io.open(path, 'w'))
  f:write(text)
  f:close()
end

local function id()
  return client.ids()[1]
end

local function chat_text()
  local buf = id() and chat.buf(id())
  return buf and h.text(buf) or ''
end

local function turn_ends()
  local n = 0
  for _ in chat_text():gmatch('\n_%d+ model calls?_') do
    n = n + 1
  end
  return n
end

-- idle waits until every question in the chat has had its turn end: one asked before that is
-- refused by the server ("already running a turn").
local function idle()
  h.wait(T, function()
    local _, questions = ('\n' .. chat_text()):gsub('\n## You\n', '')
    return turn_ends() >= questions
  end, function()
    return 'the running turn to end; the chat ends:\n' .. chat_text():sub(-1500)
  end)
end

local function float_wins()
  return vim.tbl_filter(function(w)
    return vim.api.nvim_win_get_config(w).relative ~= ''
  end, vim.api.nvim_list_wins())
end

h.test('fakegemini starts', function()
  local job = vim.fn.jobstart({ bin .. '/fakegemini', '--script', here .. '/fixtures/script.json' }, {
    on_stdout = function(_, data)
      if not url and data[1] and data[1]:match('^http') then
        url = data[1]
      end
    end,
  })
  h.truthy(job > 0, 'jobstart fakegemini')
  write(tmp .. '/fakegemini.pid', tostring(vim.fn.jobpid(job)))
  h.wait(T, function()
    return url ~= nil
  end, 'the URL of fakegemini')
end)

h.test('setup, and one client per workspace root', function()
  for i = 0, 4 do
    write(string.format('%s/notes/f%d.txt', ws, i), string.rep(string.format('note %d: some text to read.\n', i), 12))
  end
  vim.fn.mkdir(ws .. '/.git', 'p')
  vim.cmd('cd ' .. vim.fn.fnameescape(ws))
  vim.cmd('edit notes/f0.txt')
  reprise.setup({
    cmd = { bin .. '/reprise', 'serve', '--stdio' },
    cmd_env = { GEMINI_API_KEY = 'test-key', GOOGLE_GEMINI_BASE_URL = url },
    settings = { contextBudget = 4000, compactAt = 0.9, blockAt = 0.95, allow = { 'sleep' } },
  })
  local a = client.ensure(0)
  vim.cmd('split notes/f1.txt')
  h.eq(client.ensure(0), a, 'second buffer of the same root')
  h.eq(#client.ids(), 1, 'clients')
  h.eq(client.state(a).root, ws, 'root')
  h.wait(T, function()
    return client.state(a).ready
  end, 'initialize')
  h.truthy(vim.lsp.buf_is_attached(vim.api.nvim_get_current_buf(), a), 'file buffer attached')
  vim.cmd('edit notes/f3.txt')
  h.truthy(vim.lsp.buf_is_attached(vim.api.nvim_get_current_buf(), a), 'a file opened later is attached')
  -- Another root gets its own client.
  write(tmp .. '/other/.git/HEAD', '')
  write(tmp .. '/other/x.txt', 'x\n')
  vim.cmd('edit ' .. vim.fn.fnameescape(tmp .. '/other/x.txt'))
  local b = client.ensure(0)
  h.truthy(b and b ~= a, 'a second client for the second root')
  h.eq(client.state(b).root, tmp .. '/other', 'second root')
  -- A command sent before initialize has been answered waits for it.
  local answered
  client.execute(b, 'reprise.sessions', nil, function(err, res)
    answered = { err = err, res = res }
  end)
  h.wait(T, function()
    return answered ~= nil
  end, 'the answer to a command sent at start-up')
  h.eq(answered.err, nil, 'error')
  h.eq(answered.res, {}, 'sessions of the second root')
  client.stop(b)
  h.wait(T, function()
    return #client.ids() == 1
  end, 'the second client to stop')
  vim.cmd('bwipeout')
  vim.cmd('silent only')
end)

h.test('ask streams the answer and tool calls into the chat buffer', function()
  -- Count the chunks of the answer as they reach the chat.
  local on_update, chunks = chat.on_update, 0
  chat.on_update = function(cid, params)
    if params.update and params.update.sessionUpdate == 'agent_message_chunk' then
      chunks = chunks + 1
    end
    return on_update(cid, params)
  end
  idle()
  vim.cmd('Reprise ask read the files')
  local buf = h.truthy(chat.buf(id()), 'chat buffer')
  h.eq(vim.bo[buf].filetype, 'markdown', 'filetype')
  h.truthy(vim.fn.bufwinid(buf) ~= -1, 'chat shown in a window')
  h.wait(T, function()
    return turn_ends() == 1
  end, 'the first turn to end')
  local text = chat_text()
  h.contains(text, '## You\n\nread the files', 'question')
  h.contains(text, 'I read five files.\nThey hold notes.', 'streamed answer')
  local done = 0
  for _ in text:gmatch('\n%- ✓ [^\n]*f%d%.txt') do
    done = done + 1
  end
  h.eq(done, 5, 'completed read_file lines')
  h.truthy(not text:find('⋯', 1, true), 'no tool call left in progress')
  h.contains(text, '\n_6 model calls_', 'turn end')
  chat.on_update = on_update
  h.truthy(chunks > 1, 'the answer came in ' .. chunks .. ' chunk(s)')
end)

h.test('statusline shows the percentage; RepriseContextUsage fires', function()
  local s = reprise.statusline()
  local pct = tonumber(s:match('^[^ ]+ (%d+)%% [%d.]+k?/4k$'))
  h.truthy(pct and pct > 0 and pct < 90, 'statusline ' .. vim.inspect(s))
  h.truthy(usage_events > 0, 'User RepriseContextUsage fired')
  h.eq(reprise.statusline({ escape = true }), (s:gsub('%%', '%%%%')), 'escaped')
end)

h.test('approval asked in a floating window, the statusline waiting', function()
  approval_key = 'a'
  local before = #approval_asked
  idle()
  vim.cmd('Reprise ask run echo hi')
  h.wait(T, function()
    return turn_ends() == 2
  end, 'the second turn to end')
  h.eq(#approval_asked, before + 1, 'approvals asked')
  local q = approval_asked[#approval_asked]
  h.truthy(q.float, 'a floating window')
  h.eq(q.titles, { 'Allow once', 'Always allow', 'Reject' }, 'actions')
  h.contains(q.message, 'echo hi', 'message')
  h.contains(q.text, '[a or 1] Allow once', 'the keys shown')
  h.truthy(q.statusline:find('^waiting for your approval'), 'statusline: ' .. q.statusline)
  h.truthy(not reprise.statusline():find('waiting', 1, true), 'statusline once answered')
  h.eq(approvals.pending(), nil, 'nothing pending')
  local text = chat_text()
  h.truthy(text:find('\n%- ✓ [^\n]*echo hi'), 'run_command completed:\n' .. text)
  h.truthy(not text:find('(refused)', 1, true), 'not refused')
  h.contains(text, 'echo printed hi.', 'answer after the command')
end)

h.test('compact lowers the percentage', function()
  local before = reprise.usage()
  h.truthy(before and before.percent > 0, 'usage before')
  vim.cmd('Reprise compact')
  h.truthy(reprise.statusline():find('⟳', 1, true), 'compaction mark while it runs: ' .. reprise.statusline())
  h.wait(T, function()
    local u = reprise.usage()
    return u.compaction.count == 1 and u.percent < before.percent and not reprise.statusline():find('⟳', 1, true)
  end, 'a lower percentage after compaction')
  h.wait(T, function()
    return last_note():find('checkpoint 1', 1, true) ~= nil
  end, 'the compaction result')
  h.contains(last_note(), 'Reprise: checkpoint 1 «Read the notes»', 'notification')
  h.wait(T, function()
    return chat_text():find('✂ Context compacted %(manual%): [^\n]* · Checkpoint 1: Read the notes') ~= nil
  end, 'the compaction mark in the chat')
end)

h.test('checkpoints listed; the summary opens in a scratch buffer', function()
  answers['reprise.checkpoint'] = function(items)
    return items[1]
  end
  local before = #asked
  vim.cmd('Reprise checkpoints')
  h.wait(T, function()
    return #asked > before
  end, 'the checkpoint picker')
  local q = asked[#asked]
  h.eq(#q.items, 1, 'checkpoints')
  h.contains(q.opts.format_item(q.items[1]), '1. Read the notes (manual', 'picker entry')
  local buf
  h.wait(T, function()
    buf = vim.fn.bufnr('reprise://checkpoint/1/')
    return buf > 0
  end, 'the checkpoint buffer')
  h.contains(h.text(buf), '# Checkpoint 1: Read the notes', 'markdown')
  h.eq(vim.bo[buf].filetype, 'markdown', 'filetype')
  h.eq(vim.bo[buf].buftype, 'nofile', 'scratch')
  vim.cmd('silent only')
  -- The server's own message for a bad argument.
  vim.cmd('Reprise checkpoint 7')
  h.wait(T, function()
    return last_note():find('no checkpoint 7', 1, true) ~= nil
  end, 'the error for checkpoint 7')
  h.eq(notes[#notes].level, vim.log.levels.ERROR, 'level')
end)

h.test('context in a floating window', function()
  vim.cmd('Reprise context')
  h.wait(T, function()
    return #float_wins() == 1
  end, 'the floating window')
  local win = float_wins()[1]
  local text = h.text(vim.api.nvim_win_get_buf(win))
  h.contains(text, 'Breakdown', 'breakdown')
  h.contains(text, '\n  Tools ', 'category, as VS Code names it')
  h.contains(text, 'Largest items', 'largest')
  h.truthy(text:match('Context · %d+%% · [%d.]+k?/4k tokens'), 'header:\n' .. text)
  -- Why calls were billed in full: at least the session's first.
  h.truthy(text:match('\n%d+ uncached calls?: 1 first call'), 'the uncached calls:\n' .. text)
  vim.cmd('normal q')
  h.eq(#float_wins(), 0, 'closed by q')
end)

h.test('ask without text prompts with vim.ui.input', function()
  answers.input = 'a prompted question'
  idle()
  vim.cmd('Reprise ask')
  h.eq(asked[#asked].input, true, 'vim.ui.input called')
  h.wait(T, function()
    return turn_ends() == 3
  end, 'the third turn to end')
  h.contains(chat_text(), '## You\n\na prompted question', 'question')
  h.contains(chat_text(), 'A prompted answer.', 'answer')
end)

h.test('new session, sessions listed', function()
  local first = client.state(id()).session
  vim.cmd('Reprise new')
  h.wait(T, function()
    local s = client.state(id()).session
    return s ~= nil and s ~= first
  end, 'the new session')
  answers['reprise.session'] = nil
  local before = #asked
  vim.cmd('Reprise sessions')
  h.wait(T, function()
    return #asked > before
  end, 'the session picker')
  h.eq(#asked[#asked].items, 2, 'sessions')
  local current = vim.tbl_filter(function(s)
    return s.current
  end, asked[#asked].items)
  h.eq(#current, 1, 'current sessions')
  h.eq(current[1].sessionId, client.state(id()).session, 'the current session is the new one')
  h.contains(asked[#asked].opts.format_item(current[1]), ' · current — ', 'the current session marked')
end)

h.test('cancel ends a running turn', function()
  idle()
  vim.cmd('Reprise ask a slow task')
  h.wait(T, function()
    return chat_text():find('- ⋯ Run sleep 30', 1, true) ~= nil
  end, 'the running command')
  vim.cmd('Reprise cancel')
  h.wait(T, function()
    return last_note() == 'Reprise: turn cancelled'
  end, 'the cancellation')
  h.wait(T, function()
    return chat_text():find('> ⚠ Stopped: cancelled\n_', 1, true) ~= nil
  end, 'turn_end cancelled in the chat')
  local text = chat_text()
  h.truthy(text:find('# Session [^\n]+\n\n## You\n\na slow task\n\n## Reprise\n\n%- ✗ Run sleep 30\n'),
    'the new session marked before the question, the command updated in place:\n' .. text)
  h.truthy(not text:find('⋯', 1, true), 'no tool call left in progress')
end)

-- The session whose files were undone and refused, resumed once the server has restarted.
local edited_session

h.test('changes listed, diffed, one file undone and the other refused', function()
  edited_session = client.state(id()).session
  write(ws .. '/src/a.txt', 'alpha\nbeta\ngamma\n')
  write(ws .. '/src/b.txt', 'one\ntwo\nthree\n')
  idle()
  vim.cmd('Reprise ask edit two files')
  h.wait(T, function()
    return chat_text():find('Edited two files.', 1, true) ~= nil
  end, 'the edits to end')
  idle() -- the server refuses to restore while the turn runs
  h.eq(vim.fn.readfile(ws .. '/src/a.txt'), { 'alpha', 'BETA', 'gamma' }, 'a.txt edited')
  -- :Reprise changes: one quickfix entry per file, with its state and counts.
  vim.fn.setqflist({}, 'r')
  vim.cmd('Reprise changes')
  h.wait(T, function()
    return #vim.fn.getqflist() == 2
  end, 'two quickfix entries')
  local qf = vim.fn.getqflist()
  h.eq(vim.fn.bufname(qf[1].bufnr), 'src/a.txt', 'first entry')
  h.eq(qf[1].text, 'modified +1 −1', 'first entry text')
  h.eq(qf[1].lnum, 2, 'first entry at the changed line')
  h.eq(vim.fn.bufname(qf[2].bufnr), 'src/b.txt', 'second entry')
  vim.cmd('cclose')
  vim.cmd('silent only')
  -- :Reprise diff src/a.txt: the restore point beside the file, in diff mode.
  vim.cmd('Reprise diff src/a.txt')
  local old
  h.wait(T, function()
    old = vim.fn.bufnr('reprise://restore/src/a.txt')
    return old > 0
  end, 'the restore point buffer')
  h.eq(vim.api.nvim_buf_get_lines(old, 0, -1, false), { 'alpha', 'beta', 'gamma' }, 'old text')
  h.truthy(vim.wo[vim.fn.bufwinid(old)].diff, 'restore point in diff mode')
  local cur = vim.fn.bufnr(ws .. '/src/a.txt')
  h.truthy(vim.wo[vim.fn.bufwinid(cur)].diff, 'file in diff mode')
  vim.cmd('diffoff!')
  vim.cmd('silent only')
  -- The user edits b.txt on disk; undoing a.txt works, undoing b.txt is refused with the reason.
  write(ws .. '/src/b.txt', 'one\nTWO\nthree\nmine\n')
  vim.cmd('Reprise changes')
  h.wait(T, function()
    -- b.txt has two changes now, each listed under the file.
    for _, item in ipairs(vim.fn.getqflist()) do
      if vim.fn.bufname(item.bufnr) == 'src/b.txt' and item.text:find('changed by you since', 1, true) then
        return true
      end
    end
    return false
  end, 'b.txt marked as changed by the user')
  vim.cmd('cclose')
  vim.cmd('edit ' .. vim.fn.fnameescape(ws .. '/src/a.txt'))
  vim.cmd('Reprise undo')
  h.wait(T, function()
    return vim.deep_equal(vim.api.nvim_buf_get_lines(cur, 0, -1, false), { 'alpha', 'beta', 'gamma' })
  end, function()
    return 'a.txt reloaded with its old text; last note: ' .. last_note()
  end)
  h.eq(vim.fn.readfile(ws .. '/src/a.txt'), { 'alpha', 'beta', 'gamma' }, 'a.txt on disk')
  local before = #notes
  vim.cmd('Reprise undo src/b.txt')
  h.wait(T, function()
    return #notes > before and last_note():find('b.txt', 1, true) ~= nil
  end, 'the refusal for b.txt')
  h.eq(notes[#notes].level, vim.log.levels.ERROR, 'level')
  h.contains(last_note(), 'Reprise: undo: reprise.restore: nothing restored: src/b.txt: ', 'the reason')
  h.eq(vim.fn.readfile(ws .. '/src/b.txt'), { 'one', 'TWO', 'three', 'mine' }, 'b.txt keeps the user edit')
  vim.cmd('silent only')
end)

h.test("the agent's edits reach open buffers at once; unsaved edits are kept with a warning", function()
  write(ws .. '/src/open.txt', 'one\ntwo\n')
  write(ws .. '/src/dirty.txt', 'before\n')
  idle()
  vim.cmd('silent only')
  vim.cmd('edit ' .. vim.fn.fnameescape(ws .. '/src/open.txt'))
  local obuf = vim.api.nvim_get_current_buf()
  -- Asked from the chat's prompt buffer: typed there, sent with <CR>.
  vim.cmd('Reprise')
  local prompt = h.truthy(chat.prompt(id()), 'the prompt buffer')
  h.eq(vim.api.nvim_get_current_buf(), prompt, 'the cursor in the prompt buffer')
  vim.api.nvim_buf_set_lines(prompt, 0, -1, false, { 'edit the open file' })
  vim.cmd('execute "normal \\<CR>"')
  h.wait(T, function()
    return vim.deep_equal(vim.api.nvim_buf_get_lines(obuf, 0, -1, false), { 'ONE', 'two' })
  end, 'the open buffer to show the edit')
  h.eq(vim.bo[obuf].modified, false, 'the reloaded buffer is not modified')
  h.wait(T, function()
    return chat_text():find('Edited the open file.', 1, true) ~= nil
  end, 'the answer')
  h.contains(chat_text(), '## You\n\nedit the open file', 'the question from the prompt buffer')
  h.truthy(chat_text():find('\n%- ✓ Edit [^\n]*open%.txt %+1 −1'), 'the edit with its counts:\n' .. chat_text())
  -- A command rewrites a file whose buffer has unsaved edits: they stay, and the user is told.
  vim.cmd('silent only')
  vim.cmd('edit ' .. vim.fn.fnameescape(ws .. '/src/dirty.txt'))
  local dbuf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(dbuf, 0, -1, false, { 'my unsaved line' })
  approval_key = 'a'
  idle()
  vim.cmd('Reprise ask overwrite the dirty file')
  h.wait(T, function()
    return chat_text():find('Overwrote it.', 1, true) ~= nil
  end, 'the command to run')
  h.eq(vim.fn.readfile(ws .. '/src/dirty.txt'), { 'agent' }, 'the file on disk')
  h.eq(vim.api.nvim_buf_get_lines(dbuf, 0, -1, false), { 'my unsaved line' }, 'the unsaved edits kept')
  h.truthy(vim.bo[dbuf].modified, 'still modified')
  local warned = vim.tbl_filter(function(n)
    return n.msg:find('dirty.txt changed on disk; your buffer has unsaved edits', 1, true) ~= nil
  end, notes)
  h.eq(#warned, 1, 'one warning')
  h.eq(warned[1].level, vim.log.levels.WARN, 'level')
  -- The agent's edit of that buffer is refused, and the chat says why, as the model was told.
  idle() -- the answer shows before the turn ends: a loaded machine leaves time between them
  vim.cmd('Reprise ask edit the dirty buffer')
  h.wait(T, function()
    return chat_text():find('You have unsaved changes in src/dirty.txt', 1, true) ~= nil
  end, function()
    return 'the answer:\n' .. chat_text()
  end)
  local refused = '\n%- ⊘ Edit [^\n]*dirty%.txt %(refused: src/dirty%.txt has unsaved changes in the editor%)\n'
  h.truthy(chat_text():find(refused), 'the refusal with its reason:\n' .. chat_text())
  h.eq(vim.fn.readfile(ws .. '/src/dirty.txt'), { 'agent' }, 'the file on disk untouched')
  vim.cmd('silent only')
  vim.api.nvim_buf_set_option(dbuf, 'modified', false)
end)

h.test('a running command shows its time and its last lines, replaced by its result', function()
  approval_key = 'a'
  vim.cmd('silent only')
  idle()
  vim.cmd('Reprise ask stream the ticks')
  -- The command prints tick-1, then waits for the file "go", created once the chat showed it.
  h.wait(T, function()
    return chat_text():find('\n%- ⋯ Run echo tick%-1[^\n]* · running %d+ s\n  │ tick%-1\n?') ~= nil
  end, 'the running command with its output so far')
  write(ws .. '/go', '')
  h.wait(T, function()
    return chat_text():find('The ticks are done.', 1, true) ~= nil
  end, 'the answer')
  local text = chat_text()
  h.truthy(text:find('\n%- ✓ Run echo tick%-1[^\n]*\n\nThe ticks are done%.'),
    'the command done, on one line:\n' .. text)
  h.truthy(not text:find('│', 1, true) and not text:find('running', 1, true), 'the output so far is gone:\n' .. text)
  os.remove(ws .. '/go')
end)

h.test('q closes the chat', function()
  local buf = chat.buf(id())
  if vim.env.REPRISE_TEST_VERBOSE then
    io.stdout:write(h.text(buf) .. '\n')
  end
  vim.cmd('Reprise')
  local win = vim.fn.bufwinid(buf)
  h.truthy(win ~= -1, 'chat shown by :Reprise')
  vim.api.nvim_set_current_win(win)
  vim.cmd('normal q')
  h.eq(vim.fn.bufwinid(buf), -1, 'chat window closed')
end)

h.test(':checkhealth reprise', function()
  vim.cmd('silent checkhealth reprise')
  local text = h.text(vim.api.nvim_get_current_buf())
  h.contains(text, 'binary: ' .. bin .. '/reprise', 'binary')
  h.truthy(text:find('version: '), 'version:\n' .. text)
  h.contains(text, 'GEMINI_API_KEY is set', 'key')
  h.contains(text, 'server starts: reprise', 'server starts')
  h.truthy(not text:find('ERROR'), 'no error:\n' .. text)
  vim.cmd('tabclose')
end)

h.test('setup() again pushes the settings', function()
  reprise.setup({
    cmd = { bin .. '/reprise', 'serve', '--stdio' },
    cmd_env = { GEMINI_API_KEY = 'test-key', GOOGLE_GEMINI_BASE_URL = url },
    settings = { contextBudget = 8000, compactAt = 0.9, blockAt = 0.95, allow = { 'sleep' } },
  })
  h.wait(T, function()
    return reprise.statusline():find('/8k$') ~= nil
  end, 'the new budget in the statusline')
end)

-- The reference MCP server, as scripts/setup installs it.
local everything = (vim.env.REPRISE_NPM_CACHE or (vim.env.HOME .. '/.cache/reprise-npm'))
  .. '/mcp-everything/node_modules/@modelcontextprotocol/server-everything/dist/index.js'

h.test('an MCP server from the settings: its tool asked for and answered, then :Reprise mcp', function()
  h.truthy(vim.fn.filereadable(everything) == 1, 'the reference MCP server is missing (' .. everything
    .. '): run scripts/setup')
  local old = id()
  reprise.setup({
    cmd = { bin .. '/reprise', 'serve', '--stdio' },
    cmd_env = { GEMINI_API_KEY = 'test-key', GOOGLE_GEMINI_BASE_URL = url },
    settings = { contextBudget = 12000, compactAt = 0.9, blockAt = 0.95, allow = { 'sleep' },
      mcpServers = { everything = { type = 'stdio', command = 'node', args = { everything, 'stdio' } } } },
  })
  -- mcpServers is read when the server starts (initializationOptions only): the server stops, and
  -- the next command starts one with the servers.
  h.contains(last_note(), 'the server stops to apply mcpServers', 'the notice')
  h.wait(T, function()
    return vim.lsp.get_client_by_id(old) == nil
  end, 'the server to stop')
  vim.cmd('edit ' .. vim.fn.fnameescape(ws .. '/notes/f0.txt'))
  vim.cmd('Reprise new')
  h.wait(T, function()
    local s = id() and client.state(id())
    return s and s.session ~= nil and reprise.statusline():find('/12k$') ~= nil
  end, 'the new server, its session and settings')
  local on_update, outputs = chat.on_update, {}
  chat.on_update = function(cid, params)
    local u = params.update or {}
    if u.sessionUpdate == 'tool_call_update' and u.rawOutput then
      table.insert(outputs, u.rawOutput.output)
    end
    return on_update(cid, params)
  end
  approval_key = 'a'
  local before = #approval_asked
  idle()
  vim.cmd('Reprise ask call the echo tool')
  local ok, err = pcall(h.wait, 30000, function()
    return chat_text():find('The echo tool answered: Echo: hi', 1, true) ~= nil
  end, 'the answer after the MCP tool call')
  chat.on_update = on_update
  assert(ok, tostring(err) .. '\n' .. chat_text())
  h.eq(#approval_asked, before + 1, 'approvals asked')
  local q = approval_asked[#approval_asked]
  h.eq(q.titles, { 'Allow once', 'Always allow', 'Reject' }, 'actions')
  local intro = 'Reprise wants to use a tool of an MCP server ('
  h.eq(q.message:sub(1, #intro), intro, 'message:\n' .. q.message)
  h.contains(q.message, 'everything__echo', 'the tool named')
  h.eq(outputs, { 'Echo: hi' }, "the tool's result")
  local text = chat_text()
  h.truthy(text:find('## You\n\ncall the echo tool\n\n## Reprise\n\n%- ✓ [^\n]+\n'), 'the tool call done:\n' .. text)

  -- :Reprise mcp: the server running with its tools.
  vim.cmd('silent only')
  vim.cmd('Reprise mcp')
  h.wait(T, function()
    return #float_wins() == 1
  end, 'the MCP window')
  local win = float_wins()[1]
  local view = h.text(vim.api.nvim_win_get_buf(win))
  h.truthy(view:find('\neverything  running · stdio · '), 'everything running:\n' .. view)
  h.contains(view, '14 declared, 0 via catalogue', 'its tools')
  h.truthy(view:find('\n  everything__echo +%d+\n'), 'the echo tool listed:\n' .. view)
  vim.cmd('normal q')
  h.eq(#float_wins(), 0, 'closed by q')

  -- :Reprise context: its share under MCP tools.
  vim.cmd('Reprise context')
  h.wait(T, function()
    return #float_wins() == 1
  end, 'the context window')
  view = h.text(vim.api.nvim_win_get_buf(float_wins()[1]))
  h.truthy(view:find('\n  MCP tools +[%d.]+k? [^\n]*\n    everything +[%d.]+k?  14 tools\n'),
    'the server under MCP tools:\n' .. view)
  vim.cmd('normal q')
end)

h.test('a session resumed after a restart shows its edits with their counts and its changes', function()
  h.truthy(edited_session, 'the session of the changes test')
  vim.cmd('Reprise resume ' .. edited_session)
  h.wait(T, function()
    return chat_text():find('(resumed)', 1, true) ~= nil and chat_text():find('Edited the open file.', 1, true) ~= nil
  end, 'the resumed chat')
  local text = chat_text()
  local resumed = text:sub(text:find('# Session ' .. edited_session .. ' (resumed)', 1, true) or 1)
  h.truthy(resumed:find('\n%- ✓ Edit [^\n]*a%.txt %+1 −1\n%- ✓ Edit [^\n]*b%.txt %+1 −1\n'),
    'the edits with their counts:\n' .. resumed)
  h.truthy(resumed:find('\n%- ✓ Edit [^\n]*open%.txt %+1 −1\n'), 'the edit of the open file:\n' .. resumed)
  h.contains(resumed, 'Changes · 2 files\n- `src/a.txt` +1 −1 · undone\n- `src/b.txt` +1 −1 · not undone: '
    .. 'changed since the agent last wrote it', 'the changes of the turn, one undone and one refused')
  h.contains(resumed, 'Changes · 1 file\n- `src/open.txt` +1 −1\n', 'the next turn\'s change, left as it is')
  h.contains(resumed, '> ⚠ Stopped: cancelled', 'the cancelled turn')
end)

-- answer_models answers the model pickers in turn with the ids of want; the lists they offered
-- go into the table returned.
local function answer_models(want)
  local picks = {}
  answers['reprise.models'] = function(items)
    table.insert(picks, items)
    for _, m in ipairs(items) do
      if m.id == want[#picks] then
        return m
      end
    end
  end
  return picks
end

-- formatted is a list the last picker offered, as the user sees it: a line per item.
local function formatted(items)
  local out = {}
  for _, m in ipairs(items) do
    table.insert(out, asked[#asked].opts.format_item(m))
  end
  return table.concat(out, '\n')
end

h.test(':Reprise models picks the model of new sessions; a routed call is named once', function()
  local picks = answer_models({ 'gemini-4-argon', 'gemini-2.5-pro' })
  vim.cmd('Reprise models')
  h.wait(T, function()
    return #picks == 1
  end, 'the model picker')
  local picker = asked[#asked]
  local shown = formatted(picks[1])
  h.contains(shown, '● gemini-3.8-flash', 'the current model marked')
  h.contains(shown, 'ga · 1M context · $0.75 · $0.075 · $3.75 per 1M', 'its prices')
  h.contains(shown, '(default)', 'the default named')
  h.contains(shown, 'gemini-9-experimental', 'a model the catalogue does not know')
  h.contains(shown, 'not in the catalogue · 1M context · unknown per 1M', 'its price unknown, never $0')
  h.truthy(not shown:find('gemini-2.5-pro', 1, true), 'retired models only with all:\n' .. shown)
  h.truthy(not shown:find('embedding', 1, true), 'only models that generate content')
  h.contains(picker.opts.prompt, 'Model for new sessions (now gemini-3.8-flash', 'the prompt')
  h.eq(require('reprise.config').options.settings.model, 'gemini-4-argon', 'the setting')
  h.contains(last_note(), 'new sessions use gemini-4-argon', 'the notice')

  -- A retired model, offered with all, warns when picked; the API answers with another model,
  -- and the first call says so once.
  vim.cmd('Reprise models all')
  h.wait(T, function()
    return #picks == 2
  end, 'the second picker')
  h.wait(T, function()
    return last_note():find('new sessions use gemini-2.5-pro', 1, true) ~= nil
  end, 'the retired model chosen')
  local warned = vim.tbl_filter(function(n)
    return n.msg:find('gemini-2.5-pro is retired: use ', 1, true) ~= nil
  end, notes)
  h.eq(#warned, 1, 'the retired pick warned')
  vim.cmd('Reprise new')
  local before = turn_ends()
  idle()
  vim.cmd('Reprise ask which model answers')
  h.wait(T, function()
    return chat_text():find('The routed model answered.', 1, true) ~= nil and turn_ends() > before
  end, 'the routed answer')
  local function routed()
    return vim.tbl_filter(function(n)
      return n.msg:find('gemini-2.5-pro is retired: the API answered with gemini-3.8-flash', 1, true) ~= nil
    end, notes)
  end
  h.wait(T, function()
    return #routed() > 0
  end, 'the routing warning')
  h.eq(#routed(), 1, 'one routing warning')

  vim.cmd('Reprise context')
  h.wait(T, function()
    return #float_wins() == 1
  end, 'the context window')
  local view = h.text(vim.api.nvim_win_get_buf(float_wins()[1]))
  h.contains(view, 'gemini-2.5-pro (answered by gemini-3.8-flash)', 'the served model')
  h.truthy(view:find('\nSession: [^\n]* · %$0%.%d+ · 1 turn · 1 model call'), 'the cost at the served model:\n' .. view)
  vim.cmd('normal q')
end)

h.test('pins: a file and a text pinned, listed, shown in the chat; a message pinned; one unpinned', function()
  vim.cmd('silent only')
  vim.cmd('edit ' .. vim.fn.fnameescape(ws .. '/notes/f2.txt'))
  local old = id() and client.state(id()).session
  vim.cmd('Reprise new')
  h.wait(T, function()
    local s = id() and client.state(id())
    return s and s.session ~= nil and s.session ~= old
  end, 'the new session')
  local session = client.state(id()).session
  vim.cmd('Reprise pin')
  h.wait(T, function()
    return chat_text():find('> 📌 Pinned: f2%.txt %([%d.]+k? tokens%)$') ~= nil
      and last_note():find('pinned p1 f2.txt', 1, true) ~= nil
  end, 'the file pinned, in the chat, and the notice')
  vim.cmd('Reprise pin text use tabs, never spaces')
  h.wait(T, function()
    return chat_text():find('> 📌 2 pinned, [%d.]+k? tokens: f2%.txt %([%d.]+k?%) · “use tabs, never spaces” %(%d+%)$')
      ~= nil
  end, 'the text pinned, in the chat:\n' .. chat_text())
  vim.cmd('Reprise pins')
  h.wait(T, function()
    return last_note():find('p2  message', 1, true) ~= nil
  end, 'the list')
  local list = last_note()
  h.truthy(list:find('\n  p1  file    [^\n]*notes/f2%.txt  [%d.]+k? tokens'), 'the file in the list:\n' .. list)
  h.contains(list, '“use tabs, never spaces”', 'the text in the list')
  local ids = vim.fn.getcompletion('Reprise unpin ', 'cmdline')
  h.truthy(vim.tbl_contains(ids, 'p1') and vim.tbl_contains(ids, 'p2'), 'pin ids complete: ' .. vim.inspect(ids))
  -- A file outside the workspace is refused with the server's reason.
  local errors = #vim.tbl_filter(function(n)
    return n.level == vim.log.levels.ERROR
  end, notes)
  write(tmp .. '/outside.txt', 'outside\n')
  vim.cmd('Reprise pin ' .. vim.fn.fnameescape(tmp .. '/outside.txt'))
  h.wait(T, function()
    return #vim.tbl_filter(function(n)
      return n.level == vim.log.levels.ERROR
    end, notes) > errors
  end, 'the refusal')
  h.truthy(last_note():find('^Reprise: pin: '), 'the refusal names the command: ' .. last_note())
  -- :Reprise context counts them.
  vim.cmd('Reprise context')
  h.wait(T, function()
    return #float_wins() == 1
  end, 'the context window')
  local view = h.text(vim.api.nvim_win_get_buf(float_wins()[1]))
  h.contains(view, 'Pinned', 'the context view names the pins')
  vim.cmd('normal q')
  -- A message of the chat, pinned from the chat buffer with the cursor on it.
  idle()
  vim.cmd('Reprise ask what should we remember?')
  h.wait(T, function()
    return chat_text():find('Keep the notes under a page.', 1, true) ~= nil
  end, 'the answer')
  idle() -- the turn's end before the resume below, which would come first under load
  local win = chat.open(id())
  vim.api.nvim_set_current_win(win)
  local lines = vim.api.nvim_buf_get_lines(chat.buf(id()), 0, -1, false)
  for i = #lines, 1, -1 do
    if lines[i] == 'Keep the notes under a page.' then
      vim.api.nvim_win_set_cursor(win, { i, 0 })
      break
    end
  end
  vim.cmd('Reprise pin message')
  h.wait(T, function()
    return chat_text():find('· “Keep the notes under a page%.” %(%d+%)$') ~= nil
  end, 'the message pinned:\n' .. chat_text())
  vim.cmd('Reprise unpin p1')
  h.wait(T, function()
    return chat_text():find('> 📌 2 pinned, [^\n]* tokens: “use tabs, never spaces” %(%d+%) · “Keep the notes') ~= nil
  end, 'the file unpinned:\n' .. chat_text())
  -- Resumed, the chat lists the pins again from the session's history.
  vim.cmd('Reprise resume ' .. session)
  h.wait(T, function()
    local text = chat_text()
    local at = text:find('# Session ' .. session .. ' (resumed)', 1, true)
    return at and text:sub(at):find('> 📌 2 pinned, [^\n]* tokens: “use tabs, never spaces”') ~= nil
  end, 'the pins of the resumed session:\n' .. chat_text())
  vim.cmd('silent only')
end)

-- shoot saves a picture of buffer buf as the current colour scheme shows it: :TOhtml, then
-- headless Chromium (the VS Code e2e's). The pictures are for a person to look at; without
-- Chromium none is taken.
local shots = vim.env.REPRISE_SCREENSHOTS or (here .. '/screenshots')
local function shoot(buf, name)
  local chromium = vim.fn.exepath('chromium')
  if chromium == '' then
    io.stdout:write('     no chromium: no picture of ' .. name .. '\n')
    return
  end
  vim.fn.mkdir(shots, 'p')
  local html = tmp .. '/' .. name .. '.html'
  local win = vim.api.nvim_get_current_win()
  vim.api.nvim_win_set_buf(win, buf)
  vim.cmd('TOhtml')
  vim.cmd('silent write! ' .. vim.fn.fnameescape(html))
  vim.cmd('bwipeout!')
  vim.api.nvim_set_current_win(win)
  local png = shots .. '/' .. name .. '.png'
  vim.fn.system({ chromium, '--headless', '--no-sandbox', '--disable-gpu', '--hide-scrollbars', '--window-size=900,560',
    '--screenshot=' .. png, 'file://' .. html })
  h.truthy(vim.fn.getfsize(png) > 0, 'the picture ' .. png)
end

-- The pictures' colour schemes: light, dark and high contrast, as {name, background, scheme}.
local themes = { { 'light', 'light', 'default' }, { 'dark', 'dark', 'default' }, { 'hc', 'dark', 'industry' } }

-- apply_theme puts one of them on. `colorscheme default` sets 'background' back to dark: the
-- default light scheme is the default highlights cleared with 'background' light. The default
-- scheme leaves the background to the terminal: one as a terminal of that kind has.
local function apply_theme(theme)
  vim.o.background = theme[2]
  if theme[3] == 'default' then
    vim.g.colors_name = nil
    vim.cmd('highlight clear')
    if vim.g.syntax_on then
      vim.cmd('syntax reset')
    end
    vim.cmd(theme[2] == 'light' and 'highlight Normal guifg=#1f1f1f guibg=#ffffff'
      or 'highlight Normal guifg=#d4d4d4 guibg=#1e1e1e')
    vim.cmd('doautocmd <nomodeline> ColorScheme default')
  else
    vim.cmd('colorscheme ' .. theme[3])
  end
end

-- shoot_last_turn saves a picture of the chat's last turn (from its last "## You") in each colour
-- scheme, light, dark and high contrast, as name-light, name-dark and name-hc.
local function shoot_last_turn(name)
  vim.cmd('syntax enable')
  vim.o.termguicolors = true
  for _, theme in ipairs(themes) do
    apply_theme(theme)
    local buf = chat.buf(id())
    local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
    local from = #lines
    for i = #lines, 1, -1 do
      if lines[i] == '## You' then
        from = i
        break
      end
    end
    local view = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_lines(view, 0, -1, false, vim.list_slice(lines, from, #lines))
    vim.bo[view].filetype = vim.bo[buf].filetype
    shoot(view, name .. '-' .. theme[1])
    vim.api.nvim_buf_delete(view, { force = true })
  end
  vim.o.background = 'dark'
  vim.cmd('colorscheme default')
  vim.o.termguicolors = false
end

-- new_session starts a new session from the chat and waits until the client holds it; it returns
-- the new session's id and the one before.
local function new_session()
  local old = client.state(id()).session
  vim.cmd('Reprise new')
  h.wait(T, function()
    local s = client.state(id())
    return s.session ~= nil and s.session ~= old
  end, 'the new session')
  return client.state(id()).session, old
end

h.test("the agent's plan: in the chat where written, updated, in each colour scheme, after a resume", function()
  vim.cmd('silent only')
  local _, old = new_session()
  idle()
  vim.cmd('Reprise ask plan the chores for the week')
  h.wait(T, function()
    return chat_text():find('The plan is written', 1, true) ~= nil
  end, 'the answer:\n' .. chat_text())
  local session = client.state(id()).session
  h.truthy(session ~= nil and session ~= old, 'a new session')
  local text = chat_text()
  h.contains(text, '> ☰ Plan · 0 of 3 done\n>   ▶ **Read the notes**\n>   ○ List the chores in chores.md',
    'the first plan')
  h.contains(text, '> ☰ Plan · 1 of 4 done\n>   ✓ Read the notes\n>   ▶ **List the chores in chores.md**\n'
    .. '>   ⊘ ~~Ask which day suits the bike~~\n>   ○ Check the garden tools', 'the plan updated')
  io.stdout:write('     ' .. chat.plan_progress(chat.get(id()).plan) .. '\n')
  shoot_last_turn('plan')
  -- :Reprise context lists the plan and the notes; :Reprise forget deletes one, completed by key.
  vim.cmd('Reprise context')
  h.wait(T, function()
    return #float_wins() == 1
  end, 'the context window')
  local view = h.text(vim.api.nvim_win_get_buf(float_wins()[1]))
  h.contains(view, 'Plan · 1 of 4 done\n  completed    Read the notes\n  in progress  List the chores in chores.md',
    'the plan in the context view')
  h.contains(view, 'Notes · 2, restated after each compaction (:Reprise forget {key})\n'
    .. '  milk                 Remember the milk: oat, 2 litres\n  bike day             Saturday morning', 'the notes')
  vim.cmd('normal q')
  h.eq(vim.fn.getcompletion('Reprise forget b', 'cmdline'), { 'bike day' }, 'note keys complete')
  vim.cmd('Reprise forget bike day')
  h.wait(T, function()
    return last_note():find('note "bike day" deleted; the agent is told at its next call (1 left)', 1, true) ~= nil
  end, 'the note deleted: ' .. last_note())
  vim.cmd('Reprise forget nope')
  h.wait(T, function()
    return last_note():find('there is no note "nope"', 1, true) ~= nil
  end, 'an unknown note refused: ' .. last_note())
  -- Resumed, the chat shows the last plan again from the session's history.
  vim.cmd('Reprise resume ' .. session)
  h.wait(T, function()
    local t = chat_text()
    local at = t:find('# Session ' .. session .. ' (resumed)', 1, true)
    return at and t:sub(at):find('> ☰ Plan · 1 of 4 done', 1, true) ~= nil
  end, 'the plan of the resumed session:\n' .. chat_text())
  -- Fork from the second question, with the cursor on it: the chat shows the new session without it.
  idle()
  vim.cmd('Reprise ask what is left to plan?')
  h.wait(T, function()
    return chat_text():find('Only the bike is left.', 1, true) ~= nil
  end, 'the answer')
  idle()
  local win = chat.open(id())
  vim.api.nvim_set_current_win(win)
  local lines = vim.api.nvim_buf_get_lines(chat.buf(id()), 0, -1, false)
  for i = #lines, 1, -1 do
    if lines[i] == 'what is left to plan?' then
      vim.api.nvim_win_set_cursor(win, { i, 0 })
      break
    end
  end
  vim.cmd('Reprise fork here')
  local header = ' (forked from turn 2 of ' .. session .. ')'
  h.wait(T, function()
    local t = chat_text()
    local at = t:find(header, 1, true)
    return at and t:sub(at):find('> ☰ Plan · 1 of 4 done', 1, true) ~= nil
      and last_note():find('forked from turn 2; the original session is kept, the files on disk were not changed', 1,
        true) ~= nil
  end, 'the fork in the chat:\n' .. chat_text() .. '\n' .. last_note())
  local forked = chat_text():sub(chat_text():find(header, 1, true))
  h.truthy(not forked:find('what is left to plan', 1, true),
    'the fork holds the question it was forked before:\n' .. forked)
  local fork_id = client.state(id()).session
  h.truthy(fork_id ~= session, 'the fork is the current session')
  idle()
  vim.cmd('Reprise ask plan it another way')
  h.wait(T, function()
    return chat_text():find('Another plan, in the fork.', 1, true) ~= nil
  end, 'the fork answers')
  -- Exported, as HTML where asked and as Markdown by default.
  local page = tmp .. '/fork.html'
  vim.cmd('Reprise export ' .. page)
  h.wait(T, function()
    return last_note():find('session exported to ' .. page, 1, true) ~= nil
  end, 'the export')
  local html = table.concat(vim.fn.readfile(page), '\n')
  h.contains(html, '<h2>Turn 2</h2>', 'the page has the fork\'s second turn')
  h.contains(html, 'forked from session ' .. session .. ' at turn 2', 'the page says where it comes from')
  h.truthy(not html:find('<script', 1, true) and not html:find('src=', 1, true), 'the page loads nothing')
  vim.cmd('Reprise export md')
  local md = vim.fn.getcwd() .. '/reprise-' .. fork_id .. '.md'
  h.wait(T, function()
    return last_note():find('session exported to ' .. md, 1, true) ~= nil
  end, 'the Markdown export: ' .. last_note())
  h.contains(table.concat(vim.fn.readfile(md), '\n'), '> plan it another way', 'the Markdown has the question')
  os.remove(md)
  vim.cmd('Reprise fork turn 9')
  h.wait(T, function()
    return last_note():find('no turn 9', 1, true) ~= nil
  end, 'a bad point refused: ' .. last_note())
  vim.cmd('silent only')
end)

h.test('subagents: a line under each task call, live, one stopped from :Reprise subagents, the other opened', function()
  vim.cmd('silent only')
  vim.cmd('Reprise new')
  idle()
  vim.cmd('Reprise ask survey the notes with helpers')
  local done = '- ✓ Subagent: survey the notes\n  ↳ ✓ subagent gemini-3.5-flash-lite · 3 calls · '
  h.wait(30000, function()
    local t = chat_text()
    return t:find(done, 1, true) ~= nil and t:find('↳ ⋯ subagent gemini-3.5-flash-lite · 0 calls', 1, true) ~= nil
  end, 'the two subagents:\n' .. chat_text())
  local text = chat_text()
  h.contains(text, '- ⋯ Subagent: wait for the weather\n  ↳ ⋯ subagent', 'the running one under its call')
  io.stdout:write('     ' .. text:match('(↳ ✓ subagent[^\n]*)') .. '\n')
  shoot_last_turn('subagents')
  -- :Reprise subagents lists both; the running one picked is stopped, and the turn goes on.
  answers['reprise.subagent'] = function(items)
    for _, sa in ipairs(items) do
      if sa.status == 'running' then
        return sa
      end
    end
  end
  vim.cmd('Reprise subagents')
  local listed = asked[#asked]
  h.eq(#listed.items, 2, 'the subagents listed')
  h.contains(require('reprise.actions').format_subagent(listed.items[1]),
    '✓ survey the notes · gemini-3.5-flash-lite · 3 calls', 'the first one as the picker shows it')
  h.wait(30000, function()
    return chat_text():find('One helper surveyed the notes; you stopped the other.', 1, true) ~= nil
  end, 'the turn goes on:\n' .. chat_text())
  h.contains(chat_text(), '- ⊘ Subagent: wait for the weather (refused: the user stopped this subagent while it ran)\n'
    .. '  ↳ ⊘ subagent', 'the stopped one')
  -- The ended one picked opens its transcript.
  answers['reprise.subagent'] = function(items)
    return items[1]
  end
  vim.cmd('Reprise subagents')
  h.wait(T, function()
    return h.text(0):find('HELPER-SURVEY', 1, true) ~= nil
  end, 'the transcript: ' .. h.text(0))
  h.contains(h.text(0), 'HELPER-REPORT', 'its report in the transcript')
  vim.cmd('silent only')
end)

-- screen_groups is the highlight group of each cell of the screen, worked out from the windows:
-- the headless grid has the characters (screenstring), but its attributes are not reliable
-- without a UI attached. It knows what the review's pictures hold: diff lines and fillers, the
-- review's marks, winbars, statuslines and separators.
local function screen_groups()
  local grid = {}
  for r = 1, vim.o.lines do
    grid[r] = {}
  end
  local function paint(r, c1, c2, group)
    for c = c1, c2 do
      if grid[r] then
        grid[r][c] = group
      end
    end
  end
  local current = vim.api.nvim_get_current_win()
  local ns = vim.api.nvim_create_namespace('reprise_review')
  local floats = {}
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    local config = vim.api.nvim_win_get_config(w)
    if config.relative ~= '' then
      config.buf = vim.api.nvim_win_get_buf(w)
      table.insert(floats, config)
      goto continue
    end
    local info = vim.fn.getwininfo(w)[1]
    local top, left, width, height, off = info.winrow, info.wincol, info.width, info.height, info.textoff or 0
    if (info.winbar or 0) > 0 then
      paint(top, left, left + width - 1, w == current and 'WinBar' or 'WinBarNC')
      top = top + 1
    end
    paint(top + height, left, left + width - 1, w == current and 'StatusLine' or 'StatusLineNC')
    if left + width <= vim.o.columns then
      for r = info.winrow, top + height do
        paint(r, left + width, left + width, 'VertSplit')
      end
    end
    vim.api.nvim_win_call(w, function()
      local virt = {}
      for _, m in ipairs(vim.api.nvim_buf_get_extmarks(0, ns, 0, -1, { details = true })) do
        virt[m[2] + 1] = m[4].virt_text[1]
      end
      local row, lnum, last = top, vim.fn.line('w0'), vim.fn.line('$')
      while row < top + height do
        for _ = 1, lnum <= last + 1 and vim.fn.diff_filler(lnum) or 0 do
          paint(row, left, left + off - 1, 'FoldColumn')
          paint(row, left + off, left + width - 1, 'DiffDelete')
          row = row + 1
        end
        if row >= top + height then
          break
        end
        if lnum > last then
          paint(row, left, left, 'EndOfBuffer')
        else
          paint(row, left, left + off - 1, 'FoldColumn')
          local text = vim.fn.getline(lnum)
          for c = 1, width - off do
            local hl = vim.fn.diff_hlID(lnum, math.min(c, #text + 1))
            paint(row, left + off + c - 1, left + off + c - 1, hl > 0 and vim.fn.synIDattr(hl, 'name') or 'Normal')
          end
          local v = virt[lnum]
          if v then
            local at = left + off + vim.fn.strdisplaywidth(text) + 1
            paint(row, at, at + vim.fn.strdisplaywidth(v[1]) - 1, v[2])
          end
        end
        row, lnum = row + 1, lnum + 1
      end
    end)
    ::continue::
  end
  -- Floats over the rest, as the plugin styles them: a border, and the text on RepriseFloat. A
  -- headless Neovim leaves them out of the screen's text, so their cells' text is set here too.
  local text = {}
  local function put(r, c, ch)
    text[r] = text[r] or {}
    text[r][c] = ch
  end
  for _, f in ipairs(floats) do
    local b = f.border and f.border ~= 'none' and 1 or 0
    -- 0.7 gives row and col as {[false] = n}, later versions as numbers.
    local function num(v)
      return type(v) == 'table' and v[false] or v
    end
    local top, left = math.floor(num(f.row)) + 1, math.floor(num(f.col)) + 1
    for r = top, top + f.height + 2 * b - 1 do
      local edge = b == 1 and (r == top or r == top + f.height + 1)
      paint(r, left, left + f.width + 2 * b - 1, edge and 'RepriseFloatBorder' or 'RepriseFloat')
      if b == 1 and not edge then
        paint(r, left, left, 'RepriseFloatBorder')
        paint(r, left + f.width + 1, left + f.width + 1, 'RepriseFloatBorder')
      end
    end
    -- The plugin's floats wrap: a long line goes on over the next rows.
    local lines = {}
    for _, l in ipairs(vim.api.nvim_buf_get_lines(f.buf, 0, -1, false)) do
      local n = vim.fn.strchars(l)
      for k = 0, math.max(n - 1, 0), f.width do
        table.insert(lines, vim.fn.strcharpart(l, k, f.width))
      end
    end
    for i = 0, f.height + 2 * b - 1 do
      local r = top + i
      local chars = {}
      if b == 1 and (i == 0 or i == f.height + 1) then
        chars[1] = i == 0 and '╭' or '╰'
        for _ = 1, f.width do
          table.insert(chars, '─')
        end
        table.insert(chars, i == 0 and '╮' or '╯')
      else
        local line = lines[i + 1 - b] or ''
        if b == 1 then
          table.insert(chars, '│')
        end
        for k = 0, f.width - 1 do
          table.insert(chars, vim.fn.strcharpart(line, k, 1) ~= '' and vim.fn.strcharpart(line, k, 1) or ' ')
        end
        if b == 1 then
          table.insert(chars, '│')
        end
      end
      for k, ch in ipairs(chars) do
        put(r, left + k - 1, ch)
      end
    end
  end
  return grid, text
end

-- shoot_screen saves a picture of the whole screen (windows, winbars, marks, diff colours) in
-- each colour scheme, as name-light, name-dark and name-hc.
local function shoot_screen(name)
  if vim.fn.exepath('chromium') == '' then
    io.stdout:write('     no chromium: no picture of ' .. name .. '\n')
    return
  end
  vim.cmd('syntax enable')
  vim.o.termguicolors = true
  local function hex(n)
    return n and string.format('#%06x', n) or nil
  end
  local function esc(t)
    return (t:gsub('&', '&amp;'):gsub('<', '&lt;'):gsub('>', '&gt;'))
  end
  for _, theme in ipairs(themes) do
    apply_theme(theme)
    vim.cmd('redraw!')
    local normal = vim.api.nvim_get_hl_by_name('Normal', true)
    local fg0, bg0 = hex(normal.foreground) or '#000000', hex(normal.background) or '#ffffff'
    local styles = {}
    local function style(group)
      if not styles[group] then
        local ok, a = pcall(vim.api.nvim_get_hl_by_name, group or 'Normal', true)
        a = ok and a or {}
        local fg, bg = hex(a.foreground) or fg0, hex(a.background) or bg0
        if a.reverse then
          fg, bg = bg, fg
        end
        styles[group] = string.format('color:%s;background:%s;%s', fg, bg, a.bold and 'font-weight:bold;' or '')
      end
      return styles[group]
    end
    local grid, text = screen_groups()
    local rows = {}
    for r = 1, vim.o.lines do
      local row, cur, run = {}, nil, ''
      local function flush()
        if run ~= '' then
          table.insert(row, string.format('<span style="%s">%s</span>', cur, esc(run)))
        end
        run = ''
      end
      for c = 1, vim.o.columns do
        local st = style(grid[r][c] or 'Normal')
        if st ~= cur then
          flush()
          cur = st
        end
        run = run .. (text[r] and text[r][c] or vim.fn.screenstring(r, c))
      end
      flush()
      table.insert(rows, table.concat(row))
    end
    local html = tmp .. '/' .. name .. '-' .. theme[1] .. '.html'
    rows[1] = '<!doctype html><meta charset="utf-8"><body style="margin:0;background:' .. bg0 .. '">'
      .. '<pre style="margin:0;font:14px/17px monospace">' .. rows[1]
    rows[#rows] = rows[#rows] .. '</pre>'
    vim.fn.writefile(rows, html)
    vim.fn.mkdir(shots, 'p')
    local png = shots .. '/' .. name .. '-' .. theme[1] .. '.png'
    vim.fn.system({ vim.fn.exepath('chromium'), '--headless', '--no-sandbox', '--disable-gpu', '--hide-scrollbars',
      string.format('--window-size=%d,%d', vim.o.columns * 9, vim.o.lines * 17), '--screenshot=' .. png,
      'file://' .. html })
    h.truthy(vim.fn.getfsize(png) > 0, 'the picture ' .. png)
  end
  vim.o.background = 'dark'
  vim.cmd('colorscheme default')
  vim.o.termguicolors = false
end

h.test("the agent's changes reviewed one by one in the diff split: one undone, one kept, one refused", function()
  vim.cmd('silent only')
  new_session()
  local session = client.state(id()).session
  local path = ws .. '/src/recipe.txt'
  local before = { '# Pancakes', 'flour 200 g', 'milk 300 ml', 'eggs 2', 'salt 1 pinch', '',
    'Mix the flour and the milk.', 'Add the eggs.', 'Rest 10 minutes.', 'Fry in butter.', 'Serve warm.' }
  write(path, table.concat(before, '\n') .. '\n')
  idle()
  vim.cmd('Reprise ask rewrite the recipe in three places')
  h.wait(T, function()
    return chat_text():find('Rewrote the recipe in three places.', 1, true) ~= nil
  end, 'the rewrite')
  idle() -- the server refuses to undo while the turn runs
  -- Three changes: line 2 modified, "sugar" added after line 5, "Rest 10 minutes." removed.
  h.eq(vim.fn.readfile(path), { '# Pancakes', 'flour 250 g', 'milk 300 ml', 'eggs 2', 'salt 1 pinch', 'sugar 1 spoon',
    '', 'Mix the flour and the milk.', 'Add the eggs.', 'Fry in butter.', 'Serve warm.' }, 'the rewritten file')

  -- The quickfix list: the file with its progress, then one item per change at its line.
  vim.fn.setqflist({}, 'r')
  vim.cmd('Reprise changes')
  h.wait(T, function()
    return #vim.fn.getqflist() == 4
  end, 'the file and its three changes in the quickfix list')
  h.eq(vim.tbl_map(function(i)
    return { i.lnum, i.text }
  end, vim.fn.getqflist()), { { 2, 'modified +2 −2 · 3 changes' }, { 2, 'line 2 · pending' },
    { 6, 'line 6 · pending' }, { 9, 'removed after line 9 · pending' } }, 'quickfix items')
  vim.cmd('cclose')
  vim.cmd('silent only')

  -- The diff split: the keys on both sides, the hints over them.
  vim.o.columns, vim.o.lines = 110, 18
  vim.cmd('Reprise diff src/recipe.txt')
  local oldbuf
  h.wait(T, function()
    oldbuf = vim.fn.bufnr('reprise://restore/src/recipe.txt')
    return oldbuf > 0
  end, 'the restore point buffer')
  h.eq(vim.api.nvim_buf_get_lines(oldbuf, 0, -1, false), before, 'the restore point')
  local cur = vim.fn.bufnr(path)
  local oldwin, curwin = vim.fn.bufwinid(oldbuf), vim.fn.bufwinid(cur)
  for _, w in ipairs({ oldwin, curwin }) do
    vim.api.nvim_set_current_win(w)
    for _, lhs in ipairs({ '<localleader>k', '<localleader>u' }) do
      h.truthy(vim.fn.maparg(lhs, 'n') ~= '', lhs .. ' mapped in ' .. vim.api.nvim_buf_get_name(0))
    end
  end
  -- Only these two compared: "sugar" faces a filler line on the left, the removed line one on the right.
  h.eq({ vim.api.nvim_win_call(oldwin, function()
    return vim.fn.diff_filler(6)
  end), vim.api.nvim_win_call(curwin, function()
    return vim.fn.diff_filler(10)
  end) }, { 1, 1 }, 'the filler lines')
  local bar = require('reprise.util').has('0.8') and 'winbar' or 'statusline'
  local function hints()
    return vim.wo[oldwin][bar] .. ' | ' .. vim.wo[curwin][bar]
  end
  h.eq(hints(), ' Before the agent · 3 changes |  Now · \\k keep · \\u undo the change · ]c [c move', 'the hints')
  local function note_after(n, text)
    h.wait(T, function()
      for i = n + 1, #notes do
        if notes[i].msg:find(text, 1, true) then
          return true
        end
      end
      return false
    end, function()
      return text .. ' in the notes: ' .. vim.inspect(vim.list_slice(notes, n + 1))
    end)
  end

  -- Undone from the file's side: only that change is reverted on disk, the buffer and the restore
  -- point follow.
  vim.api.nvim_set_current_win(curwin)
  vim.api.nvim_win_set_cursor(curwin, { 2, 0 })
  local n = #notes
  vim.cmd([[normal \u]])
  note_after(n, 'Reprise: undone: src/recipe.txt line 2')
  local undone = { '# Pancakes', 'flour 200 g', 'milk 300 ml', 'eggs 2', 'salt 1 pinch', 'sugar 1 spoon', '',
    'Mix the flour and the milk.', 'Add the eggs.', 'Fry in butter.', 'Serve warm.' }
  h.eq(vim.fn.readfile(path), undone, 'only that change undone on disk')
  h.wait(T, function()
    return hints():find('3 changes · 1 undone', 1, true) ~= nil
  end, function()
    return 'the progress: ' .. hints()
  end)
  h.eq(vim.api.nvim_buf_get_lines(cur, 0, -1, false), undone, 'the buffer reloaded')
  h.eq(vim.api.nvim_buf_get_lines(oldbuf, 0, -1, false), before, 'the restore point rebuilt')

  -- Kept: the server says so, and the change is marked.
  vim.api.nvim_win_set_cursor(curwin, { 6, 0 })
  n = #notes
  vim.cmd([[normal \k]])
  note_after(n, 'Reprise: kept src/recipe.txt line 6')
  local listed
  client.execute(id(), 'reprise.changes', { sessionId = session, turn = 1 }, function(err, res)
    listed = { err = err, res = res }
  end)
  h.wait(T, function()
    return listed ~= nil
  end, 'reprise.changes')
  local hunks = listed.res.files[1].hunks
  h.eq(vim.tbl_map(function(hk)
    return { hk.newStart, hk.newLines, hk.review }
  end, hunks), { { 6, 1, 'kept' }, { 9, 0, 'pending' } }, 'the changes left, one kept')
  h.eq(listed.res.files[1].hunksUndone, 1, 'one undone')
  h.wait(T, function()
    return hints():find('3 changes · 1 kept · 1 undone', 1, true) ~= nil
  end, function()
    return 'the progress: ' .. hints()
  end)
  local marks = vim.api.nvim_buf_get_extmarks(cur, vim.api.nvim_create_namespace('reprise_review'), 0, -1,
    { details = true })
  h.eq(vim.tbl_map(function(m)
    return { m[2] + 1, m[4].virt_text[1][1] }
  end, marks), { { 6, '✓ kept' } }, 'the kept change marked')
  -- The quickfix list of :Reprise changes, still the current one, follows the review.
  h.wait(T, function()
    local qf = vim.fn.getqflist()
    return #qf == 3 and qf[1].text:find('3 changes · 1 kept · 1 undone', 1, true) ~= nil
  end, function()
    return 'the quickfix list after the review: ' .. vim.inspect(vim.tbl_map(function(i)
      return { i.lnum, i.text }
    end, vim.fn.getqflist()))
  end)
  h.eq(vim.tbl_map(function(i)
    return { i.lnum, i.text }
  end, vim.fn.getqflist()), { { 6, 'modified +1 −1 · 3 changes · 1 kept · 1 undone' }, { 6, 'line 6 · kept' },
    { 9, 'removed after line 9 · pending' } }, 'the quickfix items after the review')

  -- An undo with unsaved edits in the buffer is refused before the server is asked.
  vim.api.nvim_buf_set_lines(cur, 0, 1, false, { '# Pancakes!' })
  vim.api.nvim_set_current_win(oldwin)
  vim.api.nvim_win_set_cursor(oldwin, { 9, 0 })
  vim.cmd([[normal \u]])
  h.contains(last_note(), 'undo src/recipe.txt removed after line 9: the buffer has unsaved edits', 'refused here')
  vim.api.nvim_buf_call(cur, function()
    vim.cmd('edit!')
  end)

  shoot_screen('review')

  -- The user edits the lines around the removal on disk: the change shown is no longer the file's,
  -- and its undo is refused with the reason; the user's edit stays.
  local mine = vim.deepcopy(undone)
  mine[9] = 'Add the eggs and stir.'
  write(path, table.concat(mine, '\n') .. '\n')
  vim.api.nvim_win_set_cursor(oldwin, { 9, 0 })
  n = #notes
  vim.cmd([[normal \u]])
  note_after(n, 'Reprise: undo refused for src/recipe.txt removed after line 9: ')
  io.stdout:write('     ' .. notes[#notes].msg .. '\n')
  h.eq(notes[#notes].level, vim.log.levels.WARN, 'a warning')
  h.eq(vim.fn.readfile(path), mine, 'the user edit kept on disk')
  h.wait(T, function()
    return vim.deep_equal(vim.api.nvim_buf_get_lines(cur, 0, -1, false), mine)
  end, 'the buffer reloaded with the user edit')

  -- Closed, the file's buffer has its keys and marks no more.
  vim.api.nvim_set_current_win(oldwin)
  vim.cmd('normal q')
  h.wait(T, function()
    return vim.fn.bufexists(oldbuf) == 0
  end, 'the restore point wiped')
  vim.api.nvim_set_current_win(vim.fn.bufwinid(cur))
  h.eq(vim.fn.maparg('<localleader>u', 'n'), '', 'no key left')
  h.eq(#vim.api.nvim_buf_get_extmarks(cur, vim.api.nvim_create_namespace('reprise_review'), 0, -1, {}), 0,
    'no mark left')
  vim.o.columns, vim.o.lines = 80, 24
  -- In the file's buffer, :Reprise keephunk asks for the changes now: line 2 has none left.
  vim.api.nvim_win_set_cursor(0, { 2, 0 })
  n = #notes
  vim.cmd('Reprise keephunk')
  note_after(n, 'Reprise: src/recipe.txt: no change of the agent on line 2')

  -- Resumed, the turn's Changes line counts the changes kept and undone.
  vim.cmd('Reprise resume ' .. session)
  h.wait(T, function()
    local text = chat_text()
    local at = text:find('# Session ' .. session .. ' (resumed)', 1, true)
    return at and text:sub(at):find('\n%- `src/recipe%.txt` %+2 −2 · 1 change kept · 1 undone') ~= nil
  end, function()
    return 'the counts in the resumed chat:\n' .. chat_text()
  end)
  local text = chat_text()
  text = text:sub((text:find('# Session ' .. session .. ' (resumed)', 1, true)))
  h.contains(text, '\n- ✓ Write src/recipe.txt +2 −2\n', 'the write, in the resumed session of the chat')
  io.stdout:write('     ' .. text:match('\n(%- `src/recipe%.txt` [^\n]*)') .. '\n')
  shoot_last_turn('review-chat')
  vim.cmd('silent only')
end)


h.test('the approval float in each colour scheme, on the default colours (issue 37, item 9)', function()
  vim.cmd('silent only')
  approval_key = 'a'
  local shot = false
  local shown, total
  approval_hook = function()
    local p = approvals.pending()
    vim.cmd('redraw')
    -- Every line of the question shows, the wrapped ones too.
    shown, total = vim.fn.line('w$', p.win), vim.api.nvim_buf_line_count(p.buf)
    shoot_screen('approval-float')
    shot = true
  end
  local before = #approval_asked
  idle()
  vim.cmd('Reprise ask show me the approval float')
  h.wait(T, function()
    return chat_text():find('echo printed float.', 1, true) ~= nil
  end, function()
    return 'the answer:\n' .. chat_text()
  end)
  h.eq(#approval_asked, before + 1, 'approvals asked')
  h.truthy(shot or vim.fn.exepath('chromium') == '', 'the float was pictured while open')
  h.contains(approval_asked[#approval_asked].text, 'echo float', 'the float shows the command')
  h.eq(shown, total, 'the last line of the float in view')
  idle()
end)
h.test('old tool results cleared: the chat says what was cleared', function()
  for i = 0, 11 do
    write(string.format('%s/long/n%d.txt', ws, i), string.rep(string.format('note %d line\n', i), 200))
  end
  local s = require('reprise.config').options.settings
  s.contextBudget, s.compactAt, s.blockAt, s.keepRecentTurns = 8000, 0.7, 0.95, 2
  client.push_settings()
  vim.cmd('Reprise new')
  h.wait(T, function()
    return reprise.statusline():find('/8k$') ~= nil
  end, 'the 8k budget')
  idle()
  vim.cmd('Reprise ask read the long notes')
  h.wait(30000, function()
    return chat_text():find('I read the long notes.', 1, true) ~= nil
  end, 'the answer')
  local text = chat_text()
  local line = text:match('\n(> ✂ %d+ old tool results? cleared, [%d.]+k? tokens freed; the model reads them again on '
    .. 'demand · Checkpoint %d+)')
  h.truthy(line, 'the clearing in the chat:\n' .. text)
  io.stdout:write('     ' .. line .. '\n')
end)

h.test('another provider: the picker lists its models, and a local model is weighed in time (issue 38)', function()
  local url2
  local fake = { bin .. '/fakegemini', '--script', here .. '/fixtures/openai.json', '--api', 'openai' }
  local job = vim.fn.jobstart(fake, {
    on_stdout = function(_, data)
      if not url2 and data[1] and data[1]:match('^http') then
        url2 = data[1]
      end
    end,
  })
  h.truthy(job > 0, 'jobstart the OpenAI-compatible fake')
  h.wait(T, function()
    return url2 ~= nil
  end, 'its URL')
  local s = require('reprise.config').options.settings
  local before = { provider = s.provider, baseURL = s.baseURL, model = s.model, contextBudget = s.contextBudget }
  local old = id()
  -- Read when the server starts: it stops, and the next command starts one on the provider. The
  -- budget is the default's, larger than the window the server gives.
  s.provider, s.baseURL, s.contextBudget = 'openai', url2, nil
  client.push_settings()
  h.wait(T, function()
    return vim.lsp.get_client_by_id(old) == nil
  end, 'the server on Gemini to stop')
  local picks = answer_models({ 'qwen3:8b' })
  vim.cmd('Reprise models')
  h.wait(T, function()
    return #picks == 1
  end, 'the model picker')
  local shown = formatted(picks[1])
  io.stdout:write('     ' .. shown:gsub('\n', '\n     ') .. '\n')
  h.contains(shown, 'qwen3:8b', 'the server\'s own model')
  h.contains(shown, '16k context · local: free, its time counted', 'its window from the server, free')
  h.truthy(shown:find('gpt%-5%.4%-mini +[^\n]*%$0%.75'), 'a model the catalogue prices, at its prices:\n' .. shown)
  h.truthy(not shown:find('gemini', 1, true), 'no Gemini model:\n' .. shown)
  h.contains(asked[#asked].opts.prompt, 'is not listed by this server: pick one', 'the Gemini model set, said')
  h.eq(s.model, 'qwen3:8b', 'the model picked')

  -- A turn on it: the context view counts its tokens and its time, never dollars.
  vim.cmd('Reprise new')
  vim.cmd('Reprise ask say hello')
  h.wait(T, function()
    return chat_text():find('Hello from the local model.', 1, true) ~= nil
  end, 'the local model\'s answer')
  idle()
  vim.cmd('Reprise context')
  h.wait(T, function()
    return #float_wins() == 1
  end, 'the context window')
  local view = h.text(vim.api.nvim_win_get_buf(float_wins()[1]))
  vim.cmd('normal q')
  h.truthy(view:match('Context · %d+%% · [%d.]+k?/16%.4k tokens'), 'the window the server gave (16,384):\n' .. view)
  h.truthy(view:find('local · [%d.<]+ s'), 'the cost as local time:\n' .. view)
  h.truthy(not view:find('$', 1, true), 'no dollars:\n' .. view)

  vim.fn.jobstop(job)
  s.provider, s.baseURL, s.model, s.contextBudget = before.provider, before.baseURL, before.model, before.contextBudget
  client.push_settings()
end)

h.test('the client stops', function()
  local a = id()
  client.stop_all()
  h.wait(T, function()
    return vim.lsp.get_client_by_id(a) == nil
  end, 'the client to exit')
end)
