import { describe, expect, it } from 'vitest';
import type { SessionInfo } from '../../src/protocol';
import { sessionItem } from '../../src/sessions';

const session: SessionInfo = {
  sessionId: 's1',
  title: 'Read the notes',
  lastActivity: '2026-12-01T10:00:00Z',
  turns: 1, // one prompt…
  calls: 3, // …whose answer took two tool calls: three model calls
  used: 10100,
  size: 24000,
  percent: 42.1,
  running: false,
  current: true,
};

describe('sessionItem', () => {
  it('counts the turns and the model calls apart', () => {
    expect(sessionItem(session, Date.parse('2026-12-01T10:05:00Z'))).toEqual({
      label: 'Read the notes',
      description: '42% · 10.1k/24k · current',
      detail: 's1 · 1 turn · 3 model calls · 5 min ago',
      id: 's1',
    });
  });
  it('names an untitled session by its id', () => expect(sessionItem({ ...session, title: '' }).label).toBe('s1'));
});
