// Fork from the chat: a question offers a Fork button with its turn (not while a turn runs, not
// on answers), a checkpoint's marker offers one with its number.
import { describe, expect, it } from 'vitest';
import { Action, ChatState, initialState, reduce } from '../../src/chat/state';
import { renderItems } from '../../src/chat/render';
import type { Update } from '../../src/protocol';

const up = (update: Update): Action => ({ type: 'update', params: { sessionId: 's1', update } });
const run = (...actions: Action[]): ChatState => actions.reduce(reduce, initialState('s1'));
const answer = (text: string): Action[] => [
  up({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } }),
  up({ sessionUpdate: 'turn_end', stopReason: 'end_turn' }),
];

describe('fork buttons', () => {
  it('puts one on each question with its turn, none on answers', () => {
    const s = run({ type: 'ask', text: 'one' }, ...answer('first'), { type: 'ask', text: 'two' }, ...answer('second'));
    const html = renderItems(s, (t) => t, new Set());
    expect([...html.matchAll(/data-fork-turn="(\d+)"/g)].map((m) => m[1])).toEqual(['1', '2']);
    expect(html).toContain('aria-label="Fork from here: a new session from before this question (turn 2); this one is kept"');
    expect(html.match(/<div class="msg agent"[^]*?<\/div><\/div>/g)?.every((m) => !m.includes('data-fork'))).toBe(true);
  });

  it('offers none while a turn runs', () => {
    const s = run({ type: 'ask', text: 'one' }, ...answer('first'), { type: 'ask', text: 'two' });
    expect(renderItems(s, (t) => t, new Set())).not.toContain('data-fork-turn');
  });

  it("puts one on a checkpoint's marker", () => {
    const s = run(
      { type: 'ask', text: 'one' },
      up({ sessionUpdate: 'compaction', compaction: { state: 'done', trigger: 'manual', checkpoint: { n: 2, title: 'Read the notes', trigger: 'manual', replaced: 4, tokensBefore: 900, tokensAfter: 300 } } }),
      ...answer('first'),
    );
    expect(renderItems(s, (t) => t, new Set())).toContain('data-fork-checkpoint="2" title="Fork from checkpoint 2: a new session from right after it; this one is kept"');
  });
});
