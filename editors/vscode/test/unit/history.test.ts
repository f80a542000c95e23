// reprise.history entries → the chat transcript the streamed updates would have built.
import { describe, expect, it } from 'vitest';
import { Action, ChatState, fromHistory, initialState, reduce } from '../../src/chat/state';
import { renderItems } from '../../src/chat/render';
import type { HistoryEntry, Update } from '../../src/protocol';
import { Store } from '../../src/store';

const up = (update: Update): Action => ({ type: 'update', params: { sessionId: 's1', update } });
const run = (...actions: Action[]): ChatState => actions.reduce(reduce, initialState('s1'));

const cp = { n: 1, title: 'Notes read', trigger: 'manual', replaced: 4, tokensBefore: 3000, tokensAfter: 900 };

const entries: HistoryEntry[] = [
  { turn: 1, kind: 'user', text: 'What does notes.txt say?' },
  { turn: 1, kind: 'thought', text: 'Read the file.' },
  { turn: 1, kind: 'tool', toolCallId: 'c1', title: 'read_file notes.txt', toolKind: 'read', status: 'completed', output: 'remember the milk' },
  { turn: 1, kind: 'agent', text: 'It says **remember the milk**.' },
  { turn: 1, kind: 'compaction', title: 'Notes read', checkpoint: 1 },
  { turn: 2, kind: 'user', text: 'Run false' },
  { turn: 2, kind: 'tool', toolCallId: 'c2', title: 'run false', toolKind: 'execute', status: 'failed', output: 'exit status 1' },
  { turn: 2, kind: 'agent', text: 'It failed.' },
];

describe('fromHistory', () => {
  it('builds the transcript the streamed updates build', () => {
    const streamed = run(
      { type: 'ask', text: 'What does notes.txt say?' },
      up({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: 'Read the file.' } }),
      up({ sessionUpdate: 'tool_call', toolCallId: 'c1', title: 'read_file notes.txt', kind: 'read', status: 'in_progress' }),
      up({ sessionUpdate: 'tool_call_update', toolCallId: 'c1', status: 'completed', rawOutput: { output: 'remember the milk' } }),
      up({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'It says ' } }),
      up({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: '**remember the milk**.' } }),
      up({ sessionUpdate: 'compaction', compaction: { state: 'running', trigger: 'manual' } }),
      up({ sessionUpdate: 'compaction', compaction: { state: 'done', trigger: 'manual', checkpoint: cp } }),
      up({ sessionUpdate: 'turn_end', stopReason: 'end_turn' }),
      { type: 'ask', text: 'Run false' },
      up({ sessionUpdate: 'tool_call', toolCallId: 'c2', title: 'run false', kind: 'execute', status: 'in_progress' }),
      up({ sessionUpdate: 'tool_call_update', toolCallId: 'c2', status: 'failed', rawOutput: { output: 'exit status 1' } }),
      up({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'It failed.' } }),
      up({ sessionUpdate: 'turn_end', stopReason: 'end_turn' }),
    );
    expect(fromHistory('s1', entries, [cp])).toEqual(streamed);
  });

  it('renders user text, Markdown, a folded thought, tools with status and output, and the marker', () => {
    const html = renderItems(fromHistory('s1', entries), (t) => `<md>${t}</md>`, new Set());
    expect(html).toContain('<div class="body">What does notes.txt say?</div>');
    expect(html).toContain('<md>It says **remember the milk**.</md>');
    expect(html).toMatch(/<details class="thought"[^>]*><summary>Thinking<\/summary>/);
    expect(html).not.toMatch(/<details class="thought"[^>]*open/);
    expect(html).toContain('<details class="tool read completed"');
    expect(html).toContain('<pre>remember the milk</pre>');
    // A command that ran and exited 1 is not a broken tool: one status, the exit status.
    expect(html).toContain('<details class="tool execute exited"');
    expect(html).toContain('<span class="exit">exit 1</span>');
    expect(html).not.toContain('>completed<');
    // Without the checkpoint list the marker names its checkpoint only.
    expect(html).toContain('Context compacted · <a href="#" class="checkpoint" data-n="1">Checkpoint 1: Notes read</a>');
  });

  it('is an empty, idle transcript for no entries', () => {
    expect(fromHistory('s1', [])).toEqual(initialState('s1'));
  });
});

describe('Store.restore', () => {
  it('fills in a resumed session it did not hold, and only then', () => {
    const st = new Store();
    expect(st.switchTo('a')).toBe(false);
    st.restore('a', fromHistory('a', entries));
    expect(st.chat().items.filter((i) => i.type === 'user').length).toBe(2);
    expect(st.chat().sessionId).toBe('a');
    st.switchTo('b');
    expect(st.switchTo('a')).toBe(true);
    // A question asked while the history was on its way wins over the history.
    expect(st.switchTo('c')).toBe(false);
    st.ask('new question');
    st.restore('c', fromHistory('c', entries));
    expect(st.chat().items).toEqual([{ type: 'user', text: 'new question' }]);
  });
});

describe('a question with a selection, rebuilt', () => {
  it('shows the question and its selection as a chip, not the text the model got', async () => {
    const { attachmentOf, withAttachment, splitAttachment } = await import('../../src/selection');
    const a = attachmentOf('src/a.go', 'go', 3, 5, 'x := "```"\n');
    const sent = withAttachment('What is this?', a);
    expect(splitAttachment(sent)).toEqual({ text: 'What is this?', attachment: 'src/a.go:3-5' });
    const big = attachmentOf('b.txt', 'plaintext', 1, 1, 'y'.repeat(20_000));
    expect(splitAttachment(withAttachment('And this?', big))).toEqual({ text: 'And this?', attachment: 'b.txt:1' });
    expect(splitAttachment('Plain question\n\nwith two paragraphs')).toEqual({ text: 'Plain question\n\nwith two paragraphs' });
    const s = fromHistory('s1', [{ turn: 1, kind: 'user', text: sent }]);
    expect(s.items[0]).toEqual({ type: 'user', text: 'What is this?', attachment: 'src/a.go:3-5' });
  });
});
