// The names in src/protocol.ts must be the strings of lsp/protocol.go, the single source of truth.
// lsp/names_test.go checks the other direction too: every name of protocol.go is exported here.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as protocol from '../../src/protocol';

const goSource = readFileSync(join(__dirname, '../../../../lsp/protocol.go'), 'utf8');

function goConstants(): Map<string, string | number> {
  const m = new Map<string, string | number>();
  for (const [, name, value] of goSource.matchAll(/^\s*(?:const\s+)?(\w+)\s*=\s*("[^"]*"|-?\d+)\s*(?:\/\/.*)?$/gm)) {
    m.set(name, value.startsWith('"') ? JSON.parse(value) : Number(value));
  }
  return m;
}

describe('protocol names', () => {
  const go = goConstants();
  const ts = Object.entries(protocol).filter(([, v]) => typeof v === 'string' || typeof v === 'number');
  it('finds the Go constants', () => expect(go.size).toBeGreaterThan(20));
  it.each(ts)('%s matches lsp/protocol.go', (name, value) => {
    expect(go.has(name), `${name} is not a constant of lsp/protocol.go`).toBe(true);
    expect(value).toBe(go.get(name));
  });
  it('package.json does not register the server command ids', () => {
    const pkg = JSON.parse(readFileSync(join(__dirname, '../../package.json'), 'utf8'));
    const serverIds = [...go.entries()].filter(([k]) => k.startsWith('Command')).map(([, v]) => v);
    for (const c of pkg.contributes.commands) expect(serverIds).not.toContain(c.command);
  });
});
