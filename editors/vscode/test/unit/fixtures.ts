// Shared test data: the usage notification of PROTOCOL.md's example.
import type { ContextUsage } from '../../src/protocol';

/** usage is PROTOCOL.md's reprise/contextUsage example, with fields overridden. */
export function usage(over: Partial<ContextUsage> = {}): ContextUsage {
  return {
    sessionId: 's1',
    used: 10100,
    size: 24000,
    percent: 42.1,
    source: 'usage',
    breakdown: { systemPrompt: 269, customInstructions: 40, tools: 561, mcpTools: 0, messages: 9230, free: 12700, buffer: 1200 },
    totals: { inputTokens: 34418, cachedTokens: 0, outputTokens: 2086, cost: { amount: 0.0336, currency: 'USD', text: '$0.0336' } },
    compaction: { state: 'idle', count: 1 },
    compactAt: 0.7,
    blockAt: 0.95,
    ...over,
  };
}
