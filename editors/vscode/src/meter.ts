// The context meter's pure part: what the status bar item says, how loud it is, and its tooltip.
// No vscode import, so it is unit-tested as is; meterItem.ts puts it on the status bar.
import { CompactionBlocking, CompactionRunning, SourceEstimate } from './protocol';
import type { Breakdown, CacheHits, ContextUsage, Money, Totals } from './protocol';

export type Level = 'normal' | 'warning' | 'error';

/** tokens formats a token count the way the server's plain clients do: 950, 10.1k, 24k, 1.2M. */
export function tokens(n: number): string {
  if (n < 1000) return String(Math.round(n));
  if (n < 1_000_000) return trim(n / 1000) + 'k';
  return trim(n / 1_000_000) + 'M';
}

function trim(x: number): string {
  const s = x >= 100 ? String(Math.round(x)) : x.toFixed(1);
  return s.endsWith('.0') ? s.slice(0, -2) : s;
}

/**
 * turnsAndCalls says how many prompts a session answered and how many model calls they took,
 * which differ as soon as a turn calls a tool: "1 turn · 3 model calls".
 */
export function turnsAndCalls(turns: number, calls: number): string {
  return `${turns} ${turns === 1 ? 'turn' : 'turns'} · ${calls} model ${calls === 1 ? 'call' : 'calls'}`;
}

/**
 * humanTime writes an ISO time as people read it, relative to now when recent: "just now",
 * "5 min ago", "3 h ago", else the local date and time ("Dec 1, 14:05"). A text that is not a time
 * is returned as is.
 */
