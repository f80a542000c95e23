// Renders a chat transcript to HTML. Pure (no DOM): the webview sets it as innerHTML, the unit
// tests read it. Markdown comes through md, which must not pass raw HTML through.
import { tokens } from '../meter';
import { CompactionBlocking, CompactionDone, CompactionRunning, StopEndTurn, ToolStatusCompleted, ToolStatusFailed, ToolStatusInProgress } from '../protocol';
import type { ChatState, Item } from './state';

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
    case 'user':
      return `<div class="msg user"><div class="who">You</div><div class="body">${escape(it.text)}</div></div>`;
    case 'agent':
      return `<div class="msg agent"><div class="who">Reprise</div><div class="body markdown">${md(it.text)}</div></div>`;
    case 'thought':
      return details(`thought-${i}`, 'thought', 'Thinking', `<div class="markdown">${md(it.text)}</div>`, open);
    case 'tool': {
      const icon = statusIcon[it.status] ?? '•';
      const out = it.output;
      const body = [
        it.input ? `<div class="label">Input</div><pre>${escape(JSON.stringify(it.input, null, 2))}</pre>` : '',
        out
          ? `<div class="label">Result${out.refused ? ' (refused)' : ''}${out.omitted ? ` · ${out.omitted} characters omitted` : ''}</div><pre>${escape(out.output)}</pre>` +
            (out.savedPath ? `<div class="saved">Whole output: ${escape(out.savedPath)}</div>` : '')
          : '',
      ].join('');
      const summary = `<span class="icon">${icon}</span> <span class="title">${escape(it.title)}</span> <span class="status">${escape(it.status.replace('_', ' '))}</span>`;
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
        text = `Context compacted${trigger}${counts} · <a href="#" class="checkpoint" data-n="${cp.n}">Checkpoint ${cp.n}: ${escape(cp.title)}</a>`;
      } else text = `Compaction ${escape(it.state)}${it.note ? `: ${escape(it.note)}` : ''}`;
      return `<div class="marker compaction ${escape(it.state)}">${text}</div>`;
    }
    case 'retry':
      return `<div class="marker retry">Retrying (attempt ${it.attempt}): ${escape(it.error)}</div>`;
    case 'end':
      if (it.stopReason === StopEndTurn) return '';
      return `<div class="marker end ${escape(it.stopReason)}">Stopped: ${escape(it.stopReason.replace(/_/g, ' '))}${it.error ? ` — ${escape(it.error)}` : ''}</div>`;
    case 'error':
      return `<div class="marker error">${escape(it.text)}</div>`;
  }
}
