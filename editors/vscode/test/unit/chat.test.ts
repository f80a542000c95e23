import { describe, expect, it } from 'vitest';
import { Action, ChatState, initialState, reduce, userTurns } from '../../src/chat/state';
import { renderItems } from '../../src/chat/render';
import type { Update } from '../../src/protocol';

const up = (update: Update): Action => ({ type: 'update', params: { sessionId: 's1', update } });
const run = (...actions: Action[]): ChatState => actions.reduce(reduce, initialState('s1'));

describe('reduce', () => {
  it('joins streamed chunks into one message and ends the turn', () => {
    const s = run(
      { type: 'ask', text: 'hi' },
      up({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: 'think' } }),
      up({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'Hel' } }),
      up({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'lo' } }),
      up({ sessionUpdate: 'turn_end', stopReason: 'end_turn' }),
    );
    expect(s.items).toEqual([
      { type: 'user', text: 'hi' },
      { type: 'thought', text: 'think' },
      { type: 'agent', text: 'Hello' },
      { type: 'end', stopReason: 'end_turn', error: undefined },
    ]);
    expect(s.running).toBe(false);
  });

  it('updates a tool call in place', () => {
    const s = run(
      { type: 'ask', text: 'read' },
      up({ sessionUpdate: 'tool_call', toolCallId: 't1', title: 'read_file a.txt', kind: 'read', status: 'in_progress', rawInput: { path: 'a.txt' } }),
      up({ sessionUpdate: 'tool_call_update', toolCallId: 't1', status: 'completed', rawOutput: { output: 'abc' } }),
    );
    expect(s.items[1]).toEqual({
      type: 'tool', id: 't1', title: 'read_file a.txt', kind: 'read', status: 'completed', input: { path: 'a.txt' }, output: { output: 'abc' },
    });
    expect(s.running).toBe(true);
  });

  it('replaces a running compaction marker with its outcome', () => {
    const cp = { n: 1, title: 'List', trigger: 'manual', replaced: 4, tokensBefore: 3000, tokensAfter: 900 };
    const s = run(
      up({ sessionUpdate: 'compaction', compaction: { state: 'running', trigger: 'manual' } }),
      up({ sessionUpdate: 'compaction', compaction: { state: 'done', trigger: 'manual', checkpoint: cp } }),
    );
    expect(s.items).toEqual([{ type: 'compaction', state: 'done', trigger: 'manual', note: undefined, checkpoint: cp }]);
  });

  it('drops the text of a discarded call on retry', () => {
    const s = run(
      { type: 'ask', text: 'q' },
      up({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'half' } }),
      up({ sessionUpdate: 'retry', retry: { attempt: 1, delay: 1e9, error: '503', discard: true } }),
      up({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'whole' } }),
    );
    expect(s.items.map((i) => i.type)).toEqual(['user', 'retry', 'agent']);
    expect(s.items[2]).toEqual({ type: 'agent', text: 'whole' });
  });

  it('keeps the input state untouched', () => {
    const s0 = run({ type: 'ask', text: 'q' });
    const copy = JSON.stringify(s0);
    reduce(s0, up({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'x' } }));
    expect(JSON.stringify(s0)).toBe(copy);
  });

  it('numbers the user turns from 1', () => {
    const s = run({ type: 'ask', text: 'a' }, up({ sessionUpdate: 'turn_end', stopReason: 'end_turn' }), { type: 'ask', text: 'b' });
    expect(userTurns(s)).toEqual([{ turn: 1, text: 'a' }, { turn: 2, text: 'b' }]);
  });
});

describe('render', () => {
  it('escapes user text and links checkpoints', () => {
    const cp = { n: 2, title: 'Fix <bug>', trigger: 'auto', replaced: 4, tokensBefore: 3000, tokensAfter: 900 };
    const s = run({ type: 'ask', text: '<b>x</b>' }, up({ sessionUpdate: 'compaction', compaction: { state: 'done', trigger: 'auto', checkpoint: cp } }));
    const html = renderItems(s, (t) => t, new Set());
    expect(html).toContain('&lt;b&gt;x&lt;/b&gt;');
    expect(html).toContain('data-n="2">Checkpoint 2: Fix &lt;bug&gt;</a>');
    expect(html).toContain('3k → 900 tokens');
  });
  it('says what a clearing did, apart from a compaction', () => {
    const cp = { n: 3, title: '12 tool results cleared', trigger: 'auto', replaced: 12, tokensBefore: 40000, tokensAfter: 8600, cleared: 12 };
    const s = run(up({ sessionUpdate: 'compaction', compaction: { state: 'done', trigger: 'auto', checkpoint: cp } }));
    const html = renderItems(s, (t) => t, new Set());
    expect(html).toContain('12 old tool results cleared, 31.4k tokens freed; the model reads them again on demand');
    expect(html).toContain('data-n="3">Checkpoint 3</a>');
    expect(html).not.toContain('Context compacted');
  });
  it('keeps open details open', () => {
    const s = run(up({ sessionUpdate: 'tool_call', toolCallId: 't1', title: 'ls', kind: 'execute', status: 'in_progress' }));
    expect(renderItems(s, (t) => t, new Set(['tool-t1']))).toContain('data-key="tool-t1" open');
    expect(renderItems(s, (t) => t, new Set())).not.toContain(' open');
  });
});

