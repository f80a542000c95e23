import { describe, expect, it } from 'vitest';
import { highlight } from '../../src/chat/highlight';
import { exitCode, inputView, renderItems } from '../../src/chat/render';
import { Action, activity, ChatState, initialState, reduce, seconds } from '../../src/chat/state';
import { mcpRow } from '../../src/mcp';
import { humanTime } from '../../src/meter';
import type { Update } from '../../src/protocol';
import { withStoredKey } from '../../src/settings';

const up = (update: Update, at = 0): Action => ({ type: 'update', params: { sessionId: 's1', update }, at });
const run = (...as: Action[]): ChatState => as.reduce(reduce, initialState('s1'));
const render = (s: ChatState) => renderItems(s, (t) => t, new Set());
const retry = (attempt: number, at: number): Action => up({ sessionUpdate: 'retry', retry: { attempt, delay: 4e9, error: 'model overloaded (503)', discard: false } }, at);

describe('activity', () => {
  it('says thinking, then writing, then which tool runs and for how long', () => {
    let s = run({ type: 'ask', text: 'hi' });
    expect(activity(s, 0)?.text).toBe('Thinking…');
    s = reduce(s, up({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'Hel' } }));
    expect(activity(s, 0)).toEqual({ kind: 'streaming', text: 'Writing the answer…' });
    s = reduce(s, up({ sessionUpdate: 'tool_call', toolCallId: 't', title: 'Run go test', kind: 'execute', status: 'in_progress' }, 10_000));
    expect(activity(s, 75_000)?.text).toBe('Running go test · 1 min 5 s');
    expect(activity(s, 12_000, true)?.text).toBe('Running go test · 2 s · compacting the context in the background');
    s = reduce(s, up({ sessionUpdate: 'turn_end', stopReason: 'end_turn' }));
    expect(activity(s, 0)).toBeUndefined();
    expect(activity(s, 0, true)?.text).toBe('Compacting the context in the background…');
  });

  it('counts down to the next retry, on one line however many retries come', () => {
    const s = run({ type: 'ask', text: 'hi' }, retry(2, 1000), retry(3, 6000), retry(4, 11_000));
    expect(s.items.filter((i) => i.type === 'retry')).toHaveLength(1);
    expect(activity(s, 12_000)?.text).toBe('Retrying in 3 s (attempt 4): model overloaded (503)');
    expect(activity(s, 15_000)?.text).toBe('Retrying (attempt 4): model overloaded (503)');
    expect(render(s)).toContain('The model call was retried 3 times: model overloaded (503)');
  });

  it('writes durations as people read them', () => {
    expect([seconds(400), seconds(4000), seconds(60_000), seconds(125_000)]).toEqual(['0 s', '4 s', '1 min', '2 min 5 s']);
  });
});

describe('a stopped turn', () => {
  it('offers Retry and Open settings on the last stop only', () => {
    const stopped = run({ type: 'ask', text: 'a' }, up({ sessionUpdate: 'turn_end', stopReason: 'error', error: 'model unavailable' }));
    const html = render(stopped);
    expect(html).toContain('Stopped by an error<div class="detail">model unavailable</div>');
    expect(html).toContain('data-next="retry"');
    expect(html).toContain('data-next="settings"');
    const again = reduce(stopped, { type: 'ask', text: 'b' });
    expect(render(again)).not.toContain('data-next');
  });
  it('offers to enter the API key when the key is missing', () => {
    const s = run({ type: 'ask', text: 'a' }, { type: 'error', text: 'the model is unavailable: set GEMINI_API_KEY' });
    expect(render(s)).toContain('data-next="apiKey"');
  });
  it('gives the server a stored key only when its environment has none', () => {
    expect(withStoredKey({ PATH: '/bin' }, 'k').GEMINI_API_KEY).toBe('k');
    expect(withStoredKey({ GOOGLE_API_KEY: 'env' }, 'k').GEMINI_API_KEY).toBeUndefined();
    expect(withStoredKey({}, undefined)).toEqual({});
  });
});

describe('tool rows', () => {
  it('show a command as a command line and other inputs one field a line', () => {
    expect(inputView({ command: 'go test ./...' })).toBe('<pre class="cmd">$ go test ./...</pre>');
    const html = inputView({ path: 'a.go', old: 'x', new: 'line 1\nline 2' });
    expect(html).toContain('<span class="key">path</span> <code>a.go</code>');
    expect(html).toContain('<span class="key">new</span><pre>line 1\nline 2</pre>');
    expect(html).not.toContain('{');
  });
  it('tell a command that reported failures from a tool that broke', () => {
    expect(exitCode('execute', 'failed', { output: '--- FAIL: TestX\nFAIL\nexit status 1' })).toBe(1);
    expect(exitCode('execute', 'failed', { output: 'could not start: no such file' })).toBeUndefined();
    expect(exitCode('execute', 'failed', { output: 'exit status 1', refused: true })).toBeUndefined();
    expect(exitCode('read', 'failed', { output: 'exit status 1' })).toBeUndefined();
  });
});

describe('code blocks', () => {
  it('colour keywords, strings, numbers and comments, escaped', () => {
    expect(highlight('const a = "<b>"; // note', 'ts')).toBe('<span class="tk-keyword">const</span> a = <span class="tk-string">&quot;&lt;b&gt;&quot;</span>; <span class="tk-comment">// note</span>');
    expect(highlight('x = 42 # why', 'python')).toBe('x = <span class="tk-number">42</span> <span class="tk-comment"># why</span>');
  });
});

describe('labels', () => {
  it('an MCP server row says its state, its tools and their cost', () => {
    const row = mcpRow({ name: 'everything', source: 'user settings', type: 'stdio', state: 'running', tokens: 1200, tools: [{ name: 'everything__echo', tool: 'echo', tokens: 80 }, { name: 'x', tool: 'x', tokens: 1, deferred: true }] });
    expect(row).toEqual({ label: '$(pass-filled) everything', description: 'running · 2 tools, 1 found on demand · 1.2k tokens a request', detail: 'stdio · from user settings', name: 'everything' });
    expect(mcpRow({ name: 'bad', source: 'mcp.json', type: 'stdio', state: 'failed', error: 'exited 1', tokens: 0, tools: [] }).detail).toBe('stdio · from mcp.json · exited 1');
  });
  it('times read as people read them', () => {
    const now = Date.parse('2026-12-01T12:00:00Z');
    expect(humanTime('2026-12-01T11:59:30Z', now)).toBe('just now');
    expect(humanTime('2026-12-01T11:30:00Z', now)).toBe('30 min ago');
    expect(humanTime('2026-12-01T09:00:00Z', now)).toBe('3 h ago');
    expect(humanTime('2026-11-20T09:05:00Z', now)).toMatch(/^Nov 20, \d\d:05$/);
    expect(humanTime('not a time', now)).toBe('not a time');
  });
});
