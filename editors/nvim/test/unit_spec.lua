-- Tests that need no server: protocol names, statusline rendering, completion, the context view.
local h = require('harness')

local repo = assert(vim.env.REPRISE_REPO, 'REPRISE_REPO is not set (run test/run.sh)')
local plugin = assert(vim.env.REPRISE_PLUGIN, 'REPRISE_PLUGIN is not set (run test/run.sh)')

h.test('protocol names match lsp/protocol.go', function()
  local go = {}
  for line in io.lines(repo .. '/lsp/protocol.go') do
    line = line:gsub('^const ', '')
    local name, value = line:match('^%s*(%u%w+)%s*=%s*"([^"]*)"')
    if name then
      go[name] = value
    end
    name, value = line:match('^%s*(Code%w+)%s*=%s*(%-%d+)')
    if name then
      go[name] = tonumber(value)
    end
  end
  local seen, n = {}, 0
  for line in io.lines(plugin .. '/lua/reprise/protocol.lua') do
    local value, name = line:match("= '([^']*)',? %-%- (%u%w+)")
    if not value then
      value, name = line:match('= (%-%d+),? %-%- (%u%w+)')
      value = tonumber(value)
    end
    if name then
      h.eq(value, go[name], 'protocol.lua ' .. name)
      seen[name] = true
      n = n + 1
    end
  end
  h.truthy(n > 20, 'protocol.lua names found: ' .. n)
  for name in pairs(go) do
    h.truthy(seen[name], name .. ' from protocol.go is missing in protocol.lua')
  end
end)

h.test('statusline rendering', function()
  local status = require('reprise.status')
  h.eq(status.render({ percent = 42.1, used = 10100, size = 24000, compaction = { state = 'idle' } }),
    '◔ 42% 10.1k/24k', 'idle')
  h.eq(status.render({ percent = 80, used = 3200, size = 4000, compaction = { state = 'running' } }), '◕ 80% 3.2k/4k ⟳',
    'running')
  h.eq(status.render({ percent = 5, used = 950, size = 24000 }, true), '○ 5% 950/24k ⟳', 'manual compaction')
  h.eq(status.render(nil), '', 'no usage')
end)

h.test(':Reprise completion', function()
  h.eq(vim.fn.exists(':Reprise'), 2, ':Reprise defined by plugin/reprise.lua')
  h.eq(vim.fn.getcompletion('Reprise ch', 'cmdline'), { 'changes', 'chat', 'checkpoint', 'checkpoints' },
    'completion')
  local all = vim.fn.getcompletion('Reprise ', 'cmdline')
  local wanted = { 'ask', 'compact', 'context', 'checkpoints', 'checkpoint', 'sessions', 'resume', 'new', 'cancel',
    'restore', 'changes', 'diff', 'undo', 'keephunk', 'undohunk', 'mcp', 'pin', 'pins', 'unpin' }
  for _, want in ipairs(wanted) do
    h.truthy(vim.tbl_contains(all, want), want .. ' not completed: ' .. vim.inspect(all))
  end
  local pin = vim.fn.getcompletion('Reprise pin ', 'cmdline')
  h.eq({ pin[1], pin[2] }, { 'message', 'text' }, ':Reprise pin completes message and text first: ' .. vim.inspect(pin))
  h.eq(vim.fn.getcompletion('Reprise pin te', 'cmdline')[1], 'text', ':Reprise pin te')
end)

h.test('changes: a unified diff applied in reverse', function()
  local changes = require('reprise.changes')
  local cur = { 'a', 'B', 'c', 'd', 'e', 'f', 'g', 'h', 'new1', 'new2', 'i' }
  local diff = table.concat({
    '--- a/x.txt', '+++ b/x.txt',
    '@@ -1,3 +1,3 @@', ' a', '-b', '+B', ' c',
    '@@ -6,4 +6,5 @@', ' f', ' g', ' h', '-gone', '+new1', '+new2', ' i', '',
  }, '\n')
  h.eq(changes.reverse(cur, diff), { 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'gone', 'i' }, 'old text')
  -- A created file (old side empty) and a deleted one (new side empty).
  h.eq(changes.reverse({ 'x', 'y' }, '--- /dev/null\n+++ b/n\n@@ -0,0 +1,2 @@\n+x\n+y\n'), {}, 'created')
  h.eq(changes.reverse({}, '--- a/n\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-x\n-y\n'), { 'x', 'y' }, 'deleted')
  -- Pure insertion after line 1.
  h.eq(changes.reverse({ 'a', 'ins', 'b' }, '@@ -1,0 +2,1 @@\n+ins\n'), { 'a', 'b' }, 'insertion')
  h.eq(changes.first_line({ diff = diff }), 2, 'first changed line')
  local items = changes.items({ { path = 'x.txt', absPath = '/w/x.txt', state = 'modified', added = 3, removed = 2,
    diff = diff, userChanged = true } })
  h.eq(items[1].text, 'modified +3 −2 (changed by you since)', 'quickfix text')
  h.eq(items[1].lnum, 2, 'quickfix line')
end)

