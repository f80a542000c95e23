// The model picker's rows and words, from a reprise.models answer like the server's against the
// fake Gemini (a model the catalogue does not know, a retired one with its replacement).
import { describe, expect, it } from 'vitest';
import { modelRows, overrideMessage, pickedMessage, pickerPlaceholder, pickerTitle, retiredQuestion } from '../../src/models';
import type { ModelInfo, ModelsResult } from '../../src/protocol';

function model(id: string, over: Partial<ModelInfo> = {}): ModelInfo {
  return {
    id,
    displayName: id,
    status: 'ga',
    statusText: 'ga',
    known: true,
    listed: true,
    inputTokenLimit: 1048576,
    prices: { input: 0.75, cachedInput: 0.075, output: 3.75 },
    priceText: '$0.75 · $0.075 · $3.75',
    cacheMinTokens: 4096,
    explicitCaching: true,
    thinkingLevels: ['low', 'medium', 'high'],
    detail: `ga · 1M context · $0.75 · $0.075 · $3.75 per 1M in · cached · out`,
    ...over,
  };
}

const flash = model('gemini-3.8-flash', { default: true, current: true });
const lite = model('gemini-3.5-flash-lite');
const exp = model('gemini-3.9-flash-exp', {
  status: '',
  statusText: 'not in the catalogue',
  known: false,
  prices: null,
  priceText: 'unknown',
  detail: 'not in the catalogue · 1M context · unknown per 1M in · cached · out',
});
const pro = model('gemini-2.5-pro', { status: 'retired', statusText: 'retired → gemini-3.8-flash', replacement: 'gemini-3.8-flash', listed: false });

function result(over: Partial<ModelsResult> = {}): ModelsResult {
  return { models: [flash, lite, exp], model: 'gemini-3.8-flash', default: 'gemini-3.8-flash', catalogueAsOf: '2026-12-01', listedAt: '2026-12-01T18:20:00Z', ...over };
}

describe('modelRows', () => {
  it('one row per model: id, status, the server\'s detail; a check on the current one', () => {
    const rows = modelRows(result(), false).filter((r) => r.model);
    expect(rows.map((r) => r.label)).toEqual(['$(check) gemini-3.8-flash', '$(blank) gemini-3.5-flash-lite', '$(blank) gemini-3.9-flash-exp']);
    expect(rows[0].description).toBe('ga · default · new sessions');
    expect(rows[1].description).toBe('ga');
    expect(rows[2].description).toBe('not in the catalogue');
    expect(rows[2].detail).toBe(exp.detail);
  });
  it('ends with the row that shows all models, shown whatever is typed', () => {
    const last = modelRows(result(), false).at(-1)!;
    expect(last).toMatchObject({ toggleAll: true, alwaysShow: true });
    expect(last.label).toContain('Show all models (retired too)');
    expect(modelRows(result(), true).at(-1)!.label).toContain('Hide retired models');
  });
  it('puts retired models last, under their own separator, the replacement named', () => {
    const rows = modelRows(result({ models: [pro, flash, exp] }), true);
    const labels = rows.map((r) => (r.separator ? `--${r.label}` : r.label));
    expect(labels).toEqual([
      '$(check) gemini-3.8-flash',
      '$(blank) gemini-3.9-flash-exp',
      '--retired',
      '$(circle-slash) gemini-2.5-pro',
      '--',
      '$(eye-closed) Hide retired models',
    ]);
    expect(rows[3].description).toBe('retired → gemini-3.8-flash');
  });
  it('copes with no models', () => expect(modelRows(result({ models: null }), false).filter((r) => r.model)).toEqual([]));
});

describe('title and placeholder', () => {
  it('say where the list comes from', () => {
    expect(pickerTitle(result(), false)).toBe('Reprise: Select Model');
    expect(pickerTitle(result(), true)).toBe('Reprise: Select Model (all models)');
    expect(pickerPlaceholder(result())).toBe(
      'New sessions use gemini-3.8-flash · catalogue of 2026-12-01 · API list of 2026-12-01 18:20',
    );
  });
  it('warn when the server does not list the model new sessions use', () => {
    const r = result();
    const none = { ...r, models: (r.models ?? []).map((m) => ({ ...m, current: false })) };
    expect(pickerPlaceholder(none)).toBe('⚠ New sessions use gemini-3.8-flash, which this server does not list: pick one');
  });
  it("show the server's warning", () => {
    const r = result({ warning: 'no API key (set GEMINI_API_KEY); the catalogue\'s models are shown', listedAt: undefined });
    expect(pickerTitle(r, false)).toContain('⚠');
    expect(pickerPlaceholder(r)).toBe("⚠ no API key (set GEMINI_API_KEY); the catalogue's models are shown");
  });
});

describe('what picking says', () => {
  it('warns before a retired model, offering its replacement', () => {
    const q = retiredQuestion(pro);
    expect(q.message).toBe('gemini-2.5-pro is retired.');
    expect(q.detail).toContain('New API keys get 404');
    expect(q.detail).toContain("The catalogue's replacement is gemini-3.8-flash.");
    expect(q.replacement).toBe('Use gemini-3.8-flash');
    expect(q.anyway).toBe('Use gemini-2.5-pro Anyway');
    expect(retiredQuestion({ ...pro, replacement: undefined }).replacement).toBeUndefined();
  });
  it('says the model applies to new sessions', () => {
    expect(pickedMessage(lite)).toBe('Reprise: new sessions use gemini-3.5-flash-lite; sessions already open keep their model.');
    expect(pickedMessage({ id: 'gemini-3.6-flash' })).not.toContain('unknown');
  });
  it('says an unpriced model costs "unknown"', () => expect(pickedMessage(exp)).toContain('Its price is unknown'));
  it('says a local model is free, counted in time, never "unknown"', () => {
    const local = pickedMessage({ id: 'qwen3:8b', prices: null, local: true });
    expect(local).toContain('free, so the meter counts its tokens and its time');
    expect(local).not.toContain('unknown');
  });
  it('names a workspace value that wins over the user setting: one no dearer per token', () => {
    const price = (id: string, input: number, cachedInput: number, output: number): ModelInfo => ({ ...lite, id, prices: { input, cachedInput, output } });
    const models = [price('gemini-3.6-flash', 0.5, 0.05, 3), price('cheap', 0.1, 0.01, 0.4), price('dear', 2, 0.2, 12), price('dear-output', 0.1, 0.01, 4), { ...lite, id: 'unpriced', prices: null }];
    expect(overrideMessage('gemini-3.6-flash', undefined, models)).toBeUndefined();
    expect(overrideMessage('gemini-3.6-flash', 'gemini-3.6-flash', models)).toBeUndefined();
    expect(overrideMessage('gemini-3.6-flash', 'cheap', models)).toContain('set reprise.model to cheap');
    // The server holds these to the user's pick: nothing wins over it.
    for (const held of ['dear', 'dear-output', 'unpriced', 'not-listed']) expect(overrideMessage('gemini-3.6-flash', held, models)).toBeUndefined();
  });
});
