// The context view's HTML: a stacked bar of the breakdown, its legend, and the largest items with
// stale ones marked. Pure, so the unit tests read it.
import { escape } from './chat/render';
import { breakdownRows, costText, tokens, turnsAndCalls } from './meter';
import { MCPStateRunning, SourceEstimate } from './protocol';
import type { ContextResult, MCPResult } from './protocol';

const colors: Record<string, string> = {
  systemPrompt: '#8e6cd1',
  customInstructions: '#d16cb4',
  workspaceMap: '#6cb47a',
  tools: '#4f8fd1',
  mcpTools: '#3fb0b0',
  messages: '#d19a3f',
  free: 'rgba(128,128,128,0.25)',
  buffer: 'rgba(128,128,128,0.55)',
};

/**
 * mcpSection lists the MCP servers: their state, their tools, what the tools declared cost this
 * session per request; a server not running says why.
 */
export function mcpSection(c: ContextResult, servers?: MCPResult): string {
  const shares = new Map((c.mcp ?? []).map((m) => [m.server, m]));
  const list = servers?.servers ?? [];
  if (list.length === 0 && shares.size === 0) return '';
  const rows = list
    .map((s) => {
      const sh = shares.get(s.name);
      const deferred = s.tools.filter((t) => t.deferred).length;
      const tools = `${s.tools.length - deferred} declared${deferred ? `, ${deferred} via catalogue` : ''}`;
      const why = s.state !== MCPStateRunning && s.error ? `<div class="why">${escape(s.error)}</div>` : '';
      return `<tr class="mcp ${escape(s.state)}"><td>${escape(s.name)}${why}</td><td>${escape(s.state)}</td><td>${tools}</td><td class="num">${sh ? tokens(sh.tokens) : '—'}</td></tr>`;
    })
    .join('');
  const catalogue = shares.get('');
  const cat = catalogue ? `<tr><td>(catalogue: mcp_find_tools, mcp_call_tool)</td><td></td><td>2 declared</td><td class="num">${tokens(catalogue.tokens)}</td></tr>` : '';
  return `<h3>MCP servers</h3>
<table class="mcp"><tr><th>Server</th><th>State</th><th>Tools</th><th class="num">Tokens</th></tr>${cat}${rows}</table>`;
}

/** pinsSection lists the pinned items: kept in the context whatever is compacted. */
export function pinsSection(c: Pick<ContextResult, 'pins' | 'pinnedTokens'>): string {
  const pins = c.pins ?? [];
  if (pins.length === 0) return '';
  const total = c.pinnedTokens ?? pins.reduce((n, p) => n + (p.tokens || 0), 0);
  const rows = pins
    .map((p) => `<tr><td>${escape(p.kind === 'file' ? p.path || p.label : p.label)}</td><td>${escape(p.kind)}</td><td class="num">${tokens(p.tokens)}</td></tr>`)
    .join('');
  return `<h3>Pinned · ${tokens(total)} tokens</h3>
<p class="sub">Kept in the context whatever is compacted.</p>
<table class="pinned"><tr><th>Item</th><th>Kind</th><th class="num">Tokens</th></tr>${rows}</table>`;
}

/** forgetNoteCommand is the command a note's Delete link runs (a command URI: the view runs no script). */
export const forgetNoteCommand = 'reprise.ui.forgetNote';

/**
 * memoSection is the agent's plan (its progress, then each item) and its notes, each with a
 * Delete link: what the server restates to the model after every compaction.
 */
export function memoSection(c: Pick<ContextResult, 'state'>): string {
  const plan = c.state?.plan ?? [];
  const notes = c.state?.notes ?? [];
  let out = '';
  if (plan.length > 0) {
    const done = plan.filter((t) => t.status === 'completed').length;
    const rows = plan.map((t) => `<li class="todo ${escape(t.status)}"><span class="status">${escape(t.status.replace('_', ' '))}</span> ${escape(t.description)}</li>`).join('');
    out += `<h3>Plan · ${done} of ${plan.length} done</h3>\n<ol class="plan">${rows}</ol>`;
  }
  if (notes.length > 0) {
    const rows = notes
      .map((n) => {
        const uri = `command:${forgetNoteCommand}?${encodeURIComponent(JSON.stringify([n.key]))}`;
        const label = `Delete the note ${n.key}: the agent is told`;
        return `<tr><td class="key">${escape(n.key)}</td><td class="value">${escape(n.value)}</td><td><a href="${escape(uri)}" title="${escape(label)}" aria-label="${escape(label)}">Delete</a></td></tr>`;
      })
      .join('');
    out += `<h3>Notes · ${notes.length}</h3>
<p class="sub">Exact values the agent saved, restated to it after every compaction.</p>
<table class="notes"><tr><th>Key</th><th>Value</th><th></th></tr>${rows}</table>`;
  }
  return out;
}

