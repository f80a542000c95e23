import { describe, expect, it } from 'vitest';
import { breakdownRows, compacting, glyph, hitRateText, level, meterText, meterTooltip, tokens, turnsAndCalls } from '../../src/meter';
import { usage } from './fixtures';

describe('tokens', () => {
  it.each([
    [0, '0'],
    [950, '950'],
    [1000, '1k'],
    [10100, '10.1k'],
    [24000, '24k'],
    [123456, '123k'],
    [1_200_000, '1.2M'],
  ])('%d → %s', (n, want) => expect(tokens(n)).toBe(want));
});

describe('turnsAndCalls', () => {
  it.each([
    [1, 3, '1 turn · 3 model calls'], // one prompt whose answer took two tool calls
    [2, 2, '2 turns · 2 model calls'],
    [1, 1, '1 turn · 1 model call'],
    [0, 0, '0 turns · 0 model calls'],
  ])('%d turns, %d calls → %s', (turns, calls, want) => expect(turnsAndCalls(turns, calls)).toBe(want));
});

describe('meterText', () => {
  it('reads like the seed', () => expect(meterText(usage())).toBe('◑ 42% · 10.1k/24k · $0.0336'));
  it('marks estimates', () => expect(meterText(usage({ source: 'estimate' }))).toBe('◑ ~42% · 10.1k/24k · $0.0336'));
  it('spins while compacting', () => expect(meterText(usage(), true)).toBe('$(sync~spin) 42% · 10.1k/24k · $0.0336'));
  it.each([
    [0, '○'],
    [20, '◔'],
    [50, '◑'],
    [70, '◕'],
    [99, '●'],
    [130, '●'],
  ])('glyph at %d%% is %s', (p, g) => expect(glyph(p)).toBe(g));
});

describe('level', () => {
  it.each([
    [69.9, 'normal'],
    [70, 'warning'],
    [94.9, 'warning'],
    [95, 'error'],
    [120, 'error'],
  ])('%d%% is %s', (percent, want) => expect(level(usage({ percent }))).toBe(want));
  it('follows the session thresholds', () => expect(level(usage({ percent: 50, compactAt: 0.5, blockAt: 0.6 }))).toBe('warning'));
});

describe('compacting', () => {
  it('is true for running and blocking states or a manual compaction', () => {
    expect(compacting(usage(), false)).toBe(false);
    expect(compacting(usage(), true)).toBe(true);
    expect(compacting(usage({ compaction: { state: 'running', count: 0 } }), false)).toBe(true);
    expect(compacting(usage({ compaction: { state: 'blocking', count: 0 } }), false)).toBe(true);
  });
});

describe('tooltip', () => {
  it('has the breakdown, totals and cost', () => {
    const t = meterTooltip(usage());
    for (const s of ['System prompt', 'Custom instructions', 'Tools', 'Messages', 'Free', 'Buffer', '34.4k in', '2.1k out', '$0.0336', '1 compaction'])
      expect(t).toContain(s);
    expect(t).not.toContain('MCP tools');
  });
  it('says what was decided past compactAt, and why', () => {
    const u = usage();
    const decision = 'past compactAt, waiting: clearing 3 old tool results would cost $0.0021 to rebuild the prompt and save $0.0009 over the next 2 calls';
    const t = meterTooltip({ ...u, compaction: { ...u.compaction, decision } });
    expect(t).toContain('past compactAt, waiting: clearing 3 old tool results would cost \\$0.0021 to rebuild');
    expect(meterTooltip(u)).not.toContain('waiting');
  });
  it('says what happens to the context from here when nothing was decided yet', () => {
    expect(meterTooltip(usage({ percent: 67 }))).toContain(
      'Below 70% (16.8k tokens) the context is kept as it is. From there, old tool results are cleared or a summary starts when it pays for itself in dollars; at 95% the agent waits for one. *Compact Session* summarizes now.',
    );
    expect(meterTooltip(usage({ percent: 82 }))).toContain('Past 70%: old tool results are cleared or a summary starts as soon as it pays for itself in dollars; at 95% (22.8k tokens) the agent waits for one.');
    const u = usage({ percent: 82 });
    expect(meterTooltip({ ...u, compaction: { ...u.compaction, decision: 'cleared 4 old tool results' } })).not.toContain('Past 70%');
    const subagents = { runs: 1, calls: 3, inputTokens: 9000, cachedTokens: 0, outputTokens: 40, cost: { amount: 0.001, currency: 'USD' }, text: '1 subagent, 3 calls $0.0010 (9,000 input, 0 cached)' };
    expect(meterTooltip(usage({ totals: { ...usage().totals, subagents } }))).toContain(
      'Subagents: 1 subagent, 3 calls \\$0.0010 \\(9,000 input, 0 cached\\), counted above',
    );
  });
  it('has the cache hits once a call expected some', () => {
    expect(meterTooltip(usage())).not.toContain('expected hits');
    const t = meterTooltip(usage({ cache: { expected: 40000, reported: 23200, hitRate: 0.58 } }));
    expect(t).toContain('Cache: 23.2k of 40k expected cached tokens · 58 % of the expected hits');
  });
  it('says why calls were billed in full, in the server\'s words', () => {
    expect(meterTooltip(usage())).not.toContain('uncached');
    const misses = { calls: { first: 1, rewritten: 2 }, text: '3 uncached calls: 1 first call, 2 after a clearing or summary' };
    expect(meterTooltip(usage({ totals: { ...usage().totals, misses } }))).toContain('\n3 uncached calls: 1 first call, 2 after a clearing or summary\n');
  });
  it('rounds the hit rate down, so a miss never reads as 100 %', () => {
    expect(hitRateText({ expected: 1000, reported: 999, hitRate: 0.999 })).toBe('99 % of the expected hits');
    expect(hitRateText({ expected: 100, reported: 58, hitRate: 0.58 })).toBe('58 % of the expected hits');
  });
  it('shares sum to the window', () => {
    const sum = breakdownRows(usage()).reduce((a, r) => a + r.tokens, 0);
    expect(sum).toBe(24000);
  });
  it('shows the workspace map as its own row only when the head has one', () => {
    expect(breakdownRows(usage()).map((r) => r.key)).not.toContain('workspaceMap');
    const u = usage();
    const withMap = { ...u, breakdown: { ...u.breakdown!, workspaceMap: 2100, free: u.breakdown!.free - 2100 } };
    const rows = breakdownRows(withMap);
    expect(rows.map((r) => r.label)).toEqual(['System prompt', 'Custom instructions', 'Workspace map', 'Tools', 'Messages', 'Free', 'Buffer']);
    expect(rows.reduce((a, r) => a + r.tokens, 0)).toBe(24000);
  });
});
