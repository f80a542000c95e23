// The plan: the reducer keeps the agent's plan from each plan update (live, or rebuilt from the
// history's write_todos calls), and the chat renders it above the input.
import { describe, expect, it } from 'vitest';
import { Action, ChatState, fromHistory, initialState, reduce } from '../../src/chat/state';
import { renderPlan } from '../../src/chat/render';
import type { HistoryEntry, PlanEntry, Update } from '../../src/protocol';

const up = (update: Update): Action => ({ type: 'update', params: { sessionId: 's1', update } });
const run = (...actions: Action[]): ChatState => actions.reduce(reduce, initialState('s1'));

const first: PlanEntry[] = [
  { description: 'Read the business rules', status: 'in_progress' },
  { description: 'Fix the discount threshold', status: 'pending' },
  { description: 'Run the tests', status: 'pending' },
];
const later: PlanEntry[] = [
  { description: 'Read the business rules', status: 'completed' },
  { description: 'Fix the discount threshold', status: 'in_progress' },
  { description: 'Rewrite the rounding <fast>', status: 'cancelled' },
  { description: 'Run the tests', status: 'pending' },
];

describe('the plan in the reducer', () => {
  it('takes the whole plan from each plan update, and [] clears it', () => {
    const s1 = run(up({ sessionUpdate: 'plan', entries: first }));
    expect(s1.plan).toEqual(first);
    expect(s1.items).toEqual([]);
    const s2 = reduce(s1, up({ sessionUpdate: 'plan', entries: later }));
    expect(s2.plan).toEqual(later);
    expect(reduce(s2, up({ sessionUpdate: 'plan', entries: [] })).plan).toEqual([]);
  });

  it('rebuilds the plan of a reopened chat from the last write_todos that succeeded', () => {
    const call = (id: string, todos: unknown, status: string): HistoryEntry => ({
      turn: 1, kind: 'tool', toolCallId: id, title: 'Update the plan', toolKind: 'think', status, rawInput: { todos }, output: 'Plan saved.',
    });
    const entries: HistoryEntry[] = [
      { turn: 1, kind: 'user', text: 'fix it' },
      call('c1', first, 'completed'),
      call('c2', later, 'completed'),
      call('c3', [{ description: 'x', status: 'in_progress' }, { description: 'y', status: 'in_progress' }], 'failed'),
      call('c4', 'not a list', 'completed'),
    ];
    expect(fromHistory('s1', entries).plan).toEqual(later);
    expect(fromHistory('s1', entries.slice(0, 1)).plan).toBeUndefined();
  });
});

describe('renderPlan', () => {
  it('shows the progress, the item in progress and each item with its status', () => {
    const html = renderPlan(later, true);
    expect(html).toContain('<details class="plan-box" open>');
    expect(html).toContain('Plan · 1 of 4 done');
    expect(html).toContain('<span class="now"> · Fix the discount threshold</span>');
    expect(html).toContain('aria-label="Cancelled"');
    expect(html).toContain('Rewrite the rounding &lt;fast&gt;');
    expect(html.match(/<li /g)?.length).toBe(4);
    expect(renderPlan(later, false)).toContain('<details class="plan-box">');
  });

  it('is empty without a plan', () => {
    expect(renderPlan(undefined, true)).toBe('');
    expect(renderPlan([], true)).toBe('');
  });
});

describe('the context view: plan and notes', () => {
  it('lists the plan and each note with a Delete link that runs only the forget command', async () => {
    const { memoSection, forgetNoteCommand } = await import('../../src/contextHtml');
    const html = memoSection({ state: { plan: later, notes: [{ key: 'rule', value: 'dès 50 unités <inclus>' }, { key: 'a"b', value: 'x' }] } });
    expect(html).toContain('<h3>Plan · 1 of 4 done</h3>');
    expect(html).toContain('<span class="status">in progress</span> Fix the discount threshold');
    expect(html).toContain('<h3>Notes · 2</h3>');
    expect(html).toContain('<td class="value">dès 50 unités &lt;inclus&gt;</td>');
    expect(forgetNoteCommand).toBe('reprise.ui.forgetNote');
    const links = [...html.matchAll(/href="([^"]*)"/g)].map((m) => m[1].replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&#39;/g, "'"));
    expect(links).toHaveLength(2);
    for (const [i, key] of ['rule', 'a"b'].entries()) {
      const [cmd, arg] = links[i].split('?');
      expect(cmd).toBe('command:reprise.ui.forgetNote');
      expect(JSON.parse(decodeURIComponent(arg))).toEqual([key]);
    }
  });

  it('is empty without plan or notes', async () => {
    const { memoSection } = await import('../../src/contextHtml');
    expect(memoSection({})).toBe('');
    expect(memoSection({ state: { plan: [], notes: null } })).toBe('');
  });
});
