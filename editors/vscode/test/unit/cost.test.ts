// The session's cost as the meter, its tooltip and the context view show it: the server's text,
// so a model without a known price reads "unknown", never $0.00.
import { describe, expect, it } from 'vitest';
import { contextBody, modelText } from '../../src/contextHtml';
import { costLabel, costText, meterText, meterTooltip } from '../../src/meter';
import type { ContextResult, ContextUsage, Money } from '../../src/protocol';
import { usage } from './fixtures';

const unknown: Money = { amount: 0, currency: 'USD', unknown: true, text: 'unknown' };
const partly: Money = { amount: 0.0063, currency: 'USD', unknown: true, text: '$0.0063 + unknown' };

function withCost(cost: Money, over: Partial<ContextUsage['totals']> = {}): ContextUsage {
  const u = usage();
  return { ...u, totals: { ...u.totals, cost, ...over } };
}

function view(u: ContextUsage, over: Partial<ContextResult> = {}): ContextResult {
  return { ...u, model: 'gemini-3.9-flash-exp', largest: null, lastPrompt: 0, turns: 1, calls: 2, rereads: 0, checkpoints: 0, status: 'idle', fixedTokens: 0, text: '', ...over };
}

describe('costText', () => {
  it.each<[string, Money, string]>([
    ['the server text', { amount: 0.0336, currency: 'USD', text: '$0.0336' }, '$0.0336'],
    ['unknown, not $0.00', unknown, 'unknown'],
    ['a priced part and an unknown one', partly, '$0.0063 + unknown'],
    ['an older server: the amount', { amount: 0.0336, currency: 'USD' }, '$0.0336'],
    ['an older server, unknown and nothing priced', { amount: 0, currency: 'USD', unknown: true }, 'unknown'],
    ['an older server, unknown beside an amount', { amount: 0.0063, currency: 'USD', unknown: true }, '$0.0063 + unknown'],
  ])('%s', (_, cost, want) => expect(costText(cost)).toBe(want));
  it('prefers the text to the amount', () => expect(costText({ amount: 0, currency: 'USD', text: 'unknown' })).toBe('unknown'));
  it('says what is unknown where it stands alone', () => {
    expect(costLabel(unknown)).toBe('cost unknown');
    expect(costLabel(partly)).toBe('$0.0063 + unknown');
  });
});

describe('meter cost', () => {
  it('status bar shows the cost', () => expect(meterText(usage())).toMatch(/ · \$0\.0336$/));
  it('status bar never shows $0 for an unknown price', () => {
    const t = meterText(withCost(unknown));
    expect(t).toBe('◑ 42% · 10.1k/24k · cost unknown');
    expect(t).not.toContain('$0');
  });
  it('status bar shows the priced part and the unknown one', () => expect(meterText(withCost(partly))).toContain('$0.0063 + unknown'));
  it('tooltip shows the text, not the amount', () => {
    const t = meterTooltip(withCost(unknown));
    expect(t).toContain('2.1k out · cost unknown');
    expect(t).not.toMatch(/\$0\.0+\b/);
    expect(meterTooltip(withCost(partly))).toContain('$0.0063 + unknown');
  });
  it('tooltip counts thinking in the output', () => expect(meterTooltip(withCost(partly, { thoughtTokens: 300 }))).toContain('2.1k out (300 thinking)'));
  it('tooltip names the model for new sessions and links the picker', () => {
    const t = meterTooltip(usage(), false, { model: 'gemini-3.8-flash', command: 'reprise.ui.selectModel' });
    expect(t).toContain('New sessions: `gemini-3.8-flash`');
    expect(t).toContain('(command:reprise.ui.selectModel)');
    expect(meterTooltip(usage())).not.toContain('command:');
  });
});

describe('a local model', () => {
  const local: Money = { amount: 0, currency: 'USD', local: true, text: 'local · 41 s' };
  it('status bar shows tokens and time, no dollars', () => {
    const t = meterText(withCost(local, { modelMillis: 41_400 }));
    expect(t).toBe('◑ 42% · 10.1k/24k · local · 41 s');
    expect(t).not.toContain('$');
  });
  it('tooltip weighs the context in time', () => {
    const t = meterTooltip({ ...withCost(local), compaction: { state: 'idle', count: 0 } });
    expect(t).toContain('2.1k out · local · 41 s');
    expect(t).toContain('pays for itself in time (the local model is free)');
    expect(t).not.toContain('in dollars');
  });
});

describe('context view cost', () => {
  it('shows the text and marks it unknown', () => {
    const html = contextBody(view(withCost(unknown)));
    expect(html).toContain('<span class="cost unknown">unknown</span>');
    expect(html).not.toContain('$0.0000');
  });
  it('shows the priced part and the unknown one', () => expect(contextBody(view(withCost(partly)))).toContain('$0.0063 + unknown'));
  it('shows a known cost plainly', () => expect(contextBody(view(usage()))).toContain('<span class="cost">$0.0336</span>'));
  it('names the model that answered when the API routed the call', () => {
    expect(modelText({ model: 'gemini-2.5-pro', servedModel: 'gemini-3.8-flash' })).toBe('gemini-2.5-pro <span class="served">(answered by gemini-3.8-flash)</span>');
    expect(modelText({ model: 'gemini-3.8-flash' })).toBe('gemini-3.8-flash');
    expect(modelText({ model: '<b>', servedModel: '<i>' })).not.toContain('<b>');
  });
});
