import { describe, expect, it } from 'vitest';
import { findBinary, hasKey, serverSettings } from '../../src/settings';
import { contextBody } from '../../src/contextHtml';
import type { ContextResult } from '../../src/protocol';
import { usage } from './fixtures';

describe('findBinary', () => {
  const exists = (p: string) => p === '/opt/reprise' || p === '/usr/local/bin/reprise';
  it('takes the setting first', () => expect(findBinary('/opt/reprise', '/usr/local/bin', exists)).toEqual({ path: '/opt/reprise' }));
  it('names a wrong setting', () => expect(findBinary('/nope', '/usr/local/bin', exists).problem).toContain('reprise.path is set to /nope'));
  it('searches PATH', () => expect(findBinary('', '/usr/bin:/usr/local/bin', exists)).toEqual({ path: '/usr/local/bin/reprise' }));
  it('says when it is nowhere', () => expect(findBinary(undefined, '/usr/bin', exists).problem).toContain('not found on PATH'));
});

describe('serverSettings', () => {
  it('passes only the server keys that are set', () => {
    const cfg: Record<string, unknown> = { path: '/x', env: { A: 'b' }, model: 'm', contextBudget: 4000, allow: ['go test'], compactAt: undefined };
    expect(serverSettings({ get: <T>(k: string) => cfg[k] as T })).toEqual({ model: 'm', contextBudget: 4000, allow: ['go test'] });
  });
});

describe('hasKey', () => {
  it('accepts any of the server variables', () => {
    expect(hasKey({})).toBe(false);
    expect(hasKey({ GEMINI_API_KEY: 'k' })).toBe(true);
    expect(hasKey({ GOOGLE_API_KEY: 'k' })).toBe(true);
    expect(hasKey({ GOOGLE_GENAI_USE_VERTEXAI: 'true' })).toBe(true);
  });
});

describe('contextBody', () => {
  it('draws the bar and marks stale items', () => {
    const c: ContextResult = {
      ...usage(),
      model: 'gemini-2.5-flash',
      largest: [
        { index: 3, kind: 'read_file', label: 'read_file a.go', path: 'a.go', tokens: 4000, stale: true },
        { index: 5, kind: 'model', label: 'model message', tokens: 300 },
      ],
      lastPrompt: 10000,
      calls: 4,
      rereads: 1,
      checkpoints: 1,
      status: 'idle',
      fixedTokens: 870,
      text: '',
    };
    const html = contextBody(c);
    expect(html).toContain('class="seg messages"');
    expect(html).toContain('read_file a.go <span class="badge">stale</span>');
    expect(html).not.toContain('model message <span class="badge">');
    expect(html).toContain('42% · 10.1k/24k');
  });
});
