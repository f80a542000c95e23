// Subagents: a task call's row takes its subagent's progress from the subagent updates (live, or
// rebuilt from the history), renders it with its figures, a Stop button while it runs and its
// transcript once saved, and the activity line says what it does.
import { describe, expect, it } from 'vitest';
import { Action, activity, ChatState, fromHistory, initialState, reduce } from '../../src/chat/state';
import { renderItems } from '../../src/chat/render';
import type { HistoryEntry, Subagent, Totals, Update } from '../../src/protocol';

const up = (update: Update): Action => ({ type: 'update', params: { sessionId: 's1', update }, at: 1000 });
const run = (...actions: Action[]): ChatState => actions.reduce(reduce, initialState('s1'));
const totals = (input: number, cached: number, cost: string): Totals => ({ inputTokens: input, cachedTokens: cached, outputTokens: 40, cost: { amount: 0.001, currency: 'USD', text: cost } });
const sub = (over: Partial<Subagent>): Subagent => ({
  subagentId: '20261207-120000-abcdef',
  parentId: 's1',
  description: 'find the <login> handler',
  model: 'gemini-3.5-flash-lite',
  status: 'running',
  calls: 0,
  totals: totals(0, 0, '$0.0000'),
  ...over,
});
const call: Update = { sessionUpdate: 'tool_call', toolCallId: 't1', title: 'Subagent: find the <login> handler', kind: 'other', status: 'in_progress', rawInput: { description: 'find the <login> handler', prompt: 'Find where the login form is handled.' } };
const md = (s: string) => s;

describe('a subagent in the chat', () => {
  it('goes on its task call row, each update replacing the last', () => {
    let s = run({ type: 'ask', text: 'where?' }, up(call), up({ sessionUpdate: 'subagent', toolCallId: 't1', subagent: sub({}) }));
    s = reduce(s, up({ sessionUpdate: 'subagent', toolCallId: 't1', subagent: sub({ calls: 2, tool: 'Read auth/login.go', totals: totals(5210, 1200, '$0.0012') }) }));
    const row = s.items.find((it) => it.type === 'tool');
    expect(row).toMatchObject({ id: 't1', subagent: { calls: 2, tool: 'Read auth/login.go' } });
    expect(activity(s, 5000)?.text).toBe('Subagent «find the <login> handler»: Read auth/login.go… · 2 calls · 4 s');
    // An update for no known call is dropped.
    expect(reduce(s, up({ sessionUpdate: 'subagent', toolCallId: 'nope', subagent: sub({}) }))).toEqual(s);
    const html = renderItems(s, md, new Set(['tool-t1']));
    expect(html).toContain('class="tool subagent running"');
    expect(html).toContain('find the &lt;login&gt; handler');
    expect(html).not.toContain('<login>');
    expect(html).toContain('gemini-3.5-flash-lite · 2 calls · 5.2k in (1.2k cached) · $0.0012');
    expect(html).toContain('Read auth/login.go');
    expect(html).toContain('data-subagent-stop="20261207-120000-abcdef"');
    expect(html).not.toContain('data-subagent-transcript');
    expect(html).toContain('Find where the login form is handled.');
  });

  it('ends with its report, its transcript and no Stop button', () => {
    const done = sub({ status: 'completed', calls: 3, totals: totals(8000, 4000, '$0.0020'), result: 'REPORT', saved: true });
    const s = run(
      { type: 'ask', text: 'where?' },
      up(call),
      up({ sessionUpdate: 'tool_call_update', toolCallId: 't1', status: 'completed', rawOutput: { output: 'Login in auth/login.go' } }),
      up({ sessionUpdate: 'subagent', toolCallId: 't1', subagent: done }),
    );
    const html = renderItems(s, md, new Set(['tool-t1']));
    expect(html).toContain('class="tool subagent completed"');
    expect(html).toContain('data-subagent-transcript="20261207-120000-abcdef"');
    expect(html).not.toContain('data-subagent-stop');
    expect(html).toContain('<div class="label">Report</div><pre>Login in auth/login.go</pre>');
  });

  it('is rebuilt from the history under its call', () => {
    const entries: HistoryEntry[] = [
      { turn: 1, kind: 'user', text: 'where?' },
      { turn: 1, kind: 'tool', toolCallId: 't1', title: call.title, toolKind: 'other', status: 'failed', rawInput: call.rawInput, output: 'the user stopped this subagent', refused: true,
        subagent: sub({ status: 'cancelled', calls: 1, saved: true }) },
      { turn: 1, kind: 'turn_end', stopReason: 'end_turn', calls: 3 },
    ];
    const s = fromHistory('s1', entries);
    const html = renderItems(s, md, new Set(['tool-t1']));
    expect(html).toContain('class="tool subagent cancelled"');
    expect(html).toContain('<div class="label">Stopped</div><pre>the user stopped this subagent</pre>');
  });
});