h.test('changes reviewed one by one: the change under the cursor, its label, the progress', function()
  local changes = require('reprise.changes')
  -- Three changes: line 2 modified, a line added after line 5 (new line 6), old line 9 removed
  -- (the gap after new line 9).
  local hunks = {
    { id = 'h1', oldStart = 2, oldLines = 1, newStart = 2, newLines = 1, review = 'pending' },
    { id = 'h2', oldStart = 5, oldLines = 0, newStart = 6, newLines = 1, review = 'kept' },
    { id = 'h3', oldStart = 9, oldLines = 1, newStart = 9, newLines = 0, review = 'pending' },
  }
  local function at(line, side)
    local hk = changes.hunk_at(hunks, line, side)
    return hk and hk.id
  end
  h.eq({ at(1, 'new'), at(2, 'new'), at(3, 'new'), at(6, 'new'), at(7, 'new') }, { nil, 'h1', nil, 'h2', nil },
    'lines of the file now')
  h.eq({ at(8, 'new'), at(9, 'new'), at(10, 'new'), at(11, 'new') }, { nil, 'h3', 'h3', nil },
    'a removal: the lines either side of its gap')
  h.eq({ at(2, 'old'), at(5, 'old'), at(6, 'old'), at(9, 'old'), at(10, 'old') }, { 'h1', 'h2', 'h2', 'h3', nil },
    'lines of the restore point: an addition by the lines either side of its gap')
  -- A line both in a change and beside another's gap picks the change.
  local near = { { id = 'gap', oldStart = 3, oldLines = 1, newStart = 2, newLines = 0 },
    { id = 'mod', oldStart = 4, oldLines = 1, newStart = 3, newLines = 1 } }
  h.eq(changes.hunk_at(near, 3, 'new').id, 'mod', 'a change wins over a gap beside it')
  h.eq(changes.hunk_at(near, 2, 'new').id, 'gap', 'the line before the gap')
  h.eq(changes.hunk_at(nil, 1, 'new'), nil, 'no hunks')
  h.eq({ changes.hunk_lines(hunks[1]), changes.hunk_lines({ newStart = 12, newLines = 3 }),
    changes.hunk_lines(hunks[3]), changes.hunk_lines({ newStart = 0, newLines = 0 }) },
    { 'line 2', 'lines 12–14', 'removed after line 9', 'removed at the top' }, 'labels')
  h.eq(changes.progress({ hunks = hunks, hunksUndone = 1 }), '4 changes · 1 kept · 1 undone', 'progress')
  h.eq(changes.progress({ hunks = { hunks[1] } }), '1 change', 'progress of one')
  -- The quickfix list: the file with its progress, then each change at its line.
  local items = changes.items({ { path = 'r.txt', absPath = '/w/r.txt', state = 'modified', added = 2, removed = 2,
    hunks = hunks, hunksUndone = 1, diff = '@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n' } })
  h.eq(vim.tbl_map(function(i)
    return { i.lnum, i.text }
  end, items), {
    { 2, 'modified +2 −2 · 4 changes · 1 kept · 1 undone' },
    { 2, 'line 2 · pending' }, { 6, 'line 6 · kept' }, { 9, 'removed after line 9 · pending' },
  }, 'quickfix items')
  items = changes.items({ { path = 'one.txt', absPath = '/w/one.txt', state = 'modified', added = 1, removed = 1,
    hunks = { hunks[1] } } })
  h.eq({ #items, items[1].text }, { 1, 'modified +1 −1' }, 'one change not yet reviewed: the file alone')
  items = changes.items({ { path = 'x.txt', absPath = '/w/x.txt', state = 'modified', added = 1, removed = 1,
    hunks = { { id = 'k', newStart = 3, newLines = 3, review = 'kept' } } } })
  h.eq(items[1].text, 'modified +1 −1 · 1 change · 1 kept', 'one change kept')
end)

h.test('review hints: the keys as typed and the progress', function()
  local review = require('reprise.review')
  local file = { hunks = { { id = 'a', review = 'kept' }, { id = 'b', review = 'pending' } }, hunksUndone = 1 }
  local old, new = review.hints(file, { keep = '<localleader>k', undo = '<LocalLeader>u' })
  h.eq(old, 'Before the agent · 3 changes · 1 kept · 1 undone', 'restore point side')
  h.eq(new, 'Now · \\k keep · \\u undo the change · ]c [c move', 'file side')
  vim.g.maplocalleader = ','
  h.eq(review.key_label('<localleader>k'), ',k', 'maplocalleader')
  vim.g.maplocalleader = nil
  h.eq(review.key_label('<leader>x'), '\\x', 'the default leader')
  new = select(2, review.hints(file, { keep = 'gK', undo = false }))
  h.eq(new, 'Now · gK keep the change · ]c [c move', 'a key turned off')
  new = select(2, review.hints({ hunks = {}, hunksUndone = 2 }, { keep = 'gK' }))
  h.eq(new, 'Now', 'nothing left to review')
  local chat = require('reprise.chat')
  h.eq(chat.change_lines({ { path = 'r.txt', state = 'modified', added = 3, removed = 3, hunksKept = 1,
    hunksUndone = 1 } })[2], '- `r.txt` +3 −3 · 1 change kept · 1 undone', 'the chat counts them')
  h.eq(chat.hunk_counts(0, 2), '2 changes undone', 'undone only')
  h.eq(chat.hunk_counts(nil, nil), '', 'none')
end)

h.test('context view rendering', function()
  local lines = require('reprise.context').render({
    percent = 42, used = 10100, size = 24000, source = 'usage', model = 'm', compactAt = 0.7, blockAt = 0.95,
    breakdown = { systemPrompt = 269, tools = 561, messages = 9230, free = 12700, buffer = 1200 },
    largest = { { kind = 'file', label = 'read_file a.go', path = 'a.go', tokens = 1200, stale = true } },
  })
  local text = table.concat(lines, '\n')
  h.contains(text, 'Context · 42% · 10.1k/24k tokens', 'header')
  h.contains(text, 'Compacts at 70%, blocks at 95% · 0 compactions · 0 checkpoints', 'plurals, never (s)')
  local labels = { 'System prompt', 'Custom instructions', 'Tools', 'MCP tools', 'Messages', 'Free', 'Buffer' }
  for _, label in ipairs(labels) do
    h.truthy(text:find('\n  ' .. label .. ' +[%d.]+k? +[%d.]+%%'), 'VS Code\'s label ' .. label .. ':\n' .. text)
  end
  h.truthy(not text:find('(s)', 1, true), 'no (s):\n' .. text)
  h.contains(text, 'Messages', 'breakdown')
  h.contains(text, 'a.go (stale)', 'largest')
  local calls = table.concat(require('reprise.context').render({ percent = 1, largest = {
    { kind = 'run_command', label = 'run_command go test ./...', tokens = 900 } } }), '\n')
  h.contains(calls, '  run_command go test ./...', 'a call named once')
  h.truthy(not calls:find('run_command run_command', 1, true), 'the tool not named twice:\n' .. calls)
  local waiting = table.concat(require('reprise.context').render({
    percent = 75, used = 18000, size = 24000, compactAt = 0.7, blockAt = 0.95,
    compaction = { state = 'idle', count = 0, decision = 'past compactAt, waiting: clearing would not pay yet' },
  }), '\n')
  h.contains(waiting, '0 compactions · 0 checkpoints\npast compactAt, waiting: clearing would not pay yet\n',
    'the decision')
  h.truthy(not text:find('(catalogue)', 1, true), 'no MCP rows without mcp')
  h.truthy(not text:find('expected hits', 1, true), 'no cache line before a call expected hits')
  local cached = table.concat(require('reprise.context').render({
    percent = 42, used = 10100, size = 24000, model = 'm',
    cache = { expected = 40000, reported = 23200, hitRate = 0.58 },
  }), '\n')
  h.contains(cached, 'Cache: 23.2k of 40k expected cached tokens · 58 % of the expected hits', 'the hit rate')
  h.truthy(not cached:find('uncached', 1, true), 'no misses line before any')
  local missed = table.concat(require('reprise.context').render({
    percent = 42, used = 10100, size = 24000, model = 'm',
    totals = {
      inputTokens = 9000, cachedTokens = 0, outputTokens = 10, cost = { amount = 0.01, currency = 'USD' },
      misses = { calls = { first = 1, below = 2 }, text = '3 uncached calls: 1 first call, 2 under the cache minimum' },
    },
  }), '\n')
  h.contains(missed, '\n3 uncached calls: 1 first call, 2 under the cache minimum', 'the misses in the server\'s words')
end)

h.test('costs as the server words them: unknown is never $0', function()
  local util = require('reprise.util')
  h.eq(util.cost({ amount = 0.0336, currency = 'USD', text = '$0.0336' }), '$0.0336', 'priced')
  h.eq(util.cost({ amount = 0, currency = 'USD', unknown = true, text = 'unknown' }), 'unknown', 'unknown')
  h.eq(util.cost({ amount = 0.0063, currency = 'USD', unknown = true, text = '$0.0063 + unknown' }),
    '$0.0063 + unknown', 'part unknown')
  h.eq(util.cost({ amount = 0, currency = 'USD', unknown = true }), 'unknown', 'unknown without text')
  h.eq(util.cost({ amount = 0.5, currency = 'USD' }), '$0.5000', 'an older server')
  h.eq(util.cost(nil), 'unknown', 'none')
  local text = table.concat(require('reprise.context').render({
    percent = 1, used = 100, size = 1000, model = 'gemini-9-x', servedModel = 'gemini-9-y',
    totals = { inputTokens = 100, cachedTokens = 0, outputTokens = 5, cost = { amount = 0, currency = 'USD',
      unknown = true, text = 'unknown' } }, calls = 1,
  }), '\n')
  h.contains(text, 'gemini-9-x (answered by gemini-9-y)', 'the served model')
  h.contains(text, '· 5 out · unknown · 0 turns · 1 model call · 0 re-reads', 'the cost unknown')
  -- A local model is free: its cost is its time, never $0.
  local local_cost = { amount = 0, currency = 'USD', ['local'] = true, text = 'local · 41 s' }
  h.eq(util.cost(local_cost), 'local · 41 s', 'a local model')
  local view = table.concat(require('reprise.context').render({
    percent = 60, used = 9800, size = 16384, model = 'qwen3:8b',
    totals = { inputTokens = 52000, cachedTokens = 0, outputTokens = 300, cost = local_cost, modelMillis = 41400 },
    calls = 9,
  }), '\n')
  h.contains(view, '· 300 out · local · 41 s ·', 'the local model\'s time in the context view')
  h.truthy(not view:find('$', 1, true), 'no dollars for a local model')
end)

h.test('models picker rows', function()
  local models = require('reprise.models')
  h.eq(models.format({ id = 'gemini-3.8-flash', current = true, default = true, detail = 'ga · 1M context' }),
    '● gemini-3.8-flash         ga · 1M context (default)', 'current and default')
  h.eq(models.format({ id = 'x', statusText = 'not in the catalogue' }),
    '  x                        not in the catalogue', 'no detail')
  h.contains(models.prompt({ model = 'm', catalogueAsOf = '2026-12-01', warning = 'no key' }), 'now m; prices of the '
    .. 'catalogue as of 2026-12-01) — no key', 'prompt')
  local elsewhere = { model = 'gemini-3.8-flash', catalogueAsOf = '2026-12-01', models = { { id = 'qwen3:8b' } } }
  h.contains(models.prompt(elsewhere),
    '— ⚠ gemini-3.8-flash is not listed by this server: pick one', 'a model the server does not list')
  h.truthy(not models.prompt({ model = 'q', models = { { id = 'q', current = true } } }):find('⚠', 1, true),
    'no warning for a listed model')
end)

h.test('turns and model calls counted apart', function()
  -- One prompt whose answer took two tool calls: one turn, three model calls.
  local session = { sessionId = 's1', title = 'Read the notes', turns = 1, calls = 3, percent = 42.1, used = 10100,
    size = 24000, lastActivity = '2026-12-01T10:00:00Z', current = true }
  local actions = require('reprise.actions')
  local when = actions.when('2026-12-01T10:00:00Z')
  h.truthy(when:match('^ · 2026%-12%-0[12] %d%d:%d%d$'), 'a local time: ' .. when)
  h.eq(actions.format_session(session),
    'Read the notes · 42% · 10.1k/24k · current — s1 · 1 turn · 3 model calls' .. when,
    'session picker row, as VS Code\'s')
  h.eq(actions.format_session({ sessionId = 's2', title = 'Saved one', turns = 2, calls = 5, size = 0 }),
    'Saved one · saved — s2 · 2 turns · 5 model calls', 'a saved session has no window to fill')
  local chat = require('reprise.chat')
  local function ended(calls)
    chat.on_update(9989, { sessionId = 's1', update = { sessionUpdate = 'turn_end', stopReason = 'end_turn',
      turn = { calls = calls } } })
  end
  chat.user(9989, 'one')
  ended(3)
  chat.user(9989, 'two')
  ended(4)
  h.contains(h.text(chat.buf(9989)), '_3 model calls_\n\n## You\n\ntwo\n\n## Reprise\n\n_1 model call_',
    'each turn its own calls')
  vim.cmd('bwipeout! ' .. chat.buf(9989))
  local lines = require('reprise.context').render({
    percent = 42, used = 10100, size = 24000, source = 'usage', model = 'm', compactAt = 0.7, blockAt = 0.95,
    breakdown = {}, largest = {}, turns = 2, calls = 4,
    totals = { inputTokens = 3000, cachedTokens = 0, outputTokens = 100, cost = { amount = 0.01, currency = 'USD' } },
  })
  h.contains(table.concat(lines, '\n'), '· 2 turns · 4 model calls', 'context view')
end)

h.test('context view: what the summaries cost, apart', function()
  local text = table.concat(require('reprise.context').render({
    percent = 42, used = 10100, size = 24000, breakdown = {}, largest = {}, turns = 1, calls = 4,
    totals = { inputTokens = 3000, cachedTokens = 0, outputTokens = 100, cost = { amount = 0.01, currency = 'USD' },
      summaries = { calls = 1, text = '1 summary $0.0009 (3,000 input, 0 cached; 1 on Flex)' } },
  }), '\n')
  h.contains(text, '\nSummaries: 1 summary $0.0009 (3,000 input, 0 cached; 1 on Flex)', 'the server\'s words')
end)

h.test('context view and chat: the subagents, apart', function()
  local text = table.concat(require('reprise.context').render({
    percent = 42, used = 10100, size = 24000, breakdown = {}, largest = {}, turns = 1, calls = 4,
    totals = { inputTokens = 9000, cachedTokens = 0, outputTokens = 100, cost = { amount = 0.01, currency = 'USD' },
      subagents = { runs = 2, calls = 5, text = '2 subagents, 5 calls $0.0021 (8,000 input, 4,000 cached)' } },
  }), '\n')
  h.contains(text, '\nSubagents: 2 subagents, 5 calls $0.0021 (8,000 input, 4,000 cached), counted above',
    'the server\'s words')
  local chat = require('reprise.chat')
  h.eq(chat.subagent_line({ model = 'gemini-3.5-flash-lite', status = 'running', calls = 2, tool = 'Read a.go',
    totals = { inputTokens = 5210, cachedTokens = 1200, cost = { text = '$0.0012' } } }),
    '  ↳ ⋯ subagent gemini-3.5-flash-lite · 2 calls · 5.2k in (1.2k cached) · $0.0012 · → Read a.go', 'a running one')
  h.eq(chat.subagent_line({ model = 'm', status = 'cancelled', calls = 0, totals = {} }), '  ↳ ⊘ subagent m · 0 calls',
    'one stopped before its first call')
end)

h.test('context view: the workspace map as its own row, only when the head has one', function()
  local render = require('reprise.context').render
  local with = table.concat(render({ percent = 30, used = 7200, size = 24000,
    breakdown = { systemPrompt = 1700, workspaceMap = 2100, tools = 996, messages = 2404 } }), '\n')
  h.truthy(with:find('\n  System prompt +1%.7k [^\n]*\n  Custom instructions [^\n]*\n  Workspace map +2%.1k +8%.8%%'),
    'the map between the instructions and the tools:\n' .. with)
  local without = table.concat(render({ percent = 10, used = 2400, size = 24000, breakdown = { tools = 561 } }), '\n')
  h.truthy(not without:find('Workspace map', 1, true), 'no row without a map:\n' .. without)
end)

h.test('context view: the MCP servers under the MCP tools row', function()
  local lines = require('reprise.context').render({
    percent = 10, used = 2400, size = 24000, breakdown = { tools = 561, mcpTools = 1500, messages = 300 },
    mcp = { { server = '', tools = 2, tokens = 180 }, { server = 'everything', tools = 9, deferred = 5, tokens = 1200 },
      { server = 'a-server-with-a-very-long-name', tools = 1, tokens = 120 } },
  })
  local text = table.concat(lines, '\n')
  h.truthy(text:find('\n  MCP tools +1%.5k [^\n]*\n    %(catalogue%) +180  2 tools\n'
    .. '    everything +1%.2k  9 tools, 5 via catalogue\n    a%-server%-with%-a%-v… +120  1 tools\n  Messages '),
    'rows under MCP tools, as the server renders them:\n' .. text)
end)

h.test('mcp view rendering', function()
  local mcp = require('reprise.mcp')
  local text = table.concat(mcp.render({
    tokens = 1530,
    servers = {
      { name = 'everything', source = 'settings', type = 'stdio', state = 'running', tokens = 1200, tools = {
        { name = 'everything__echo', tool = 'echo', description = 'Echoes', tokens = 90 },
        { name = 'everything__get-sum', tool = 'get-sum', tokens = 110, deferred = true },
      } },
      { name = 'broken', source = '/home/u/.config/reprise/mcp.json', type = 'stdio', state = 'failed',
        error = 'exec: "nope": executable file not found in $PATH\nsecond line', tokens = 0, tools = {} },
      { name = 'theirs', source = '/src/repo/.vscode/mcp.json', type = 'http', state = 'untrusted', tokens = 0,
        tools = {} },
    },
  }), '\n')
  h.contains(text, 'MCP servers · 3 servers, 2 tools · 1.5k tokens per request', 'header')
  h.contains(text, 'mcp_find_tools', 'the catalogue named when tools are deferred')
  h.contains(text, 'everything  running · stdio · settings\n  1 declared, 1 via catalogue · 1.2k tokens per request\n',
    'running server')
  h.truthy(text:find('\n  everything__echo +90\n'), 'declared tool:\n' .. text)
  h.truthy(text:find('\n  everything__get%-sum +110  %(via catalogue%)\n'), 'deferred tool:\n' .. text)
  h.contains(text, 'broken  failed · stdio · /home/u/.config/reprise/mcp.json\n', 'failed server')
  h.contains(text, '  error: exec: "nope": executable file not found in $PATH\n         second line',
    'its error, whole')
  h.contains(text, 'theirs  untrusted · http · /src/repo/.vscode/mcp.json\n  0 declared, 0 via catalogue', 'untrusted')
  h.contains(text, 'not started: declared by the workspace', 'why the untrusted one is not running')
  local empty = table.concat(mcp.render({ servers = {}, tokens = 0 }), '\n')
  h.contains(empty, 'MCP servers · 0 servers, 0 tools · 0 tokens per request', 'no servers')
  h.contains(empty, 'mcpServers', 'where to declare them')
  h.truthy(not empty:find('mcp_find_tools', 1, true), 'no catalogue line without deferred tools')
end)

h.test('settings on the wire: empty tables of mcpServers stay objects', function()
  local client = require('reprise.client')
  local s = { model = 'm', mcpServers = { a = { type = 'stdio', command = 'x', args = {}, env = {} },
    b = { type = 'http', url = 'http://h', headers = {} } } }
  local got = vim.json.decode(vim.json.encode(client.wire_settings(s)))
  h.eq(vim.json.encode(client.wire_settings({})), '{}', 'no settings')
  h.eq(vim.json.encode(client.wire_settings({ mcpServers = {} })), '{"mcpServers":{}}', 'no servers')
  local raw = vim.json.encode(client.wire_settings(s))
  h.contains(raw, '"env":{}', 'env')
  h.contains(raw, '"headers":{}', 'headers')
  h.contains(raw, '"args":[]', 'args stay a list')
  h.eq(got.model, 'm', 'the rest unchanged')
  h.eq(s.mcpServers.a.env, {}, 'the options are not changed')
end)

h.test('chat rendering of every update kind', function()
  local chat = require('reprise.chat')
  local id = 9999 -- no client needed: the chat only renders
  local function up(u)
    chat.on_update(id, { sessionId = 's1', update = u })
  end
  chat.user(id, 'why?')
  up({ sessionUpdate = 'agent_thought_chunk', content = { type = 'text', text = 'thinking\nmore' } })
  up({ sessionUpdate = 'agent_message_chunk', content = { type = 'text', text = 'Be' } })
  up({ sessionUpdate = 'agent_message_chunk', content = { type = 'text', text = 'cause.' } })
  up({ sessionUpdate = 'tool_call', toolCallId = 't1', title = 'Run make', kind = 'execute', status = 'in_progress' })
  up({ sessionUpdate = 'tool_call', toolCallId = 't2', title = 'Run rm -rf', kind = 'execute', status = 'in_progress' })
  local text = h.text(chat.buf(id))
  h.contains(text, '- ⋯ Run make\n- ⋯ Run rm -rf', 'running tool calls, grouped')
  up({ sessionUpdate = 'tool_call_update', toolCallId = 't1', title = 'Run make', status = 'failed',
    rawOutput = { output = 'x' } })
  up({ sessionUpdate = 'tool_call_update', toolCallId = 't2', title = 'Run rm -rf', status = 'completed',
    rawOutput = { output = 'refused by policy: rm -rf', refused = true } })
  up({ sessionUpdate = 'tool_call', toolCallId = 't3', title = 'Edit a.txt', kind = 'edit', status = 'in_progress' })
  up({ sessionUpdate = 'tool_call_update', toolCallId = 't3', title = 'Edit a.txt', kind = 'edit', status = 'completed',
    rawOutput = { output = 'ok' }, content = { { type = 'diff', path = '/w/a.txt', oldText = 'a\nb\n',
      newText = 'a\nB\nc\n' } } })
  h.contains(h.text(chat.buf(id)), '- ✓ Edit a.txt +2 −1', 'an edit with its counts')
  up({ sessionUpdate = 'compaction', compaction = { state = 'running', trigger = 'auto' } })
  up({ sessionUpdate = 'compaction', compaction = { state = 'done', trigger = 'auto',
    checkpoint = { n = 2, title = 'Fix', tokensBefore = 3000, tokensAfter = 900 } } })
  up({ sessionUpdate = 'compaction', compaction = { state = 'done', trigger = 'auto',
    checkpoint = { n = 3, title = '12 tool results cleared', tokensBefore = 40000, tokensAfter = 8600,
      cleared = 12 } } })
  up({ sessionUpdate = 'retry', retry = { attempt = 1, delay = 1, error = '503', discard = true } })
  up({ sessionUpdate = 'turn_end', stopReason = 'error', error = 'boom', turn = { calls = 4 } })
  text = h.text(chat.buf(id))
  h.contains(text, '## You\n\nwhy?\n\n## Reprise\n\n> thinking\n> more\n\nBecause.\n\n', 'thought, then the answer')
  h.contains(text, '- ✗ Run make\n- ⊘ Run rm -rf (refused by policy: rm -rf)\n', 'tool statuses updated in place')
  local test = { toolCallId = 't9', title = 'Run go test ./...', kind = 'execute' }
  up(vim.tbl_extend('force', test, { sessionUpdate = 'tool_call', status = 'in_progress' }))
  up(vim.tbl_extend('force', test, { sessionUpdate = 'tool_call_update', status = 'failed',
    rawOutput = { output = 'FAIL\tx\t0.01s\nexit status 1', verdict = 'FAIL x 0.01s' } }))
  h.contains(h.text(chat.buf(id)), '- ! Run go test ./... · exit 1 · FAIL x 0.01s',
    'a test run that found failures: its exit status and verdict, not a broken tool')
  h.eq(chat.refusal('cart.go has unsaved changes in the editor; ask the user to save or discard them, then try again'),
    'refused: cart.go has unsaved changes in the editor', 'an edit refused for unsaved changes says why')
  h.eq(chat.refusal(nil), 'refused', 'no reason given')
  h.contains(text, '> ⟳ Compacting the context…', 'compaction running')
  h.contains(text, '> ✂ Context compacted (auto): 3k → 900 tokens · Checkpoint 2: Fix', 'compaction done')
  h.contains(text, '> ✂ 12 old tool results cleared, 31.4k tokens freed; the model reads them again on demand'
    .. ' · Checkpoint 3', 'clearing done')
  h.contains(text, '> ↻ Retrying (attempt 1): 503 — the text above is discarded', 'retry')
  h.contains(text, '> ⚠ Stopped: error — boom\n_4 model calls_', 'turn end with an error')
  up({ sessionUpdate = 'agent_message_chunk', content = { type = 'text', text = 'other' } })
  chat.on_update(id, { sessionId = 's2', update = { sessionUpdate = 'agent_message_chunk',
    content = { type = 'text', text = 'x' } } })
  h.contains(h.text(chat.buf(id)), '# Session s2', 'a new session is marked')
  vim.cmd('bwipeout! ' .. chat.buf(id))
end)

h.test('chat: a running command shows its time and last lines, replaced in place by its result', function()
  local chat = require('reprise.chat')
  local id = 9998
  local function up(u)
    chat.on_update(id, { sessionId = 's1', update = u })
  end
  local function live(id_, tail, ms)
    up({ sessionUpdate = 'tool_call_update', toolCallId = id_, title = 'Run make', kind = 'execute',
      status = 'in_progress', live = { tail = tail, bytes = #tail, elapsedMs = ms } })
  end
  chat.user(id, 'build')
  up({ sessionUpdate = 'tool_call', toolCallId = 't1', title = 'Run make', kind = 'execute', status = 'in_progress' })
  up({ sessionUpdate = 'tool_call', toolCallId = 't2', title = 'Run make', kind = 'execute', status = 'in_progress' })
  -- Silent for a few seconds: what it is likely doing.
  local quiet = { tail = '', bytes = 0, elapsedMs = 3200, note = 'building or starting, no output yet' }
  up({ sessionUpdate = 'tool_call_update', toolCallId = 't1', title = 'Run make', kind = 'execute',
    status = 'in_progress', live = quiet })
  h.contains(h.text(chat.buf(id)), '- ⋯ Run make · running 3 s\n  │ building or starting, no output yet…\n- ⋯ Run make',
    'a silent command says what it is likely doing')
  live('t1', 'cc a.c\n', 400)
  h.contains(h.text(chat.buf(id)), '- ⋯ Run make · running 0 s\n  │ cc a.c\n- ⋯ Run make', 'the first lines')
  local many = {}
  for i = 1, 12 do
    table.insert(many, 'line ' .. i)
  end
  live('t1', table.concat(many, '\n') .. '\r\n', 65400)
  h.contains(h.text(chat.buf(id)), '- ⋯ Run make · running 1 min 5 s\n  │ line 8\n  │ line 9\n  │ line 10\n'
    .. '  │ line 11\n  │ line 12\n- ⋯ Run make', 'the last five lines, the row below untouched')
  live('t2', 'other\n', 1000)
  up({ sessionUpdate = 'tool_call_update', toolCallId = 't1', title = 'Run make', status = 'completed',
    rawOutput = { output = 'ok' } })
  h.contains(h.text(chat.buf(id)), '## Reprise\n\n- ✓ Run make\n- ⋯ Run make · running 1 s\n  │ other',
    'replaced by one line')
  up({ sessionUpdate = 'tool_call_update', toolCallId = 't2', title = 'Run make', status = 'failed',
    rawOutput = { output = 'no' } })
  h.truthy(h.text(chat.buf(id)):find('## Reprise\n\n%- ✓ Run make\n%- ✗ Run make$'), h.text(chat.buf(id)))
  h.eq(chat.seconds(59499), '59 s', 'seconds')
  vim.cmd('bwipeout! ' .. chat.buf(id))
end)

h.test('chat history of a resumed session', function()
  local chat = require('reprise.chat')
  local id = 9998
  chat.history(id, 's9', {
    { turn = 1, kind = 'user', text = 'what is in a.txt?' },
    { turn = 1, kind = 'tool', toolCallId = 't1', title = 'Read a.txt', toolKind = 'read',
      status = 'completed', output = 'alpha' },
    { turn = 1, kind = 'agent', text = 'It says alpha.' },
    { turn = 2, kind = 'compaction', checkpoint = 1, title = 'Read a' },
  })
  local text = h.text(chat.buf(id))
  h.contains(text, '# Session s9 (resumed)', 'header')
  h.contains(text, '## You\n\nwhat is in a.txt?', 'the question')
  h.contains(text, '- ✓ Read a.txt', 'the tool call')
  h.contains(text, 'It says alpha.', 'the answer')
  h.contains(text, 'Context compacted · Checkpoint 1: Read a', 'the compaction')
  vim.cmd('bwipeout! ' .. chat.buf(id))
end)

h.test('chat: pins listed on a notice line when they change, rebuilt from a history', function()
  local chat = require('reprise.chat')
  local id = 9995
  local file = { id = 'p1', kind = 'file', label = 'src/app.ts', path = '/w/src/app.ts', tokens = 1234 }
  local text = { id = 'p2', kind = 'message', label = 'Always use tabs for indentation in this repository',
    text = 'Always use tabs for indentation in this repository, never spaces.', tokens = 14 }
  h.eq(chat.pin_name(file), 'app.ts', 'a file by its name')
  h.eq(chat.pin_name(text), '“Always use tabs for indentation in this…”', 'a text by its start')
  h.eq(chat.pins_line({}), '📌 Nothing pinned', 'none')
  local function up(u)
    chat.on_update(id, { sessionId = 's1', update = u })
  end
  chat.user(id, 'hi')
  up({ sessionUpdate = 'pins', pins = { file } })
  up({ sessionUpdate = 'pins', pins = { file } }) -- the same list again: no new line
  up({ sessionUpdate = 'pins', pins = { file, text } })
  up({ sessionUpdate = 'pins', pins = {} })
  local got = h.text(chat.buf(id))
  h.contains(got, '> 📌 Pinned: app.ts (1.2k tokens)\n\n> 📌 2 pinned, 1.2k tokens: app.ts (1.2k) · '
    .. '“Always use tabs for indentation in this…” (14)\n\n> 📌 Nothing pinned',
    'each change on its line, each count once')
  h.eq(select(2, got:gsub('app%.ts %(1%.2k tokens%)\n', '')), 1, 'an unchanged list is not repeated')
  h.eq(chat.pin_ids(), {}, 'no pins left')
  vim.cmd('bwipeout! ' .. chat.buf(id))
  chat.history(id, 's9', { { turn = 1, kind = 'user', text = 'hi' }, { turn = 1, kind = 'agent', text = 'Hello.' } },
    { file, text })
  h.contains(h.text(chat.buf(id)), 'Hello.\n\n> 📌 2 pinned, 1.2k tokens: app.ts (1.2k) · “Always', 'a resumed session')
  h.eq(chat.pin_ids(), { 'p1', 'p2' }, 'pin ids for completion')
  vim.cmd('bwipeout! ' .. chat.buf(id))
end)

h.test('chat: the plan where the agent wrote it, its progress in the winbar, rebuilt from a history', function()
  local chat = require('reprise.chat')
  local id = 9990
  local plan = {
    { description = 'Read the notes', status = 'completed' },
    { description = 'List the chores', status = 'in_progress' },
    { description = 'Ask about the bike', status = 'cancelled' },
    { description = 'Check the tools', status = 'pending' },
  }
  h.eq(chat.plan_lines(plan), { '> ☰ Plan · 1 of 4 done', '>   ✓ Read the notes', '>   ▶ **List the chores**',
    '>   ⊘ ~~Ask about the bike~~', '>   ○ Check the tools' }, 'the lines')
  h.eq(chat.plan_lines({}), { '> ☰ Plan cleared' }, 'cleared')
  h.eq(chat.plan_progress(plan), '☰ Plan 1/4: List the chores', 'the progress')
  h.eq(chat.plan_progress({}), '', 'no plan, no progress')
  chat.user(id, 'plan it')
  chat.on_update(id, { sessionId = 's1', update = { sessionUpdate = 'plan', entries = plan } })
  h.contains(h.text(chat.buf(id)), '> ☰ Plan · 1 of 4 done\n>   ✓ Read the notes', 'in the chat')
  -- The plan's lines are not the answer's text (a pin of the answer leaves them out).
  chat.on_update(id, { sessionId = 's1', update = { sessionUpdate = 'agent_message_chunk',
    content = { type = 'text', text = 'On it.' } } })
  local lines = vim.api.nvim_buf_get_lines(chat.buf(id), 0, -1, false)
  h.eq(chat.message_at(chat.buf(id), #lines), 'On it.', 'the answer alone')
  vim.cmd('bwipeout! ' .. chat.buf(id))
  local call = function(todos, status)
    return { turn = 1, kind = 'tool', toolCallId = 'c' .. status, title = 'Update the plan', toolKind = 'think',
      status = status, rawInput = { todos = todos }, output = 'Plan saved.' }
  end
  chat.history(id, 's9', { { turn = 1, kind = 'user', text = 'plan it' }, call(plan, 'completed'),
    call({ { description = 'x', status = 'in_progress' }, { description = 'y', status = 'in_progress' } }, 'failed') })
  local got = h.text(chat.buf(id))
  h.contains(got, '- ✓ Update the plan\n\n> ☰ Plan · 1 of 4 done', 'a resumed session')
  h.eq(select(2, got:gsub('☰ Plan ·', '')), 1, 'the refused plan is not shown')
  vim.cmd('bwipeout! ' .. chat.buf(id))
end)

h.test('context view: the plan and the notes', function()
  local context = require('reprise.context')
  local text = table.concat(context.render({ percent = 10, used = 400, size = 4000, compactAt = 0.7, blockAt = 0.95,
    state = { plan = { { description = 'Read', status = 'completed' },
      { description = 'Fix', status = 'in_progress' } },
      notes = { { key = 'rule', value = 'dès 50\nunités' } } } }), '\n')
  h.contains(text, '\nPlan · 1 of 2 done\n  completed    Read\n  in progress  Fix\n', 'the plan')
  h.contains(text, '\nNotes · 1, restated after each compaction (:Reprise forget {key})\n'
    .. '  rule                 dès 50 unités\n', 'the notes, one line each')
  h.truthy(not table.concat(context.render({ percent = 1, state = {} }), '\n'):find('Notes'), 'no notes, no section')
end)

h.test('context view: the pins, with their tokens', function()
  local context = require('reprise.context')
  local text = table.concat(context.render({ percent = 10, used = 400, size = 4000, compactAt = 0.7, blockAt = 0.95,
    pins = { { id = 'p1', kind = 'file', label = 'src/app.ts', path = 'src/app.ts', tokens = 1234 },
      { id = 'p2', kind = 'message', label = 'use tabs', tokens = 9 } }, pinnedTokens = 1243 }), '\n')
  h.contains(text, 'Pinned · 1.2k tokens, kept whatever is compacted\n     1.2k  file     src/app.ts  (p1)\n'
    .. '        9  message  use tabs  (p2)', 'the pins')
  h.truthy(not table.concat(context.render({ percent = 1 }), '\n'):find('Pinned'), 'no pins, no section')
end)

h.test('chat: the message under the cursor, its text and turn', function()
  local chat = require('reprise.chat')
  local id = 9994
  local function up(u)
    chat.on_update(id, { sessionId = 's1', update = u })
  end
  chat.user(id, 'Use tabs,\nnot spaces.')
  up({ sessionUpdate = 'agent_thought_chunk', content = { type = 'text', text = 'hmm' } })
  up({ sessionUpdate = 'tool_call', toolCallId = 't1', title = 'Read a.txt', kind = 'read', status = 'completed' })
  up({ sessionUpdate = 'agent_message_chunk', content = { type = 'text', text = 'Tabs it is.' } })
  up({ sessionUpdate = 'turn_end', stopReason = 'end_turn', turn = { calls = 2 } })
  chat.user(id, 'second')
  up({ sessionUpdate = 'agent_message_chunk', content = { type = 'text', text = 'Second answer.' } })
  local buf = chat.buf(id)
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local function row(pat)
    for i, l in ipairs(lines) do
      if l:find(pat, 1, true) then
        return i
      end
    end
    error(pat .. ' not in the chat')
  end
  local t, turn, session = chat.message_at(buf, row('not spaces.'))
  h.eq({ t, turn, session }, { 'Use tabs,\nnot spaces.', 1 }, 'the first question')
  t, turn = chat.message_at(buf, row('Read a.txt'))
  h.eq({ t, turn }, { 'Tabs it is.', 1 }, 'the first answer, without the thought, tool row and turn end')
  t, turn = chat.message_at(buf, row('Second answer.'))
  h.eq({ t, turn }, { 'Second answer.', 2 }, 'the second answer')
  h.eq(chat.first_session(id), 's1', 'the chat began with s1')
  chat.on_update(id, { sessionId = 's2', update = { sessionUpdate = 'agent_message_chunk',
    content = { type = 'text', text = 'x' } } })
  lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  t, turn, session = chat.message_at(buf, #lines)
  h.eq({ t, turn, session }, { nil, nil, nil }, 'no message header under a session header')
  vim.cmd('bwipeout! ' .. buf)
end)

-- lsp/testdata/resumed-session.json: what the real server sent live for a session (its updates,
-- and the outcomes of an undo refused, a keep and an undo) and the history a restarted server
-- gave for it (lsp/history_test.go writes and checks it).
h.test('a resumed session reads as the live one, with what became of each change', function()
  local f = assert(io.open(repo .. '/lsp/testdata/resumed-session.json'))
  local session = vim.fn.json_decode(f:read('*a'))
  f:close()
  local chat = require('reprise.chat')
  local live, resumed = 9996, 9997
  for _, step in ipairs(session.live) do
    if step.ask then
      chat.user(live, step.ask, nil)
    elseif step.update then
      chat.on_update(live, { sessionId = session.sessionId, update = step.update })
    end
  end
  chat.history(resumed, session.sessionId, session.history)
  local live_text, text = h.text(chat.buf(live)), h.text(chat.buf(resumed))
  h.contains(text, '- ✓ Edit notes.txt +1 −1\n- ✓ Write chores.md +3 −0\n', 'the edits with their counts')
  h.contains(text, 'Changes · 4 files\n- `chores.md` created +3 −0 · kept\n- `extra.md` created +1 −0\n'
    .. '- `notes.txt` +1 −1 · undone\n- `todo.txt` +1 −1 · not undone: changed since the agent last wrote it',
    'the changes')
  -- The live chat listed the changes at the turn's end, before the user kept or undid any.
  local header = '# Session ' .. session.sessionId .. ' (resumed)\n\n'
  h.eq(text:sub(1, #header), header, 'the header')
  local reviewed = text:sub(#header + 1):gsub(' · kept', ''):gsub(' · undone', ''):gsub(' · not undone: [^\n]*', '')
  h.eq(reviewed, live_text, 'the resumed chat, reviews aside, is the live one')
  vim.cmd('bwipeout! ' .. chat.buf(live))
  vim.cmd('bwipeout! ' .. chat.buf(resumed))
end)

h.test('approval: a floating window until answered, and the statusline waits', function()
  local approvals = require('reprise.approvals')
  local status = require('reprise.status')
  local params = { type = 2, message = 'run?\necho hi',
    actions = { { title = 'Allow once' }, { title = 'Always allow' }, { title = 'Reject' } } }
  local read_key = approvals.read_key
  local seen = {}
  local ok, err = pcall(function()
    local keys = { 'x', 'L' } -- an unknown key is ignored; keys are case-insensitive
    approvals.read_key = function()
      local p = approvals.pending()
      table.insert(seen, {
        text = h.text(p.buf),
        float = vim.api.nvim_win_get_config(p.win).relative ~= '',
        statusline = status.statusline(nil, nil),
        winhighlight = vim.wo[p.win].winhighlight,
      })
      if #seen == 1 then
        vim.api.nvim_win_close(p.win, true) -- closed unanswered: it opens again
      end
      return table.remove(keys, 1)
    end
    h.eq(approvals.handler(nil, params), { title = 'Always allow' }, 'answered by its key')
    h.eq(#seen, 2, 'keys read')
    h.truthy(seen[1].float, 'a floating window')
    -- On the editor's colours, not 0.7's default NormalFloat (Pmenu's magenta).
    h.eq(seen[1].winhighlight, 'NormalFloat:RepriseFloat,FloatBorder:RepriseFloatBorder', 'the float\'s colours')
    h.eq(vim.fn.synIDattr(vim.fn.synIDtrans(vim.fn.hlID('RepriseFloat')), 'name'), 'Normal', 'RepriseFloat is Normal')
    h.contains(seen[1].text, '  run?\n  echo hi\n', 'the message whole')
    h.contains(seen[1].text, '[a or 1] Allow once\n  [l or 2] Always allow\n  [r or 3] Reject', 'the actions and keys')
    h.eq(seen[1].statusline, 'waiting for your approval', 'statusline while it waits')
    h.eq(status.statusline(nil, nil), '', 'statusline once answered')
    h.eq(approvals.pending(), nil, 'nothing pending')
    h.eq(#vim.tbl_filter(function(w)
      return vim.api.nvim_win_get_config(w).relative ~= ''
    end, vim.api.nvim_list_wins()), 0, 'the window closed')
    approvals.read_key = function()
      return '\3'
    end
    h.eq(approvals.handler(nil, params), vim.NIL, '<C-c> rejects')
    approvals.read_key = function()
      return '3'
    end
    h.eq(approvals.handler(nil, params), { title = 'Reject' }, 'answered by its number')
  end)
  approvals.read_key = read_key
  assert(ok, err)
end)

h.test('approval: a question asked while another waits is shown once that one is answered', function()
  local approvals = require('reprise.approvals')
  local got = {}
  approvals.show('first?', { 'Allow once', 'Reject' }, function(c)
    table.insert(got, 'first: ' .. tostring(c))
  end)
  approvals.show('second?', { 'Allow once', 'Reject' }, function(c)
    table.insert(got, 'second: ' .. tostring(c))
  end)
  h.eq(approvals.pending().message, 'first?', 'the first on screen')
  approvals.answer('Allow once')
  h.eq(approvals.pending().message, 'second?', 'then the second')
  approvals.answer(nil)
  h.eq(got, { 'first: Allow once', 'second: nil' }, 'each answered once')
  h.eq(approvals.pending(), nil, 'nothing left')
end)

h.test('approval: the MCP questions, their actions and keys', function()
  local approvals = require('reprise.approvals')
  h.eq(approvals.buttons({ 'Allow once', 'Always allow', 'Reject' }), '&Allow once\nA&lways allow\n&Reject', 'buttons')
  h.eq(approvals.buttons({ 'Start it', 'Do not start' }), '&Start it\n&Do not start', 'buttons')
  local lines = approvals.render('The workspace\'s .vscode/mcp.json declares the MCP server "x". Start it?',
    { 'Start it', 'Do not start' })
  h.contains(table.concat(lines, '\n'), '[s or 1] Start it\n  [d or 2] Do not start', 'the server\'s actions')
end)

h.test('prompt buffer: <CR> sends what it holds through the ask path', function()
  local chat = require('reprise.chat')
  local actions = require('reprise.actions')
  local ask, sent = actions.ask, {}
  local ok, err = pcall(function()
    actions.ask = function(text)
      table.insert(sent, text)
    end
    local id = 9997
    local win = chat.open(id, '/w')
    local prompt = h.truthy(chat.prompt(id), 'a prompt buffer')
    local pwin = vim.fn.bufwinid(prompt)
    h.truthy(pwin ~= -1, 'shown under the chat')
    h.eq(vim.fn.win_screenpos(pwin)[2], vim.fn.win_screenpos(win)[2], 'in the chat\'s column')
    h.eq(vim.wo[pwin].statusline, chat.prompt_hint, 'the keys shown')
    vim.api.nvim_set_current_win(pwin)
    vim.api.nvim_buf_set_lines(prompt, 0, -1, false, { 'what does', 'this do?' })
    vim.cmd('execute "normal \\<CR>"')
    h.eq(sent, { 'what does\nthis do?' }, 'sent by <CR>')
    h.eq(vim.api.nvim_buf_get_lines(prompt, 0, -1, false), { '' }, 'emptied')
    vim.cmd('execute "normal \\<CR>"')
    h.eq(#sent, 1, 'nothing sent when empty')
    vim.cmd('silent only')
    vim.cmd('bwipeout! ' .. chat.buf(id) .. ' ' .. prompt)
  end)
  actions.ask = ask
  assert(ok, err)
end)

h.test('buffers the agent changed are reloaded; unsaved edits are kept with a warning', function()
  local buffers = require('reprise.buffers')
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, 'p')
  local clean, dirty = dir .. '/clean.txt', dir .. '/dirty.txt'
  vim.fn.writefile({ 'old' }, clean)
  vim.fn.writefile({ 'old' }, dirty)
  vim.cmd('edit ' .. vim.fn.fnameescape(clean))
  local cbuf = vim.api.nvim_get_current_buf()
  vim.cmd('split ' .. vim.fn.fnameescape(dirty))
  local dbuf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(dbuf, 0, -1, false, { 'mine' })
  vim.fn.writefile({ 'new from the agent' }, clean)
  vim.fn.writefile({ 'new from the agent' }, dirty)
  local notify, notes = vim.notify, {}
  vim.notify = function(msg, level)
    table.insert(notes, { msg = msg, level = level })
  end
  local ok, err = pcall(function()
    local u = { sessionUpdate = 'tool_call_update', toolCallId = 't', kind = 'edit', status = 'completed',
      content = { { type = 'diff', path = clean, oldText = 'old\n', newText = 'new from the agent\n' },
        { type = 'diff', path = dirty, oldText = 'old\n', newText = 'new from the agent\n' } } }
    buffers.on_update(dir, u)
    h.eq(vim.api.nvim_buf_get_lines(cbuf, 0, -1, false), { 'new from the agent' }, 'the clean buffer reloaded')
    h.eq(vim.bo[cbuf].modified, false, 'and not modified')
    h.eq(vim.api.nvim_buf_get_lines(dbuf, 0, -1, false), { 'mine' }, 'the unsaved edits kept')
    h.eq(#notes, 1, 'one warning')
    h.eq(notes[1].level, vim.log.levels.WARN, 'a warning')
    h.contains(notes[1].msg, 'dirty.txt was changed by the agent; your buffer has unsaved edits', 'the warning')
    -- A command changed the files: the buffers under the workspace are checked against the disk.
    vim.fn.writefile({ 'from a command', 'two lines' }, clean)
    vim.fn.writefile({ 'from a command', 'two lines' }, dirty)
    buffers.on_update(dir, { sessionUpdate = 'tool_call_update', toolCallId = 'c', kind = 'execute',
      status = 'completed' })
    h.eq(vim.api.nvim_buf_get_lines(cbuf, 0, -1, false), { 'from a command', 'two lines' }, 'reloaded after a command')
    h.eq(vim.api.nvim_buf_get_lines(dbuf, 0, -1, false), { 'mine' }, 'still the unsaved edits')
    h.eq(#notes, 2, 'warned again')
    h.contains(notes[2].msg, 'dirty.txt changed on disk; your buffer has unsaved edits', 'the second warning')
  end)
  vim.notify = notify
  vim.cmd('silent only')
  vim.cmd('bwipeout! ' .. cbuf .. ' ' .. dbuf)
  vim.fn.delete(dir, 'rf')
  assert(ok, err)
end)

-- What a project file is (trust.lua), decided in a given context.
h.test('trust: project files and user files', function()
  local trust = require('reprise.trust')
  local ctx = { workspaces = { '/src/repo' }, user = { '/home/u/.config/nvim', '/home/u/init.lua' } }
  local cases = {
    { '/src/repo/.nvim.lua', true },
    { '/src/repo/.nvimrc', true },
    { '/src/repo/.exrc', true },
    { '/src/repo/.lazy.lua', true },
    { '/elsewhere/.nvim.lua', true }, -- by name, wherever ('exrc' also reads parent folders)
    { '/src/repo/scripts/nvim/setup.lua', true },
    { '/src/repository/x.lua', false },
    { '/home/u/.config/nvim/init.lua', false },
    { '/home/u/.config/nvim/lua/plugins/reprise.lua', false },
    { '/home/u/init.lua', false },
    { '/usr/share/nvim/runtime/lua/vim/lsp.lua', false },
  }
  for _, c in ipairs(cases) do
    h.eq(trust.is_project_file(c[1], ctx), c[2], c[1])
  end
  local inside = { workspaces = { '/home/u/.config/nvim' }, user = { '/home/u/.config/nvim' } }
  h.eq(trust.is_project_file('/home/u/.config/nvim/init.lua', inside), false, 'the config folder as the workspace')
end)

h.test('trust: a project file cannot set cmd, cmd_env, the root, allow, sandbox, allowNetwork or mcpServers', function()
  local config = require('reprise.config')
  local saved, notify = config.options, vim.notify
  local notes = {}
  vim.notify = function(msg, level)
    table.insert(notes, { msg = msg, level = level })
  end
  local ok, err = pcall(function()
    local ws = vim.fn.tempname()
    vim.fn.mkdir(ws .. '/tools', 'p')
    local cwd = vim.fn.getcwd()
    vim.cmd('cd ' .. vim.fn.fnameescape(ws))
    local user = {
      cmd = { '/opt/reprise', 'serve', '--stdio' },
      cmd_env = { FROM = 'user' },
      root_markers = { '.git' },
      settings = { allow = { 'go test' }, sandbox = 'workspace-write', allowNetwork = false, model = 'user-model',
        mcpServers = { mine = { type = 'stdio', command = 'my-mcp' } } },
    }
    local hostile = 'require("reprise.config").set({ cmd = { "/tmp/evil" }, cmd_env = { FROM = "project" }, '
      .. 'root_dir = "/", root_markers = { ".bashrc" }, chat = { width = 60 }, '
      .. 'settings = { allow = { "*" }, sandbox = "off", allowNetwork = true, model = "project-model", '
      .. 'mcpServers = { mine = { type = "stdio", command = "/tmp/evil" }, '
      .. 'extra = { type = "http", url = "http://x" } } } })'
    -- The user's configuration: a file of the config folder, applied whole.
    assert(loadstring('require("reprise.config").set(...)', '@' .. vim.fn.stdpath('config') .. '/init.lua'))(user)
    h.eq(config.options.cmd, user.cmd, 'user cmd')
    h.eq(#notes, 0, 'no warning for the user configuration')
    local function check(where)
      local o = config.options
      h.eq(o.cmd, user.cmd, where .. ': cmd')
      h.eq(o.cmd_env, user.cmd_env, where .. ': cmd_env')
      h.eq(o.root_dir, nil, where .. ': root_dir')
      h.eq(o.root_markers, user.root_markers, where .. ': root_markers')
      h.eq(o.settings.allow, user.settings.allow, where .. ': allow')
      h.eq(o.settings.sandbox, 'workspace-write', where .. ': sandbox')
      h.eq(o.settings.allowNetwork, false, where .. ': allowNetwork')
      h.eq(o.settings.mcpServers, user.settings.mcpServers, where .. ': mcpServers')
      -- The rest of the call applies: only what a project may not choose is ignored; its model
      -- goes out as the project's, which the server holds to the user's when dearer.
      h.eq(o.settings.model, 'user-model', where .. ': model (the user\'s level)')
      h.eq(o.project_settings and o.project_settings.model, 'project-model', where .. ': the project\'s model')
      h.eq(o.chat.width, 60, where .. ': chat.width')
      local cost = table.remove(notes)
      h.contains(cost and cost.msg or '', "model sent as the project's settings", where .. ': the cost warning')
      local note = table.remove(notes)
      h.truthy(note and note.level == vim.log.levels.WARN, where .. ': a warning')
      h.contains(note.msg, 'is a project file: ignored cmd, cmd_env, root_dir, root_markers, settings.allow, '
        .. 'settings.sandbox, settings.allowNetwork, settings.mcpServers', where .. ': warning')
      config.set(user)
    end
    -- An exrc file by its name (Neovim 0.11+ loads .nvim.lua as a file chunk).
    local exrc = ws .. '/.nvim.lua'
    assert(loadstring(hostile, '@' .. exrc))()
    check('.nvim.lua')
    -- A function the exrc file defined and scheduled still counts as the exrc file.
    local later = assert(loadstring('return function() ' .. hostile .. ' end', '@' .. exrc))()
    later()
    check('a function defined in .nvim.lua')
    -- lazy.nvim's local spec, loaded from a string named after the file.
    assert(loadstring(hostile, '.lazy.lua'))()
    check('.lazy.lua')
    -- Any Lua file of the workspace.
    local f = assert(io.open(ws .. '/tools/setup.lua', 'w'))
    f:write(hostile)
    f:close()
    dofile(ws .. '/tools/setup.lua')
    check('a Lua file of the workspace')
    -- Vimscript sourcing a file of the workspace (a .nvimrc running :lua).
    f = assert(io.open(ws .. '/tools/setup.vim', 'w'))
    f:write('lua ' .. hostile .. '\n')
    f:close()
    vim.cmd('source ' .. vim.fn.fnameescape(ws .. '/tools/setup.vim'))
    check('a Vimscript file of the workspace')
    -- Neovim 0.12's exrc loader running a .nvimrc's `:lua` (a chunk without a file name).
    local runtime = vim.env.VIMRUNTIME
    local loader = assert(loadstring('local chunk = ...; chunk()', '@' .. runtime .. '/lua/vim/_core/exrc.lua'))
    loader(assert(loadstring(hostile, ':lua')))
    check("Neovim's exrc loader")
    -- Spending settings from a project file go out as the project's: the user's stay in
    -- options.settings (initializationOptions), the project's are kept apart.
    config.set(vim.tbl_deep_extend('force', user, { settings = { sessionTokenCap = 1000, maxCostUSD = 0.5 } }))
    assert(loadstring('require("reprise.config").set({ settings = { sessionTokenCap = 1e9, maxCostUSD = 0, '
      .. 'prices = { m = { input = 0 } } } })', '@' .. exrc))()
    h.eq(config.options.settings.sessionTokenCap, 1000, "the user's sessionTokenCap kept")
    h.eq(config.options.settings.maxCostUSD, 0.5, "the user's maxCostUSD kept")
    h.eq(config.options.settings.prices, nil, 'no prices at the user level')
    h.eq(config.options.project_settings, { sessionTokenCap = 1e9, maxCostUSD = 0, prices = { m = { input = 0 } } },
      "the project's, apart")
    local note = table.remove(notes)
    h.contains(note and note.msg or '', "sessionTokenCap, maxCostUSD, prices sent as the project's settings", 'warning')
    config.set(user)
    h.eq(config.options.project_settings, nil, "the user's call replaces the project's")
    -- A project call without protected options says nothing and changes none of them.
    assert(loadstring('require("reprise.config").set({ chat = { width = 70 } })', '@' .. exrc))()
    h.eq(#notes, 0, 'no warning without protected options')
    h.eq(config.options.cmd, user.cmd, 'cmd kept by a project call that does not name it')
    h.eq(config.options.settings.allow, user.settings.allow, 'allow kept by a project call that does not name it')
    vim.cmd('cd ' .. vim.fn.fnameescape(cwd))
  end)
  config.options, vim.notify = saved, notify
  if not ok then
    error(err, 0)
  end
end)

h.test(':checkhealth reprise without the binary says how to install it', function()
  local config = require('reprise.config')
  local saved = config.options
  local missing = vim.fn.tempname() .. '/reprise'
  config.options = vim.tbl_extend('force', vim.deepcopy(saved), { cmd = { missing, 'serve', '--stdio' } })
  local ok, err = pcall(function()
    vim.cmd('silent checkhealth reprise')
    local text = h.text(vim.api.nvim_get_current_buf())
    vim.cmd('tabclose')
    h.truthy(text:find('ERROR'), 'an error:\n' .. text)
    h.contains(text, 'reprise not found', 'what is missing')
    h.contains(text, 'https://github.com/reprise-dev/reprise/releases', 'release archives')
    h.contains(text, 'go install github.com/reprise-dev/reprise/cmd/reprise@latest', 'go install')
    h.contains(text, "setup({ cmd = { '/path/to/reprise', 'serve', '--stdio' } })", 'the cmd option')
    h.truthy(not text:find('server starts'), 'no server started:\n' .. text)
  end)
  config.options = saved
  if not ok then
    error(err, 0)
  end
end)