export function humanTime(iso: string, now = Date.now()): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const s = Math.round((now - t) / 1000);
  if (s >= 0 && s < 60) return 'just now';
  if (s >= 0 && s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s >= 0 && s < 86400) return `${Math.floor(s / 3600)} h ago`;
  const d = new Date(t);
  const month = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'][d.getMonth()];
  const year = new Date(now).getFullYear() === d.getFullYear() ? '' : ` ${d.getFullYear()}`;
  return `${month} ${d.getDate()}${year}, ${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;
}

/** glyph is a circle filled in quarters, so the level reads at a glance. */
export function glyph(percent: number): string {
  const glyphs = ['○', '◔', '◑', '◕', '●'];
  const i = Math.min(4, Math.max(0, Math.round(percent / 25)));
  return glyphs[i];
}

/** level compares the fill with the session's thresholds: warning from compactAt, error from blockAt. */
export function level(u: Pick<ContextUsage, 'percent' | 'compactAt' | 'blockAt'>): Level {
  const f = u.percent / 100;
  if (u.blockAt > 0 && f >= u.blockAt) return 'error';
  if (u.compactAt > 0 && f >= u.compactAt) return 'warning';
  return 'normal';
}

/** compacting says whether a compaction is running for the session. */
export function compacting(u: ContextUsage, manual: boolean): boolean {
  return manual || u.compaction?.state === CompactionRunning || u.compaction?.state === CompactionBlocking;
}

/**
 * meterText is the status bar text: `◑ 42% · 10.1k/24k · $0.0336`, with a spinner while
 * compacting; the session's cost as costLabel words it.
 */
export function meterText(u: ContextUsage, busyCompacting = false): string {
  const head = busyCompacting ? '$(sync~spin)' : glyph(u.percent);
  const est = u.source === SourceEstimate ? '~' : '';
  const cost = u.totals?.cost ? ` · ${costLabel(u.totals.cost)}` : '';
  return `${head} ${est}${Math.round(u.percent)}% · ${tokens(u.used)}/${tokens(u.size)}${cost}`;
}

export const breakdownLabels: Record<keyof Breakdown, string> = {
  systemPrompt: 'System prompt',
  customInstructions: 'Custom instructions',
  workspaceMap: 'Workspace map',
  tools: 'Tools',
  mcpTools: 'MCP tools',
  messages: 'Messages',
  free: 'Free',
  buffer: 'Buffer',
};

/** breakdownRows lists the categories in display order with their share of the window. */
export function breakdownRows(u: ContextUsage): { key: keyof Breakdown; label: string; tokens: number; percent: number }[] {
  const keys = Object.keys(breakdownLabels) as (keyof Breakdown)[];
  const size = u.size > 0 ? u.size : 1;
  return keys
    .filter((k) => (k !== 'mcpTools' && k !== 'workspaceMap') || (u.breakdown?.[k] ?? 0) > 0)
    .map((k) => {
      const t = u.breakdown?.[k] ?? 0;
      return { key: k, label: breakdownLabels[k], tokens: t, percent: (100 * t) / size };
    });
}

/**
 * costText is a cost as the server words it (`$0.0336`, `unknown`, `$0.0063 + unknown`). An
 * older server sends no text: the amount then, and `unknown` beside it when the server says some
 * of it is unknown, so an unpriced model never reads as $0.00.
 */
export function costText(c: Money | undefined): string {
  if (!c) return 'unknown';
  if (c.text) return c.text;
  if (!c.unknown) return money(c.amount, c.currency);
  return c.amount > 0 ? `${money(c.amount, c.currency)} + unknown` : 'unknown';
}

/** costLabel is costText where it stands alone (the status bar): `cost unknown` rather than a bare `unknown`. */
export function costLabel(c: Money | undefined): string {
  const t = costText(c);
  return t === 'unknown' ? 'cost unknown' : t;
}

/** money prints an amount: $0.0336. */
export function money(amount: number, currency = 'USD'): string {
  const digits = amount !== 0 && Math.abs(amount) < 0.01 ? 4 : amount < 1 ? 4 : 2;
  const n = amount.toFixed(digits);
  return currency === 'USD' ? `$${n}` : `${n} ${currency}`;
}

/** ModelLink is the tooltip's line about the model: the one new sessions use and the command that picks another. */
export interface ModelLink {
  model: string;
  command: string;
}

/** hitRateText is the implicit-cache hit rate as the server words it: "58 % of the expected hits", rounded down. */
export function hitRateText(c: CacheHits): string {
  return `${Math.floor(100 * c.hitRate + 1e-9)} % of the expected hits`;
}

/**
 * meterTooltip is the tooltip's Markdown: the breakdown, the totals and the thresholds, and with
 * picker the model new sessions use with a link that picks another (a command link: the
 * MarkdownString must trust that command).
 */
export function meterTooltip(u: ContextUsage, busyCompacting = false, picker?: ModelLink): string {
  const lines = [
    `**Reprise context** — ${Math.round(u.percent)}% · ${tokens(u.used)}/${tokens(u.size)} tokens` +
      (u.source === SourceEstimate ? ' (estimated)' : ''),
    '',
    '| | tokens | % |',
    '|---|---:|---:|',
    ...breakdownRows(u).map((r) => `| ${r.label} | ${tokens(r.tokens)} | ${r.percent.toFixed(1)}% |`),
    '',
  ];
  const t = u.totals;
  if (t) {
    lines.push(
      `Session: ${tokens(t.inputTokens)} in` +
        (t.cachedTokens ? ` (${tokens(t.cachedTokens)} cached)` : '') +
        ` · ${tokens(t.outputTokens)} out` +
        (t.thoughtTokens ? ` (${tokens(t.thoughtTokens)} thinking)` : '') +
        ` · ${costLabel(t.cost)}`,
      '',
    );
    if (t.subagents) lines.push(`Subagents: ${escapeMarkdown(t.subagents.text)}, counted above`, '');
  }
  if (u.cache) {
    lines.push(`Cache: ${tokens(u.cache.reported)} of ${tokens(u.cache.expected)} expected cached tokens · ${hitRateText(u.cache)}`, '');
  }
  // Why calls were billed in full: the server's words ("3 uncached calls: 1 first call, …").
  if (t?.misses?.text) lines.push(escapeMarkdown(t.misses.text), '');
  const count = u.compaction?.count ?? 0;
  lines.push(
    `Compacts at ${Math.round(u.compactAt * 100)}%, blocks at ${Math.round(u.blockAt * 100)}%` +
      (count ? ` · ${count} compaction${count === 1 ? '' : 's'}` : ''),
  );
  if (busyCompacting) lines.push('', '_Compacting…_');
  const decision = u.compaction?.decision;
  if (decision) lines.push('', `_${escapeMarkdown(decision)}_`);
  else if (!busyCompacting) lines.push('', compactionPlan(u));
  if (picker?.model) lines.push('', `New sessions: \`${picker.model.replace(/`/g, '')}\` · [$(chip) Select Model](command:${picker.command})`);
  lines.push('', 'Click to show the context view.');
  return lines.join('\n');
}

/**
 * compactionPlan says what happens to the context from here, in the absence of a decision the
 * server explains: nothing below compactAt, then clearing or a summary when it pays, and a wait at
 * blockAt; Compact Session summarizes at once.
 */
export function compactionPlan(u: Pick<ContextUsage, 'percent' | 'size' | 'compactAt' | 'blockAt'> & { totals?: Pick<Totals, 'cost'> }): string {
  const at = Math.round(u.compactAt * 100);
  const block = Math.round(u.blockAt * 100);
  // A local model is free: what the context costs it is time.
  const pays = u.totals?.cost?.local ? 'in time (the local model is free)' : 'in dollars';
  if (u.percent < u.compactAt * 100) {
    return `Below ${at}% (${tokens(u.compactAt * u.size)} tokens) the context is kept as it is. From there, old tool results are cleared or a summary starts when it pays for itself ${pays}; at ${block}% the agent waits for one. *Compact Session* summarizes now.`;
  }
  return `Past ${at}%: old tool results are cleared or a summary starts as soon as it pays for itself ${pays}; at ${block}% (${tokens(u.blockAt * u.size)} tokens) the agent waits for one.`;
}

/** escapeMarkdown keeps a server's text literal in a Markdown tooltip. */
function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-!|<>$]/g, (c) => `\\${c}`);
}