describe('a running command', () => {
  const call = up({ sessionUpdate: 'tool_call', toolCallId: 't1', title: 'Run make', kind: 'execute', status: 'in_progress', rawInput: { command: 'make' } });
  const live = (tail: string, bytes: number, elapsedMs: number) =>
    up({ sessionUpdate: 'tool_call_update', toolCallId: 't1', title: 'Run make', kind: 'execute', status: 'in_progress', live: { tail, bytes, elapsedMs } });
  const tool = (s: ChatState) => s.items.find((it) => it.type === 'tool') as Extract<ChatState['items'][number], { type: 'tool' }>;

  it('keeps the latest output so far, and drops it when the result comes', () => {
    const s1 = run({ type: 'ask', text: 'build' }, call, live('tick-1\n', 7, 400), live('tick-1\ntick-2\n', 14, 1300));
    expect(tool(s1).live).toEqual({ tail: 'tick-1\ntick-2\n', bytes: 14, elapsedMs: 1300 });
    expect(tool(s1).output).toBeUndefined(); // no empty result meanwhile
    const s2 = reduce(s1, up({ sessionUpdate: 'tool_call_update', toolCallId: 't1', status: 'completed', rawOutput: { output: 'tick-1\ntick-2\nexit status 0' } }));
    expect(tool(s2).live).toBeUndefined();
    expect(tool(s2).output).toEqual({ output: 'tick-1\ntick-2\nexit status 0' });
  });

  it('shows the output so far under its row, closed or open, with the running time', () => {
    const s = run({ type: 'ask', text: 'build' }, call, live('a <b>\nlast line\n', 2_000_000, 12_400));
    const html = renderItems(s, (t) => t, new Set());
    expect(html).toContain('<span class="elapsed">running · 12 s</span>');
    // After the details element, so that a closed row shows it too.
    expect(html).toMatch(/<\/details><div class="live"[^>]*><div class="note">… 2M bytes before<\/div><pre>a &lt;b&gt;\nlast line\n<\/pre><\/div>/);
  });

  it('says what a command silent for a few seconds is likely doing, not an empty box', () => {
    const s = run({ type: 'ask', text: 'build' }, call,
      up({ sessionUpdate: 'tool_call_update', toolCallId: 't1', status: 'in_progress', live: { tail: '', bytes: 0, elapsedMs: 4000, note: 'building or starting, no output yet' } }));
    const html = renderItems(s, (t) => t, new Set());
    expect(html).toContain('<div class="note quiet">building or starting, no output yet…</div>');
    expect(html).not.toContain('<pre></pre>');
  });

  it('is replaced by the result when the call completes', () => {
    const s = run({ type: 'ask', text: 'build' }, call, live('tick-1\n', 7, 400),
      up({ sessionUpdate: 'tool_call_update', toolCallId: 't1', status: 'failed', rawOutput: { output: 'tick-1\nexit status 2' } }));
    const html = renderItems(s, (t) => t, new Set(['tool-t1']));
    expect(html).not.toContain('class="live"');
    expect(html).not.toContain('running ·');
    expect(html).toContain('<pre>tick-1\nexit status 2</pre>');
  });

  it('a test run that found failures says its exit status and verdict, not a broken tool', () => {
    const s = run({ type: 'ask', text: 'test' }, call,
      up({ sessionUpdate: 'tool_call_update', toolCallId: 't1', status: 'failed', rawOutput: { output: 'FAIL\tx 0.01s\nexit status 1', verdict: 'FAIL x <0.01s>' } }));
    const html = renderItems(s, (t) => t, new Set());
    expect(html).toContain('<span class="exit">exit 1 · FAIL x &lt;0.01s&gt;</span>');
    expect(html).toContain('class="tool execute exited"');
  });

  it('says nothing of bytes before when the whole output is shown', () => {
    const s = run({ type: 'ask', text: 'build' }, call, live('é\n', 3, 100));
    expect(renderItems(s, (t) => t, new Set())).not.toContain('bytes before');
  });
});
