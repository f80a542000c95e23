// Renders a chat transcript to HTML. Pure (no DOM): the webview sets it as innerHTML, the unit
// tests read it. Markdown comes through md, which must not pass raw HTML through.
import { tokens } from '../meter';
import { CompactionBlocking, CompactionDone, CompactionRunning, StopEndTurn, ToolStatusCompleted, ToolStatusFailed, ToolStatusInProgress } from '../protocol';
import type { ChangeRow, ChatState, EditDiff, Item } from './state';

export function escape(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

const statusIcon: Record<string, string> = { [ToolStatusInProgress]: '…', [ToolStatusCompleted]: '✓', [ToolStatusFailed]: '✗' };

/** renderItems renders the transcript; open holds the keys of the details elements left open. */
export function renderItems(chat: ChatState, md: (s: string) => string, open: Set<string>): string {
  return chat.items.map((it, i) => renderItem(it, i, md, open)).join('\n');
}

function details(key: string, cls: string, summary: string, body: string, open: Set<string>): string {
  return `<details class="${cls}" data-key="${escape(key)}"${open.has(key) ? ' open' : ''}><summary>${summary}</summary>${body}</details>`;
}

function renderItem(it: Item, i: number, md: (s: string) => string, open: Set<string>): string {
  switch (it.type) {
    case 'user': {
      const chip = it.attachment ? `<div class="attachment">${escape(it.attachment)}</div>` : '';
      return `<div class="msg user"><div class="who">You</div><div class="body">${escape(it.text)}</div>${chip}</div>`;
    }
    case 'agent':
      return `<div class="msg agent"><div class="who">Reprise</div><div class="body markdown">${md(it.text)}</div></div>`;
    case 'thought':
      return details(`thought-${i}`, 'thought', 'Thinking', `<div class="markdown">${md(it.text)}</div>`, open);
    case 'tool': {
      const icon = statusIcon[it.status] ?? '•';
      const out = it.output;
      const body = [
        it.diff ? renderDiff(it.diff) : '',
        it.input ? `<div class="label">Input</div><pre>${escape(JSON.stringify(it.input, null, 2))}</pre>` : '',
        out
          ? `<div class="label">Result${out.refused ? ' (refused)' : ''}${out.omitted ? ` · ${out.omitted} characters omitted` : ''}</div><pre>${escape(out.output)}</pre>` +
            (out.savedPath ? `<div class="saved">Whole output: ${escape(out.savedPath)}</div>` : '')
          : '',
      ].join('');
      const d = it.diff;
      const countsHtml = d && !d.note ? ` ${countsOf(d.added, d.removed)}` : '';
      const summary = `<span class="icon">${icon}</span> <span class="title">${titleWithLink(it.title, it.input, d)}</span>${countsHtml} <span class="status">${escape(it.status.replace('_', ' '))}</span>`;
      return details(`tool-${it.id}`, `tool ${escape(it.kind)} ${escape(it.status)}`, summary, body, open);
    }
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
      } else text = `Compaction ${escape(it.state)}${it.note ? `: ${escape(it.note)}` : ''}`;
      return `<div class="marker compaction ${escape(it.state)}">${text}</div>`;
    }
    case 'changes':
      return renderChanges(it.turn, it.files);
    case 'retry':
      return `<div class="marker retry">Retrying (attempt ${it.attempt}): ${escape(it.error)}</div>`;
    case 'end':
      if (it.stopReason === StopEndTurn) return '';
      return `<div class="marker end ${escape(it.stopReason)}">Stopped: ${escape(it.stopReason.replace(/_/g, ' '))}${it.error ? ` — ${escape(it.error)}` : ''}</div>`;
    case 'error':
      return `<div class="marker error">${escape(it.text)}</div>`;
  }
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

function renderChanges(turn: number, files: readonly ChangeRow[]): string {
  const open = files.filter((f) => f.review === 'pending' || f.review === 'refused');
  const all = open.length > 1
    ? ` <span class="actions"><button class="secondary" data-act="keep" data-all="1">Keep all</button> <button class="secondary" data-act="undo" data-all="1">Undo all</button></span>`
    : '';
  const rows = files
    .map((f) => {
      const state = f.state === 'modified' ? '' : ` <span class="state">${escape(f.state)}</span>`;
      const counts = f.binary ? ' <span class="state">binary</span>' : ` ${countsOf(f.added, f.removed)}`;
      const diff = f.state !== 'deleted' || f.diff ? ` <a href="#" class="opendiff" data-path="${escape(f.path)}" data-turn="${turn}">Diff</a>` : '';
      const user = f.userChanged && f.review === 'pending' ? ' <span class="state">edited since</span>' : '';
      const buttons = f.review === 'pending' || f.review === 'refused'
        ? ` <button class="secondary" data-act="keep">Keep</button> <button class="secondary" data-act="undo">Undo</button>`
        : ` <span class="done">${reviewLabel[f.review]}</span>`;
      const reason = f.review === 'refused' && f.reason ? `<div class="reason">${escape(reviewLabel.refused)}: ${escape(f.reason)}</div>` : '';
      const link = f.state === 'deleted' ? escape(f.path) : fileLink(f.path, escape(f.path));
      return `<div class="row ${f.review}" data-path="${escape(f.path)}"><span class="name">${link}${state}${counts}${user}</span><span class="actions">${diff}${buttons}</span>${reason}</div>`;
    })
    .join('');
  return `<div class="changes" data-turn="${turn}"><div class="head">Changes · ${files.length} file${files.length === 1 ? '' : 's'}${all}</div>${rows}</div>`;
}
