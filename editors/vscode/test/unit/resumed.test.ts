// One view model for a live chat and a reopened one: lsp/testdata/resumed-session.json holds what
// the real server sent live for a session (its updates, and the outcomes of Keep and Undo) and the
// history a restarted server gave for it (lsp/history_test.go writes and checks it). Both build the
// same chat.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderItems } from '../../src/chat/render';
import { Action, ChatState, fromHistory, initialState, Item, reduce, Review } from '../../src/chat/state';
import type { HistoryEntry, Update } from '../../src/protocol';

interface Step {
  ask?: string;
  update?: Update;
  review?: { turn: number; paths: string[]; review: Review; reason?: string };
}

const session: { sessionId: string; live: Step[]; history: HistoryEntry[] } = JSON.parse(
  readFileSync(join(__dirname, '../../../../lsp/testdata/resumed-session.json'), 'utf8'),
);
const id = session.sessionId;

/** live is the chat as the extension built it from the steps, in order. */
function live(): ChatState {
  const action = (s: Step): Action => {
    if (s.ask !== undefined) return { type: 'ask', text: s.ask };
    if (s.update) return { type: 'update', params: { sessionId: id, update: s.update } };
    const r = s.review!;
    return { type: 'review', turn: r.turn, paths: r.paths, review: r.review, reason: r.reason };
  };
  return session.live.map(action).reduce(reduce, initialState(id));
}

const tools = (s: ChatState) => s.items.filter((it): it is Extract<Item, { type: 'tool' }> => it.type === 'tool');

describe('a session reopened from its history', () => {
  const rebuilt = fromHistory(id, session.history);

  it('is the chat the live updates built', () => {
    expect(rebuilt).toEqual(live());
  });

  it('shows each edit with its counts and diff, and its input', () => {
    const edits = tools(rebuilt).filter((t) => t.diff);
    expect(edits.map((t) => [t.title, t.diff?.added, t.diff?.removed, t.diff?.created])).toEqual([
      ['Edit notes.txt', 1, 1, false],
      ['Write chores.md', 3, 0, true],
      ['Edit todo.txt', 1, 1, false],
      ['Write extra.md', 1, 0, true],
    ]);
    expect(tools(rebuilt).every((t) => t.input?.path)).toBe(true);
    const html = renderItems(rebuilt, (t) => t, new Set());
    expect(html).toContain('<div class="dl add">+Remember the oat milk.</div>');
    expect(html).toContain('<span class="add">+1</span> <span class="del">−1</span>');
  });

  it("lists turn 2's changes with what became of each, after that turn", () => {
    const i = rebuilt.items.findIndex((it) => it.type === 'changes');
    const changes = rebuilt.items[i];
    if (changes?.type !== 'changes') throw new Error('no changes listed');
    expect(changes.turn).toBe(2);
    expect(rebuilt.items[i - 1]).toEqual({ type: 'end', stopReason: 'end_turn' });
    expect(changes.files.map((f) => [f.path, f.review, f.reason])).toEqual([
      ['chores.md', 'kept', undefined],
      ['extra.md', 'pending', undefined],
      ['notes.txt', 'undone', undefined],
      ['todo.txt', 'refused', 'changed since the agent last wrote it; not restored, so that edit is kept'],
    ]);
    const html = renderItems(rebuilt, (t) => t, new Set());
    expect(html).toContain('<div class="row undone" data-path="notes.txt">');
    expect(html).toContain('Changes · 4 files · 2 to review');
  });
});
