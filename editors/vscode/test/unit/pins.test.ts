// Pins: the reducer keeps the session's pins from the pins update (live or rebuilt from
// reprise.history), the chat renders a Pin action on messages and the Pinned strip.
import { describe, expect, it } from 'vitest';
import { Action, ChatState, fromHistory, initialState, messageTurn, pinOf, reduce } from '../../src/chat/state';
import { pinName, renderItems, renderPins } from '../../src/chat/render';
import type { HistoryEntry, Pin, Update } from '../../src/protocol';
import { Store } from '../../src/store';

const up = (update: Update): Action => ({ type: 'update', params: { sessionId: 's1', update } });
const run = (...actions: Action[]): ChatState => actions.reduce(reduce, initialState('s1'));

const file: Pin = { id: 'p1', kind: 'file', label: 'src/app.ts', path: '/ws/src/app.ts', tokens: 1234 };
const text: Pin = { id: 'p2', kind: 'message', label: 'Always use tabs for indentation in this repository', text: 'Always use tabs for indentation in this repository, never spaces.', tokens: 14 };

describe('pins in the reducer', () => {
  it('takes the whole list from each pins update', () => {
    const s1 = run(up({ sessionUpdate: 'pins', pins: [file] }));
    expect(s1.pins).toEqual([file]);
    const s2 = reduce(s1, up({ sessionUpdate: 'pins', pins: [file, text] }));
    expect(s2.pins).toEqual([file, text]);
    const s3 = reduce(s2, up({ sessionUpdate: 'pins', pins: [] }));
    expect(s3.pins).toEqual([]);
    // A pins update neither starts a turn nor adds to the transcript.
    expect(s3.running).toBe(false);
    expect(s3.items).toEqual([]);
  });

  it('takes the list a command returned', () => {
    expect(run({ type: 'pins', pins: [text] }).pins).toEqual([text]);
    expect(run({ type: 'pins', pins: null }).pins).toEqual([]);
  });

  it('rebuilds the pins of a reopened chat as the live update does', () => {
    const entries: HistoryEntry[] = [
      { turn: 1, kind: 'user', text: 'hi' },
      { turn: 1, kind: 'agent', text: 'Hello.' },
    ];
    const live = run(
      { type: 'ask', text: 'hi' },
      up({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'Hello.' } }),
      up({ sessionUpdate: 'turn_end', stopReason: 'end_turn' }),
      up({ sessionUpdate: 'pins', pins: [file, text] }),
    );
    expect(fromHistory('s1', entries, [], [file, text])).toEqual(live);
    expect(fromHistory('s1', entries, []).pins).toBeUndefined();
    expect(fromHistory('s1', [], [], [file]).pins).toEqual([file]);
  });

  it('numbers a message by its turn', () => {
    const s = run(
      { type: 'ask', text: 'one' },
      up({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'first' } }),
      up({ sessionUpdate: 'turn_end', stopReason: 'end_turn' }),
      { type: 'ask', text: 'two' },
      up({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'second' } }),
    );
    expect(s.items.map((_, i) => messageTurn(s.items, i))).toEqual([1, 1, 1, 2, 2]);
    expect(messageTurn([{ type: 'agent', text: 'before any question' }], 0)).toBeUndefined();
  });

  it('finds the pin that holds a message', () => {
    expect(pinOf([file, text], '  Always use tabs for indentation in this repository, never spaces.\n')).toEqual(text);
    expect(pinOf([file, text], 'src/app.ts')).toBeUndefined();
    expect(pinOf(undefined, 'x')).toBeUndefined();
  });

  it('store: a command result goes to the current chat, an update to its session', () => {
    const st = new Store();
    st.asked('s1');
    st.setPins([file]);
    expect(st.chat('s1').pins).toEqual([file]);
    st.update({ sessionId: 's2', update: { sessionUpdate: 'pins', pins: [text] } });
    expect(st.chat('s2').pins).toEqual([text]);
    expect(st.chat('s1').pins).toEqual([file]);
  });
});