/** modelText names the session's model, and the model that answered when the API named another. */
export function modelText(c: Pick<ContextResult, 'model' | 'servedModel'>): string {
  const served = c.servedModel && c.servedModel !== c.model ? ` <span class="served">(answered by ${escape(c.servedModel)})</span>` : '';
  return `${escape(c.model)}${served}`;
}

export function contextBody(c: ContextResult, servers?: MCPResult): string {
  const rows = breakdownRows(c);
  const bar = rows
    .filter((r) => r.tokens > 0)
    .map((r) => `<div class="seg ${r.key}" style="width:${r.percent.toFixed(2)}%;background:${colors[r.key]}" title="${escape(r.label)}: ${tokens(r.tokens)}"></div>`)
    .join('');
  const legend = rows
    .map((r) => `<tr><td><span class="swatch" style="background:${colors[r.key]}"></span>${escape(r.label)}</td><td class="num">${tokens(r.tokens)}</td><td class="num">${r.percent.toFixed(1)}%</td></tr>`)
    .join('');
  const largest = (c.largest ?? [])
    .map(
      (it) =>
        `<tr class="${it.stale ? 'stale' : ''}"><td>${escape(it.label)}${it.stale ? ' <span class="badge">stale</span>' : ''}</td><td>${escape(it.kind)}</td><td class="num">${tokens(it.tokens)}</td></tr>`,
    )
    .join('');
  const t = c.totals;
  return `<h2>Context · ${Math.round(c.percent)}% · ${tokens(c.used)}/${tokens(c.size)} tokens</h2>
<p class="sub">${modelText(c)} · session ${escape(c.sessionId)} · ${escape(c.status)}${c.source === SourceEstimate ? ' · estimated' : ''}</p>
<div class="bar" role="img" aria-label="Context breakdown">${bar}</div>
<table class="legend">${legend}</table>
<p>Compacts at ${Math.round(c.compactAt * 100)}%, blocks at ${Math.round(c.blockAt * 100)}% · ${plural(c.compaction?.count ?? 0, 'compaction')} · ${plural(c.checkpoints, 'checkpoint')}</p>
<p>Session: ${tokens(t.inputTokens)} in${t.cachedTokens ? ` (${tokens(t.cachedTokens)} cached)` : ''} · ${tokens(t.outputTokens)} out${t.thoughtTokens ? ` (${tokens(t.thoughtTokens)} thinking)` : ''} · <span class="cost${t.cost?.unknown ? ' unknown' : ''}">${escape(costText(t.cost))}</span> · ${turnsAndCalls(c.turns, c.calls)} · ${plural(c.rereads, 're-read')}</p>
${t.summaries ? `<p>Summaries: ${escape(t.summaries.text)}</p>` : ''}
${t.subagents ? `<p class="subagents">Subagents: ${escape(t.subagents.text)}, counted in the session's figures</p>` : ''}
${mcpSection(c, servers)}
${pinsSection(c)}
${memoSection(c)}
<h3>Largest items</h3>
${largest ? `<table class="largest"><tr><th>Item</th><th>Kind</th><th class="num">Tokens</th></tr>${largest}</table>` : '<p>None yet.</p>'}`;
}

export const contextStyle = `
body { font-family: var(--vscode-font-family); color: var(--vscode-foreground); padding: 12px 20px; }
.sub { opacity: 0.75; }
.bar { display: flex; height: 22px; width: 100%; border-radius: 4px; overflow: hidden; border: 1px solid var(--vscode-panel-border); }
.seg { height: 100%; }
table { border-collapse: collapse; margin: 8px 0; }
td, th { padding: 2px 10px 2px 0; text-align: left; }
.num { text-align: right; }
.swatch { display: inline-block; width: 10px; height: 10px; margin-right: 6px; border-radius: 2px; }
tr.stale td { color: var(--vscode-editorWarning-foreground); }
.badge { font-size: 0.8em; border: 1px solid currentColor; border-radius: 3px; padding: 0 4px; }
tr.mcp.failed td, tr.mcp.untrusted td { color: var(--vscode-editorWarning-foreground); }
.why { font-size: 0.85em; opacity: 0.85; }
.cost.unknown, .served { color: var(--vscode-editorWarning-foreground); }
ol.plan { margin: 4px 0; padding-left: 22px; }
ol.plan .status { display: inline-block; min-width: 6.5em; opacity: 0.75; font-size: 0.9em; }
ol.plan .cancelled { text-decoration: line-through; opacity: 0.7; }
table.notes td { vertical-align: top; }
table.notes .key { font-family: var(--vscode-editor-font-family); white-space: nowrap; }
table.notes .value { white-space: pre-wrap; }
`;

/** plural: "1 checkpoint", "2 checkpoints", never "(s)". */
function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
