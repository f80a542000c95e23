// The chat webview's script (bundled for the browser): renders the state the host posts and sends
// the user's questions back.
import MarkdownIt from 'markdown-it';
import { meterText } from '../meter';
import type { FromWebview, ToWebview } from './messages';
import { renderItems } from './render';

declare function acquireVsCodeApi(): { postMessage(m: FromWebview): void };

const vscode = acquireVsCodeApi();
const md = new MarkdownIt({ html: false, linkify: true, breaks: false });
const log = document.getElementById('log')!;
const input = document.getElementById('input') as HTMLTextAreaElement;
const send = document.getElementById('send') as HTMLButtonElement;
const stop = document.getElementById('stop') as HTMLButtonElement;
const meter = document.getElementById('meter')!;
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
  const a = (e.target as HTMLElement).closest('a.checkpoint') as HTMLAnchorElement | null;
  if (a) {
    e.preventDefault();
    vscode.postMessage({ type: 'checkpoint', n: Number(a.dataset.n) });
  }
});

window.addEventListener('message', (e: MessageEvent<ToWebview>) => {
  const m = e.data;
  if (m.type !== 'state') return;
  // Follow the stream while the reader is at the bottom, and always after a new question.
  const questions = m.chat.items.filter((it) => it.type === 'user').length;
  const atBottom = log.scrollHeight - log.scrollTop - log.clientHeight < 40 || questions > asked;
  asked = questions;
  log.innerHTML = m.chat.items.length
    ? renderItems(m.chat, (s) => md.render(s), open)
    : '<div class="empty">Ask Reprise about this workspace.</div>';
  if (atBottom) log.scrollTop = log.scrollHeight;
  stop.hidden = !m.chat.running;
  if (m.usage) {
    meter.textContent = `Context ${meterText(m.usage, false)}`;
    meter.hidden = false;
  } else meter.hidden = true;
});

vscode.postMessage({ type: 'ready' });
