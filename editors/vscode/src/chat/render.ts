// Renders a chat transcript to HTML. Pure (no DOM): the webview sets it as innerHTML, the unit
// tests read it. Markdown comes through md, which must not pass raw HTML through.
import { costText, tokens } from '../meter';
import { ReviewKept, CompactionBlocking, CompactionDone, CompactionRunning, StopCapped, StopEndTurn, ToolKindExecute, ToolStatusCompleted, ToolStatusFailed, ToolStatusInProgress } from '../protocol';
import type { LiveOutput, Pin, PlanEntry, Subagent, ToolOutput } from '../protocol';
import { hunkLine, hunkLines, progressOf, progressText, reviewedByHunk } from '../hunks';
import { commandPattern } from './approval';
import type { Approval } from './approval';
import type { ChangeRow, ChatState, EditDiff, Item } from './state';
import { messageTurn, pinOf, seconds } from './state';

export function escape(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** icon is a codicon (the webview loads VS Code's icon font). */
export function icon(name: string, label?: string, extra = ''): string {
  return `<span class="codicon codicon-${name}${extra ? ` ${extra}` : ''}"${label ? ` role="img" aria-label="${escape(label)}" title="${escape(label)}"` : ' aria-hidden="true"'}></span>`;
}

const statusIcon: Record<string, [string, string]> = {
  [ToolStatusInProgress]: ['loading', 'running'],
  [ToolStatusCompleted]: ['check', 'completed'],
  [ToolStatusFailed]: ['error', 'failed'],
};

/**
 * exitCode is the status a command that ran reported (a test run with failures, a grep that
 * found nothing): the tool worked, the command said no. Undefined for any other failure.
 */
export function exitCode(kind: string, status: string, out: ToolOutput | undefined): number | undefined {
  if (kind !== ToolKindExecute || status !== ToolStatusFailed || !out || out.refused) return undefined;
  const m = /(?:^|\n)exit status (\d+)\s*$/.exec(out.output);
  return m ? Number(m[1]) : undefined;
}

/** renderItems renders the transcript; open holds the keys of the details elements left open. */
export function renderItems(chat: ChatState, md: (s: string) => string, open: Set<string>, now = 0): string {
  let lastEnd = -1;
  chat.items.forEach((it, i) => {
    if (it.type === 'end' || it.type === 'error') lastEnd = i;
  });
  // Retry is offered on the last stop only, and only when nothing was asked after it.
  const after = chat.items.slice(lastEnd + 1).some((it) => it.type === 'user');
  return chat.items
    .map((it, i) =>
      renderItem(it, i, md, open, i === lastEnd && !after && !chat.running, now, it.type === 'user' || it.type === 'agent' ? forkButton(chat, i, it.type) + pinButton(chat, i, it.text) : ''),
    )
    .join('\n');
}

/**
 * pinButton is a message's Pin action (shown on hover and on focus): it pins the message's text
 * with its turn; on a message already pinned it reads Pinned and unpins.
 */
function pinButton(chat: ChatState, i: number, text: string): string {
  if (!text.trim()) return '';
  const p = pinOf(chat.pins, text);
  if (p) {
    const label = `Pinned (${p.id}): unpin this message`;
    return `<button class="icon-button pin pinned" data-unpin="${escape(p.id)}" title="${label}" aria-label="${label}" aria-pressed="true">${icon('pinned')}</button>`;
  }
  const turn = messageTurn(chat.items, i);
  const label = 'Pin this message: keep it in the context';
  return `<button class="icon-button pin" data-pin="${i}"${turn ? ` data-turn="${turn}"` : ''} title="${label}" aria-label="${label}" aria-pressed="false">${icon('pin')}</button>`;
}

/**
 * forkButton is a question's Fork action (shown on hover and on focus, not while a turn runs): a
 * new session from just before this question, the original kept.
 */
function forkButton(chat: ChatState, i: number, type: string): string {
  const turn = type === 'user' ? messageTurn(chat.items, i) : undefined;
  if (!turn || chat.running) return '';
  const label = `Fork from here: a new session from before this question (turn ${turn}); this one is kept`;
  return `<button class="icon-button fork" data-fork-turn="${turn}" title="${label}" aria-label="${label}">${icon('repo-forked')}</button>`;
}

/** pinName is what the Pinned strip shows for a pin: a file's name, or the start of a text, on one line. */
export function pinName(p: Pin): string {
  if (p.kind === 'file') {
    const path = p.path || p.label;
    return path.split(/[\\/]/).filter(Boolean).pop() ?? path;
  }
  const one = (p.label || p.text || '').replace(/\s+/g, ' ').trim();
  return one.length > 40 ? `${one.slice(0, 39).trimEnd()}…` : one;
}

/**
 * renderPins is the Pinned strip: each pin with its name (a file opens on a click), its tokens and
 * an unpin button. Empty when nothing is pinned.
 */
export function renderPins(pins: readonly Pin[] | undefined): string {
  if (!pins || pins.length === 0) return '';
  const total = pins.reduce((n, p) => n + (p.tokens || 0), 0);
  const rows = pins
    .map((p) => {
      const name = pinName(p);
      const full = p.kind === 'file' ? p.path || p.label : (p.text ?? p.label);
      const title = full.length > 300 ? `${full.slice(0, 299)}…` : full;
      const what = p.kind === 'file' ? fileLink(p.path || p.label, escape(name)) : `<span class="text" title="${escape(title)}">“${escape(name)}”</span>`;
      const unpin = `Unpin ${p.kind === 'file' ? name : `“${name}”`}`;
      return `<span class="pin-chip ${p.kind}" role="listitem" data-id="${escape(p.id)}">${icon(p.kind === 'file' ? 'file' : 'comment')} ${what} <span class="tokens" title="${p.tokens} tokens, kept in the context">${tokens(p.tokens)}</span><button class="icon-button unpin" data-unpin="${escape(p.id)}" title="${escape(unpin)}" aria-label="${escape(unpin)}">${icon('close')}</button></span>`;
    })
    .join('');
  return `<div class="pins-head">${icon('pinned')} Pinned · ${tokens(total)} tokens</div><div class="pins-list" role="list" aria-label="Pinned context">${rows}</div>`;
}

const planIcon: Record<string, [string, string]> = {
  pending: ['circle-large-outline', 'Pending'],
  in_progress: ['arrow-circle-right', 'In progress'],
  completed: ['pass-filled', 'Completed'],
  cancelled: ['circle-slash', 'Cancelled'],
};

/**
 * renderPlan is the agent's plan above the input, as Copilot's to-do list and Claude Code's: a
 * summary line with the progress and the item in progress, then every item with its status.
 * Empty when the agent keeps no plan. open: whether the list is shown.
 */
export function renderPlan(plan: readonly PlanEntry[] | undefined, open: boolean): string {
  if (!plan || plan.length === 0) return '';
  const done = plan.filter((t) => t.status === 'completed').length;
  const now = plan.find((t) => t.status === 'in_progress');
  const rows = plan
    .map((t) => {
      const [name, label] = planIcon[t.status] ?? planIcon.pending;
      return `<li class="todo ${escape(t.status)}">${icon(name, label)} <span class="text">${escape(t.description)}</span></li>`;
    })
    .join('');
  const current = now ? `<span class="now"> · ${escape(now.description)}</span>` : '';
  return `<details class="plan-box"${open ? ' open' : ''}><summary>${icon('checklist')} <span class="head">Plan · ${done} of ${plan.length} done</span>${current}</summary><ol class="plan-list" aria-label="The agent's plan">${rows}</ol></details>`;
}

/** inputView shows a tool's arguments as a person reads them: the command line, else one field a line. */
export function inputView(input: Record<string, unknown>): string {
  if (typeof input.command === 'string' && Object.keys(input).length <= 2) return `<pre class="cmd">$ ${escape(input.command)}</pre>`;
  // What the call is about first: the path or the command, then the rest as the model sent it.
  const first = ['path', 'command', 'query', 'pattern'];
  const entries = Object.entries(input).sort(([a], [b]) => (first.includes(b) ? 1 : 0) - (first.includes(a) ? 1 : 0));
  const rows = entries.map(([k, v]) => {
    const text = typeof v === 'string' ? v : JSON.stringify(v, null, 2);
    const long = text.includes('\n') || text.length > 80;
    return long
      ? `<div class="arg"><span class="key">${escape(k)}</span><pre>${escape(text)}</pre></div>`
      : `<div class="arg"><span class="key">${escape(k)}</span> <code>${escape(text)}</code></div>`;
  });
  return `<div class="args">${rows.join('')}</div>`;
}

const answerText: Record<string, [string, string]> = {
  allow: ['check', 'Allowed once'],
  always: ['check-all', 'Always allowed'],
  reject: ['circle-slash', 'Denied'],
  withdrawn: ['close', 'Not answered: the turn ended'],
};

const approvalWhat: Record<Approval['kind'], string> = {
  command: 'Reprise wants to run a command',
  mcp: 'Reprise wants to use a tool of an MCP server',
  file: 'Reprise wants to write a protected file',
};

function renderApproval(it: Extract<Item, { type: 'approval' }>): string {
  const a = it.approval;
  const cmd = `<code>${escape(a.command)}</code>`;
  if (it.answer) {
    const [ic, text] = answerText[it.answer];
    return `<div class="approval answered ${it.answer}" data-key="${escape(it.key)}">${icon(ic)} ${text}: ${cmd}</div>`;
  }
  const what = approvalWhat[a.kind];
  const rule = a.rule ?? commandPattern(a.command);
  const kbd = (k: string) => `<kbd>${k}</kbd>`;
  return `<div class="approval pending" data-key="${escape(it.key)}" role="group" aria-label="${what}">
<div class="head">${icon('shield')} ${what}</div>
<pre class="cmd">${a.kind === 'command' ? '$ ' : ''}${escape(a.command)}</pre>
<div class="why">Needs your approval: ${escape(a.reason)}</div>
<div class="answers">
<button data-answer="allow" title="Allow once (1 or Enter)">Allow once ${kbd('1')}</button>
<button class="secondary" data-answer="always" title="Always allow for this session (2)">Always allow ${kbd('2')}</button>
<button class="secondary" data-answer="reject" title="Deny (3 or Escape)">Deny ${kbd('3')}</button>
</div>
<div class="rule">Always allow remembers <code>${escape(rule)}</code> for the rest of this session${a.rule ? '' : ' (the command pattern)'}.</div>
</div>`;
}

/** stoppedText names a stop reason as a sentence. */
const stoppedText: Record<string, string> = {
  cancelled: 'Stopped: you cancelled the turn',
  capped: 'Stopped: the session reached its token cap (reprise.sessionTokenCap)',
  error: 'Stopped by an error',
  max_turn_requests: 'Stopped: the turn made as many model calls as reprise.maxTurnRequests allows',
  compaction_limit: 'Stopped: compacting no longer frees enough of the context',
};

function nextSteps(retry: boolean, apiKey: boolean): string {
  const b = [
    apiKey ? `<button data-next="apiKey">${icon('key')} Enter API key</button>` : '',
    retry ? `<button data-next="retry"${apiKey ? ' class="secondary"' : ''}>${icon('refresh')} Retry</button>` : '',
    `<button class="secondary" data-next="settings">${icon('settings-gear')} Open settings</button>`,
  ];
  return `<div class="next">${b.join('')}</div>`;
}

function details(key: string, cls: string, summary: string, body: string, open: Set<string>): string {
  return `<details class="${cls}" data-key="${escape(key)}"${open.has(key) ? ' open' : ''}><summary>${summary}</summary>${body}</details>`;
}

function renderItem(it: Item, i: number, md: (s: string) => string, open: Set<string>, last: boolean, now: number, pin: string): string {
  switch (it.type) {
    case 'user': {
      const chip = it.attachment ? `<div class="attachment">${escape(it.attachment)}</div>` : '';
      return `<div class="msg user" data-i="${i}"><div class="who"><span>You</span>${pin}</div><div class="body">${escape(it.text)}</div>${chip}</div>`;
    }
    case 'agent':
      return `<div class="msg agent" data-i="${i}"><div class="who"><span>Reprise</span>${pin}</div><div class="body markdown">${md(it.text)}</div></div>`;
    case 'thought':
      return details(`thought-${i}`, 'thought', 'Thinking', `<div class="markdown">${md(it.text)}</div>`, open);
    case 'tool': {
      if (it.subagent) return renderSubagent(it, it.subagent, open, now);
      const out = it.output;
      const exit = exitCode(it.kind, it.status, out);
      const [ic, label] = exit !== undefined ? ['warning', `exit status ${exit}`] : (statusIcon[it.status] ?? ['circle-outline', it.status.replace(/_/g, ' ')]);
      const body = [
        it.diff ? renderDiff(it.diff) : '',
        it.input ? `<div class="label">Input</div>${inputView(it.input)}` : '',
        out
          ? `<div class="label">${out.refused ? 'Refused' : 'Result'}${out.omitted ? ` · ${out.omitted} characters omitted` : ''}</div><pre>${escape(out.output)}</pre>` +
            (out.savedPath ? `<div class="saved">Whole output: ${escape(out.savedPath)}</div>` : '')
          : '',
      ].join('');
      const d = it.diff;
      const countsHtml = d && !d.note ? ` ${countsOf(d.added, d.removed)}` : '';
      // The time a call took, once it is worth saying (a second or more); a running command's
      // from the server, which counts from the command's start.
      const ms = it.started && (it.ended || now) ? (it.ended ?? now) - it.started : 0;
      const took = it.live
        ? ` <span class="elapsed">running · ${seconds(it.live.elapsedMs)}</span>`
        : ms >= 1000 ? ` <span class="elapsed">${seconds(ms)}</span>` : '';
      // A run that found failures says so: its exit status and its verdict ("FAIL example.com/x").
      const verdict = exit !== undefined && out?.verdict ? ` · ${escape(out.verdict)}` : '';
      const exitText = exit !== undefined ? ` <span class="exit">exit ${exit}${verdict}</span>` : '';
      // One status: the icon (its label says it in words), plus the exit status of a command that said no.
      const summary = `${icon('chevron-right', undefined, 'chev')}${icon(ic, label, `status${it.status === ToolStatusInProgress ? ' codicon-modifier-spin' : ''}`)} <span class="title">${titleWithLink(it.title, it.input, d)}</span>${countsHtml}${exitText}${took}`;
      const cls = exit !== undefined ? 'exited' : it.status;
      return details(`tool-${it.id}`, `tool ${escape(it.kind)} ${escape(cls)}`, summary, body, open) + (it.live ? liveView(it.live) : '');
    }
    case 'approval':
      return renderApproval(it);
    case 'compaction': {
      const cp = it.checkpoint;
      let text: string;
      if (it.state === CompactionRunning || it.state === CompactionBlocking)
        text = `Compacting the context${it.state === CompactionBlocking ? ' (the agent waits)' : ''}…`;
      else if (it.state === CompactionDone && cp) {
        // A marker rebuilt from reprise.history may lack the trigger and the token counts.
        const trigger = it.trigger ? ` (${escape(it.trigger)})` : '';
        const counts = cp.tokensBefore || cp.tokensAfter ? `: ${tokens(cp.tokensBefore)} → ${tokens(cp.tokensAfter)} tokens` : '';
        text = cp.cleared
          ? `${cp.cleared} old tool result${cp.cleared === 1 ? '' : 's'} cleared, ${tokens(cp.tokensBefore - cp.tokensAfter)} tokens freed; the model reads them again on demand · <a href="#" class="checkpoint" data-n="${cp.n}">Checkpoint ${cp.n}</a>`
          : `Context compacted${trigger}${counts} · <a href="#" class="checkpoint" data-n="${cp.n}">Checkpoint ${cp.n}: ${escape(cp.title)}</a>`;
        const label = `Fork from checkpoint ${cp.n}: a new session from right after it; this one is kept`;
        text += ` <button class="icon-button fork" data-fork-checkpoint="${cp.n}" title="${label}" aria-label="${label}">${icon('repo-forked')}</button>`;
      } else text = `Compaction ${escape(it.state)}${it.note ? `: ${escape(it.note)}` : ''}`;
      return `<div class="marker compaction ${escape(it.state)}">${text}</div>`;
    }
    case 'changes':
      return renderChanges(it.turn, it.files, open);
    case 'retry': {
      // attempt is the attempt about to be made: the second is the first retry.
      const n = Math.max(1, it.attempt - 1);
      return `<div class="marker retry">${icon('sync')} The model call was retried ${n === 1 ? 'once' : `${n} times`}: ${escape(it.error)}</div>`;
    }
    case 'end': {
      if (it.stopReason === StopEndTurn) return '';
      const text = stoppedText[it.stopReason] ?? `Stopped: ${it.stopReason.replace(/_/g, ' ')}`;
      const steps = last ? nextSteps(it.stopReason !== StopCapped, false) : '';
      return `<div class="marker end ${escape(it.stopReason)}">${icon(it.stopReason === 'cancelled' ? 'debug-stop' : 'error')} ${escape(text)}${it.error ? `<div class="detail">${escape(it.error)}</div>` : ''}${steps}</div>`;
    }
    case 'error': {
      const apiKey = /API_KEY|API key/i.test(it.text);
      return `<div class="marker error">${icon('error')} ${escape(it.text)}${last ? nextSteps(true, apiKey) : ''}</div>`;
    }
  }
}

/**
 * liveView is a running command's output so far, under its row whether the row is open or not:
 * a monospace block of bounded height that the webview keeps scrolled to its end.
 */
export function liveView(l: LiveOutput): string {
  const shown = new TextEncoder().encode(l.tail).length;
  const earlier = l.bytes > shown ? `<div class="note">… ${tokens(l.bytes - shown)} bytes before</div>` : '';
  // Silent for a few seconds: what it is likely doing, rather than an empty box.
  if (!l.tail && l.note) return `<div class="live" role="log" aria-label="Output so far"><div class="note quiet">${escape(l.note)}…</div></div>`;
  return `<div class="live" role="log" aria-label="Output so far">${earlier}<pre>${escape(l.tail)}</pre></div>`;
}

/** fileLink is a link the webview turns into "open this file at this line". */
export function fileLink(path: string, label: string, line?: number): string {
  return `${fileLinkOpen(path, line)}${label}</a>`;
}

/** fileLinkOpen is fileLink's opening tag. */
export function fileLinkOpen(path: string, line?: number): string {
  return `<a href="#" class="file" data-path="${escape(path)}"${line ? ` data-line="${line}"` : ''} title="Open ${escape(path)}${line ? ` at line ${line}` : ''}">`;
}

function countsOf(added: number, removed: number): string {
  return `<span class="counts"><span class="add">+${added}</span> <span class="del">−${removed}</span></span>`;
}

/** firstChangedLine is the line of the file (new side) an edit's first change is on. */
function firstChangedLine(d: EditDiff): number | undefined {
  let line = 0;
  for (const l of d.lines) {
    if (l.kind === '@') line = Number(/\+(\d+)/.exec(l.text)?.[1] ?? '1');
    else if (l.kind === ' ') line++;
    else return Math.max(line, 1);
  }
  return undefined;
}

/** titleWithLink links the path a tool worked on, where its title names it. */
function titleWithLink(title: string, input: Record<string, unknown> | undefined, d: EditDiff | undefined): string {
  const p = input?.path;
  if (typeof p !== 'string' || !p) return escape(title);
  const i = title.indexOf(p);
  if (i < 0) return escape(title);
  const line = d ? firstChangedLine(d) : undefined;
  return escape(title.slice(0, i)) + fileLink(p, escape(p), line) + escape(title.slice(i + p.length));
}

function renderDiff(d: EditDiff): string {
  if (d.note) return `<div class="label">Diff</div><div class="note">${escape(d.note)}</div>`;
  const lines = d.lines
    .map((l) => `<div class="dl ${l.kind === '@' ? 'hunk' : l.kind === '+' ? 'add' : l.kind === '-' ? 'del' : 'ctx'}">${escape(l.kind === '@' ? l.text : l.kind + l.text)}</div>`)
    .join('');
  const more = d.more ? `<div class="note">… ${d.more} more lines: open the diff to see them all</div>` : '';
  const open = `<a href="#" class="opendiff" data-path="${escape(d.path)}" data-turn="${d.turn}">Open diff${d.created ? ' (new file)' : ''}</a>`;
  return `<div class="label">Diff ${open}</div><div class="diff">${lines}</div>${more}`;
}

const reviewLabel: Record<string, string> = { kept: 'Kept', undone: 'Undone', refused: 'Not undone' };

/**
 * rowReview is what a row shows: its file's review, or "reviewed" once every change left of a
 * file waiting for review was kept one by one (it then waits no more, as Copilot's list does).
 */
function rowReview(f: ChangeRow): { cls: string; open: boolean; done: string } {
  const p = progressOf(f);
  if (f.review === 'pending' && reviewedByHunk(p)) return { cls: 'reviewed', open: false, done: p.undone ? 'Reviewed' : 'Kept' };
  return { cls: f.review, open: f.review === 'pending' || f.review === 'refused', done: reviewLabel[f.review] ?? '' };
}

function renderChanges(turn: number, files: readonly ChangeRow[], expanded: Set<string>): string {
  const open = files.filter((f) => rowReview(f).open);
  // The list's toolbar stays while any file waits for a decision: Keep / Undo for one file,
  // Keep all / Undo all for several. Each row has its own icon toolbar.
  const several = open.length > 1 || (open.length === 1 && files.length > 1);
  const all = open.length > 0
    ? `<span class="toolbar"><button class="keep" data-act="keep" data-all="1" title="Keep ${several ? 'every file left' : 'the change'}">${icon('check-all')} ${several ? 'Keep all' : 'Keep'}</button><button class="secondary" data-act="undo" data-all="1" title="Undo ${several ? 'every file left' : 'the change'}">${icon('discard')} ${several ? 'Undo all' : 'Undo'}</button></span>`
    : '';
  const rows = files.map((f) => renderChangeRow(turn, f, expanded)).join('');
  const left = open.length ? ` · ${open.length} to review` : '';
  return `<div class="changes" data-turn="${turn}"><div class="head"><span>Changes · ${files.length} file${files.length === 1 ? '' : 's'}${left}</span>${all}</div>${rows}</div>`;
}

function renderChangeRow(turn: number, f: ChangeRow, expanded: Set<string>): string {
  const rv = rowReview(f);
  const state = f.state === 'modified' ? '' : ` <span class="state">${escape(f.state)}</span>`;
  const counts = f.binary ? ' <span class="state">binary</span>' : ` ${countsOf(f.added, f.removed)}`;
  // A deleted file has a diff to open unless it was binary or too large.
  const diff = f.state !== 'deleted' || (!f.binary && !f.note)
    ? `<a href="#" class="opendiff icon-button" role="button" data-path="${escape(f.path)}" data-turn="${turn}" title="Open the diff of ${escape(f.path)}" aria-label="Open diff">${icon('diff')}</a>`
    : '';
  const user = f.userChanged && f.review === 'pending' ? ' <span class="state">edited since</span>' : '';
  const buttons = rv.open
    ? `<button class="icon-button" data-act="keep" title="Keep the agent's change to ${escape(f.path)}" aria-label="Keep">${icon('check')}</button><button class="icon-button" data-act="undo" title="Undo: put ${escape(f.path)} back as it was before the turn" aria-label="Undo">${icon('discard')}</button>`
    : `<span class="done">${icon(rv.cls === 'undone' ? 'discard' : 'check')} ${rv.done}</span>`;
  const reason = f.review === 'refused' && f.reason ? `<div class="reason">${escape(reviewLabel.refused)}: ${escape(f.reason)}</div>` : '';
  // The file's name whole, its folder after it, dimmed, cut first when the view is narrow:
  // as VS Code's source control list shows a changed file.
  const slash = f.path.lastIndexOf('/');
  const base = escape(f.path.slice(slash + 1));
  const dir = slash > 0 ? ` <span class="dir" title="${escape(f.path)}">${escape(f.path.slice(0, slash))}</span>` : '';
  const link = f.state === 'deleted' ? base : fileLink(f.path, base);
  return `<div class="row ${rv.cls}" data-path="${escape(f.path)}"><span class="name">${icon(f.state === 'created' ? 'new-file' : f.state === 'deleted' ? 'trash' : 'file')} ${link}${state}${counts}${user}${dir}</span><span class="actions">${diff}${buttons}</span>${reason}${renderHunks(turn, f, rv.open, expanded)}</div>`;
}

/**
 * renderHunks is a file's review by change: its progress ("3 changes · 1 kept · 1 undone") and,
 * while the file waits for review, a fold listing each change left with its lines (a link into
 * the diff editor) and its own Keep and Undo. Nothing for a file of one change: its row's buttons
 * do the same.
 */
function renderHunks(turn: number, f: ChangeRow, actionable: boolean, expanded: Set<string>): string {
  // Undone whole (at once, or its last change undone): the row's "Undone" says it all.
  if (f.review === 'undone') return '';
  const p = progressOf(f);
  const text = progressText(p);
  if (!text || text === '1 change') return '';
  const pending = (f.hunks ?? []).filter((h) => h.review !== ReviewKept);
  if (!actionable || pending.length === 0 || (p.total ?? 0) < 2) return `<div class="hunks-progress">${escape(text)}</div>`;
  const rows = (f.hunks ?? []).map((h) => {
    const where = hunkLines(h);
    const label = `${where[0].toUpperCase()}${where.slice(1)}`;
    const link = `<a href="#" class="opendiff" data-path="${escape(f.path)}" data-turn="${turn}" data-line="${hunkLine(h)}" title="Open the diff of ${escape(f.path)} at this change">${escape(label)}</a>`;
    const acts = h.review === ReviewKept
      ? `<span class="done">${icon('check')} Kept</span>`
      : `<button class="icon-button" data-hunk="${escape(h.id)}" data-hunk-act="keep" title="Keep this change" aria-label="Keep the change at ${escape(where)} of ${escape(f.path)}">${icon('check')}</button><button class="icon-button" data-hunk="${escape(h.id)}" data-hunk-act="undo" title="Undo this change alone" aria-label="Undo the change at ${escape(where)} of ${escape(f.path)}">${icon('discard')}</button>`;
    return `<div class="hunk ${h.review === ReviewKept ? 'kept' : 'pending'}">${link} ${countsOf(h.newLines, h.oldLines)}<span class="actions">${acts}</span></div>`;
  });
  const key = `hunks-${turn}-${f.path}`;
  return `<details class="hunks" data-key="${escape(key)}"${expanded.has(key) ? ' open' : ''}><summary title="Review the changes of ${escape(f.path)} one by one">${escape(text)}</summary>${rows.join('')}</details>`;
}

const subagentStatusIcon: Record<string, [string, string]> = {
  running: ['loading', 'running'],
  completed: ['check', 'completed'],
  failed: ['error', 'failed'],
  cancelled: ['circle-slash', 'stopped'],
};

/**
 * renderSubagent is a task call's row: the subagent's task, where it is (its model, calls, tokens
 * with their cached share, cost, the tool it runs now) and, unfolded, its task, its report, a Stop
 * button while it runs and its transcript once it is saved.
 */
function renderSubagent(it: Extract<Item, { type: 'tool' }>, sa: Subagent, open: Set<string>, now: number): string {
  const [ic, label] = subagentStatusIcon[sa.status] ?? ['circle-outline', sa.status];
  const running = sa.status === 'running';
  const t = sa.totals;
  const figures = [
    escape(sa.model),
    `${sa.calls} call${sa.calls === 1 ? '' : 's'}`,
    t && t.inputTokens ? `${tokens(t.inputTokens)} in${t.cachedTokens ? ` (${tokens(t.cachedTokens)} cached)` : ''}` : '',
    t && sa.calls ? escape(costText(t.cost)) : '',
  ].filter(Boolean);
  const doing = running && sa.tool ? `<span class="subagent-now">${icon('arrow-right')} ${escape(sa.tool)}</span>` : '';
  const ms = it.started && (it.ended || now) ? (it.ended ?? now) - it.started : 0;
  if (ms >= 1000) figures.push(seconds(ms));
  const summary = `${icon('chevron-right', undefined, 'chev')}${icon(ic, label, `status${running ? ' codicon-modifier-spin' : ''}`)} ${icon('hubot', 'subagent', 'kind')} <span class="title">${escape(it.title)}</span><span class="subagent-figures">${figures.join(' · ')}</span>${doing}`;
  const prompt = typeof it.input?.prompt === 'string' ? it.input.prompt : '';
  const actions = [
    running ? `<button class="secondary" data-subagent-stop="${escape(sa.subagentId)}" title="Stop this subagent; the turn goes on">${icon('debug-stop')} Stop</button>` : '',
    sa.saved ? `<button class="secondary" data-subagent-transcript="${escape(sa.subagentId)}" title="Open its whole transcript">${icon('book')} Transcript</button>` : '',
  ].filter(Boolean);
  const out = it.output;
  const body = [
    actions.length ? `<div class="subagent-actions">${actions.join('')}</div>` : '',
    prompt ? `<div class="label">Task</div><pre>${escape(prompt)}</pre>` : '',
    out ? `<div class="label">${out.refused ? 'Stopped' : 'Report'}</div><pre>${escape(out.output)}</pre>` : '',
    sa.error ? `<div class="label">Error</div><pre>${escape(sa.error)}</pre>` : '',
  ].join('');
  return details(`tool-${it.id}`, `tool subagent ${escape(sa.status)}`, summary, body, open);
}