describe('pins rendered', () => {
  const md = (s: string) => `<p>${s}</p>`;

  it('puts a Pin button with its turn on user and agent messages, none elsewhere', () => {
    const s = run(
      { type: 'ask', text: 'Use tabs' },
      up({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: 'hmm' } }),
      up({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'OK, tabs.' } }),
    );
    const html = renderItems(s, md, new Set());
    expect(html.match(/data-pin="/g)).toHaveLength(2);
    expect(html).toContain('data-pin="0" data-turn="1"');
    expect(html).toContain('data-pin="2" data-turn="1"');
    expect(html).toContain('aria-label="Pin this message: keep it in the context"');
    expect(html).toContain('aria-pressed="false"');
  });

  it('shows a pinned message as Pinned, its button unpinning', () => {
    const s = run({ type: 'ask', text: text.text! }, up({ sessionUpdate: 'pins', pins: [text] }));
    const html = renderItems(s, md, new Set());
    expect(html).toContain('data-unpin="p2"');
    expect(html).toContain('aria-pressed="true"');
    expect(html).not.toContain('data-pin="');
  });

  it('lists each pin with its name, tokens and an unpin button', () => {
    expect(renderPins(undefined)).toBe('');
    expect(renderPins([])).toBe('');
    const html = renderPins([file, text]);
    expect(html).toContain('Pinned · 1.2k tokens');
    expect(html).toContain('data-path="/ws/src/app.ts"');
    expect(html).toContain('>app.ts</a>');
    expect(html).toContain('“Always use tabs for indentation in this…”');
    expect(html).toContain('aria-label="Unpin app.ts"');
    expect(html).toContain('data-unpin="p2"');
    expect(html).toContain('role="list"');
  });

  it('escapes what the user pinned', () => {
    const evil: Pin = { id: 'p3', kind: 'message', label: '<img src=x onerror=alert(1)>', text: '<img src=x onerror=alert(1)>', tokens: 9 };
    const html = renderPins([evil]);
    expect(html).not.toContain('<img');
    expect(html).toContain('&lt;img');
  });

  it('names a pin by its file name or the start of its text', () => {
    expect(pinName(file)).toBe('app.ts');
    expect(pinName({ id: 'p4', kind: 'file', label: 'C:\\w\\b.go', tokens: 1 })).toBe('b.go');
    expect(pinName({ id: 'p5', kind: 'message', label: 'two\n  lines', tokens: 1 })).toBe('two lines');
  });
});

describe('pins in the context view', () => {
  it('lists each pin with its kind and tokens, and their sum', async () => {
    const { pinsSection } = await import('../../src/contextHtml');
    const html = pinsSection({ pins: [{ id: 'p1', kind: 'file', label: 'src/app.ts', path: 'src/app.ts', tokens: 1234 }, { id: 'p2', kind: 'message', label: '<b>tabs</b>', tokens: 9 }], pinnedTokens: 1243 });
    expect(html).toContain('Pinned · 1.2k tokens');
    expect(html).toContain('<td>src/app.ts</td><td>file</td><td class="num">1.2k</td>');
    expect(html).toContain('&lt;b&gt;tabs&lt;/b&gt;');
    expect(pinsSection({})).toBe('');
  });
});

describe('a pinned message found by its text', () => {
  it('matches the whole text, and a long one by the start and end the server keeps', () => {
    const short: Pin = { id: 'p1', kind: 'message', label: 'same first line', text: 'same first line\nthen one thing', tokens: 8 };
    expect(pinOf([short], 'same first line\nthen one thing')).toEqual(short);
    // Two messages that share a first line are told apart.
    expect(pinOf([short], 'same first line\nthen another')).toBeUndefined();
    const long = `${'a'.repeat(3000)}middle${'z'.repeat(3000)}`;
    const capped = `${'a'.repeat(1600)}\n[… 2406 characters of this message omitted here; the whole is saved: read_file .reprise/requests/1.txt to read it …]\n${'z'.repeat(2400)}`;
    const pin: Pin = { id: 'p2', kind: 'message', label: 'aaaa', text: capped, tokens: 1000 };
    expect(pinOf([short, pin], long)).toEqual(pin);
    expect(pinOf([pin], `b${long.slice(1)}`)).toBeUndefined();
    expect(pinOf([pin], `${'a'.repeat(1600)}${'z'.repeat(2400)}`)).toBeUndefined();
    // A message pin without its text (no server sends one now) matches nothing.
    expect(pinOf([{ id: 'p3', kind: 'message', label: 'same first line', tokens: 8 }], 'same first line')).toBeUndefined();
  });
});
