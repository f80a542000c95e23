// The chat webview's script (bundled for the browser): renders the state the host posts and sends
// the user's questions back.
import MarkdownIt from 'markdown-it';
import { meterText } from '../meter';
import type { FromWebview, ToWebview } from './messages';
import { pathLinks } from './links';
import { escape, renderItems } from './render';

declare function acquireVsCodeApi(): { postMessage(m: FromWebview): void };

const vscode = acquireVsCodeApi();
const md = new MarkdownIt({ html: false, linkify: true, breaks: false }).use(pathLinks);
const log = document.getElementById('log')!;
const input = document.getElementById('input') as HTMLTextAreaElement;
const send = document.getElementById('send') as HTMLButtonElement;
const stop = document.getElementById('stop') as HTMLButtonElement;
const meter = document.getElementById('meter')!;
const attachment = document.getElementById('attachment')!;
const open = new Set<string>();
let asked = 0;

function submit(): void {
  const text = input.value.trim();
  if (!text) return;
  vscode.postMessage({ type: 'ask', text });
  input.value = '';
}

send.addEventListener('click', submit);
stop.addEventListener('click', () => vscode.postMessage({ type: 'cancel' }));
meter.addEventListener('click', () => vscode.postMessage({ type: 'context' }));
input.addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    submit();
  }
});
log.addEventListener(
  'toggle',
  (e) => {
    const d = e.target as HTMLDetailsElement;
    const key = d.dataset.key;
    if (key) (d.open ? open.add(key) : open.delete(key));
  },
  true,
);
log.addEventListener('click', (e) => {
  const target = e.target as HTMLElement;
  const a = target.closest('a') as HTMLAnchorElement | null;
  if (a) {
    // Every link is the webview's own: none navigates (the answers' Markdown links are rewritten,
    // links.ts). A link inside a tool's summary must not also fold or unfold it.
    e.preventDefault();
    e.stopPropagation();
    const d = a.dataset;
    if (a.classList.contains('checkpoint')) vscode.postMessage({ type: 'checkpoint', n: Number(d.n) });
    else if (a.classList.contains('file')) vscode.postMessage({ type: 'openFile', path: d.path ?? '', line: d.line ? Number(d.line) : undefined });
    else if (a.classList.contains('opendiff')) vscode.postMessage({ type: 'openDiff', path: d.path ?? '', turn: Number(d.turn) });
    else if (a.classList.contains('web')) vscode.postMessage({ type: 'openLink', url: d.href ?? '' });
    return;
  }
  const b = target.closest('.changes button') as HTMLButtonElement | null;
  if (!b) return;
  const box = b.closest('.changes') as HTMLElement;
  const rows = b.dataset.all
    ? Array.from(box.querySelectorAll<HTMLElement>('.row.pending, .row.refused'))
    : [b.closest('.row') as HTMLElement];
  const action = b.dataset.act === 'undo' ? 'undo' : 'keep';
  vscode.postMessage({ type: 'review', action, turn: Number(box.dataset.turn), paths: rows.map((r) => r.dataset.path ?? '') });
});
attachment.addEventListener('click', (e) => {
  if ((e.target as HTMLElement).closest('.detach')) vscode.postMessage({ type: 'detach' });
});

window.addEventListener('message', (e: MessageEvent<ToWebview>) => {
  const m = e.data;
  if (m.type === 'focus') {
    input.focus();
    return;
  }
  // Follow the stream while the reader is at the bottom, and always after a new question.
  const questions = m.chat.items.filter((it) => it.type === 'user').length;
  const atBottom = log.scrollHeight - log.scrollTop - log.clientHeight < 40 || questions > asked;
  asked = questions;
  log.innerHTML = m.chat.items.length
    ? renderItems(m.chat, (s) => md.render(s), open)
    : '<div class="empty">Ask Reprise about this workspace.</div>';
  if (atBottom) log.scrollTop = log.scrollHeight;
  stop.hidden = !m.chat.running;
  attachment.hidden = !m.attachment;
  attachment.innerHTML = m.attachment ? `<span>${escape(m.attachment)}</span> <a href="#" class="detach" title="Do not send the selection">×</a>` : '';
  if (m.usage) {
    meter.textContent = `Context ${meterText(m.usage, false)}`;
    meter.hidden = false;
  } else meter.hidden = true;
});

vscode.postMessage({ type: 'ready' });
