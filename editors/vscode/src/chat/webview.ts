// The chat webview's script (bundled for the browser): renders the state the host posts and sends
// the user's questions back.
import MarkdownIt from 'markdown-it';
import { meterText } from '../meter';
import type { FromWebview, ToWebview } from './messages';
import { pathLinks } from './links';
import { escape, icon, renderItems, renderPins, renderPlan } from './render';
import { highlight } from './highlight';
import { activity, ChatState, initialState, pendingApproval } from './state';
import type { Answer } from './approval';

declare function acquireVsCodeApi(): { postMessage(m: FromWebview): void };

const vscode = acquireVsCodeApi();
// Code blocks: coloured, with Copy and Insert at Cursor buttons, as Copilot Chat's (the host writes
// the clipboard, or inserts into the active editor).
const md = new MarkdownIt({
  html: false,
  linkify: true,
  breaks: false,
  highlight: (code, lang) =>
    `<pre class="code-block"><span class="code-actions"><button class="insert icon-button" title="Insert at Cursor" aria-label="Insert the code at the cursor">${icon('insert')}</button><button class="copy icon-button" title="Copy" aria-label="Copy the code">${icon('copy')}</button></span><code>${highlight(code, lang)}</code></pre>`,
}).use(pathLinks);
const log = document.getElementById('log')!;
const input = document.getElementById('input') as HTMLTextAreaElement;
const send = document.getElementById('send') as HTMLButtonElement;
const stop = document.getElementById('stop') as HTMLButtonElement;
const meter = document.getElementById('meter')!;
const attachment = document.getElementById('attachment')!;
const activityLine = document.getElementById('activity')!;
const pinsStrip = document.getElementById('pins')!;
let pinsHtml = '';
const planBox = document.getElementById('plan')!;
let planHtml = '';
// The plan is shown open until the user folds it; their choice holds across updates.
let planOpen = true;
planBox.addEventListener('toggle', (e) => {
  if ((e.target as HTMLElement).matches('details.plan-box')) planOpen = (e.target as HTMLDetailsElement).open;
}, true);
let chat: ChatState = initialState();
let background = false;
let cardKey = '';
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
    else if (a.classList.contains('opendiff')) vscode.postMessage({ type: 'openDiff', path: d.path ?? '', turn: Number(d.turn), line: d.line ? Number(d.line) : undefined });
    else if (a.classList.contains('web')) vscode.postMessage({ type: 'openLink', url: d.href ?? '' });
    return;
  }
  const pin = target.closest('button[data-pin], button[data-unpin]') as HTMLButtonElement | null;
  if (pin) {
    pinAction(pin);
    return;
  }
  const sub = target.closest('button[data-subagent-stop], button[data-subagent-transcript]') as HTMLButtonElement | null;
  if (sub) {
    const d = sub.dataset;
    vscode.postMessage(d.subagentStop ? { type: 'stopSubagent', id: d.subagentStop } : { type: 'subagentTranscript', id: d.subagentTranscript ?? '' });
    return;
  }
  const fork = target.closest('button[data-fork-turn], button[data-fork-checkpoint]') as HTMLButtonElement | null;
  if (fork) {
    const d = fork.dataset;
    vscode.postMessage(d.forkTurn ? { type: 'fork', turn: Number(d.forkTurn) } : { type: 'fork', checkpoint: Number(d.forkCheckpoint) });
    return;
  }
  const answerButton = target.closest('.approval button[data-answer]') as HTMLButtonElement | null;
  if (answerButton) {
    const card = answerButton.closest('.approval') as HTMLElement;
    approve(card.dataset.key ?? '', answerButton.dataset.answer as Answer);
    return;
  }
  const next = target.closest('button[data-next]') as HTMLButtonElement | null;
  if (next) {
    const t = next.dataset.next;
    vscode.postMessage({ type: t === 'retry' ? 'retry' : t === 'apiKey' ? 'apiKey' : 'settings' });
    return;
  }
  const insert = target.closest('pre.code-block button.insert') as HTMLButtonElement | null;
  if (insert) {
    vscode.postMessage({ type: 'insert', text: insert.closest('pre')?.querySelector('code')?.textContent ?? '' });
    return;
  }
  const copy = target.closest('pre.code-block button.copy') as HTMLButtonElement | null;
  if (copy) {
    vscode.postMessage({ type: 'copy', text: copy.closest('pre')?.querySelector('code')?.textContent ?? '' });
    copy.innerHTML = icon('check');
    copy.title = 'Copied';
    return;
  }
  const h = target.closest('.changes button[data-hunk]') as HTMLButtonElement | null;
  if (h) {
    // Disabled until the list comes back with the change kept or gone, so a double click asks once.
    h.disabled = true;
    const row = h.closest('.row') as HTMLElement;
    const turn = Number((h.closest('.changes') as HTMLElement).dataset.turn);
    vscode.postMessage({ type: 'hunk', action: h.dataset.hunkAct === 'undo' ? 'undo' : 'keep', turn, path: row.dataset.path ?? '', id: h.dataset.hunk ?? '' });
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
/** pinAction pins the message a Pin button is on (its text, its turn), or unpins what it names. */
function pinAction(b: HTMLButtonElement): void {
  const d = b.dataset;
  if (d.unpin) {
    vscode.postMessage({ type: 'unpin', id: d.unpin });
    return;
  }
  const it = chat.items[Number(d.pin)];
  if (!it || (it.type !== 'user' && it.type !== 'agent')) return;
  b.disabled = true;
  vscode.postMessage({ type: 'pin', text: it.text, turn: d.turn ? Number(d.turn) : undefined });
}

// The Pinned strip: a file opens, × unpins.
pinsStrip.addEventListener('click', (e) => {
  const target = e.target as HTMLElement;
  const a = target.closest('a.file') as HTMLAnchorElement | null;
  if (a) {
    e.preventDefault();
    vscode.postMessage({ type: 'openFile', path: a.dataset.path ?? '' });
    return;
  }
  const b = target.closest('button[data-unpin]') as HTMLButtonElement | null;
  if (b) pinAction(b);
});

function approve(key: string, answer: Answer): void {
  if (!key) return;
  // Answered at once on screen; the host confirms with the next state.
  document.querySelectorAll<HTMLButtonElement>(`.approval[data-key="${CSS.escape(key)}"] button`).forEach((b) => (b.disabled = true));
  vscode.postMessage({ type: 'approve', key, answer });
}

// Keyboard: 1 Allow once, 2 Always allow, 3 or Escape Deny, while a card waits and the input is
// not being typed in (Enter on the focused button works as for any button).
document.addEventListener('keydown', (e) => {
  const p = pendingApproval(chat);
  if (!p || e.ctrlKey || e.metaKey || e.altKey || e.isComposing) return;
  const typing = e.target === input && input.value !== '';
  const answer: Answer | undefined = ({ '1': 'allow', '2': 'always', '3': 'reject', Escape: 'reject' } as Record<string, Answer>)[e.key];
  if (!answer || typing) return;
  e.preventDefault();
  approve(p.key, answer);
});

/** showActivity writes the line that says what the agent is doing, with its elapsed time or countdown. */
function showActivity(): void {
  const a = activity(chat, Date.now(), background);
  activityLine.hidden = !a;
  if (!a) return;
  const ic = a.kind === 'approval' ? icon('bell-dot') : a.kind === 'retry' ? icon('sync', undefined, 'codicon-modifier-spin') : icon('loading', undefined, 'codicon-modifier-spin');
  activityLine.className = `activity ${a.kind}`;
  activityLine.innerHTML = `${ic} <span>${escape(a.text)}</span>`;
}
setInterval(showActivity, 1000);

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
  chat = m.chat;
  background = m.background;
  const focused = (document.activeElement as HTMLElement | null)?.closest('.approval.pending button[data-answer]') as HTMLElement | null;
  const focusedAnswer = focused?.dataset.answer;
  // A Pin button keeps the focus across the render it causes (it then reads Pinned).
  const focusedPin = (document.activeElement as HTMLElement | null)?.closest('.msg .pin') ? (document.activeElement as HTMLElement).closest<HTMLElement>('.msg')?.dataset.i : undefined;
  log.innerHTML = m.chat.items.length
    ? renderItems(m.chat, (s) => md.render(s), open, Date.now())
    : '<div class="empty">Ask Reprise about this workspace.</div>';
  if (focusedPin !== undefined) log.querySelector<HTMLElement>(`.msg[data-i="${focusedPin}"] .pin`)?.focus();
  // A running command's output shows its end, as a terminal does.
  log.querySelectorAll<HTMLElement>('.live pre').forEach((pre) => (pre.scrollTop = pre.scrollHeight));
  if (atBottom) log.scrollTop = log.scrollHeight;
  showActivity();
  // A new approval takes the focus (unless a question is being typed), so 1, 2, 3 and Enter answer it.
  const p = pendingApproval(m.chat);
  if (p && (focusedAnswer || (p.key !== cardKey && !(document.activeElement === input && input.value !== '')))) {
    log.querySelector<HTMLButtonElement>(`.approval[data-key="${CSS.escape(p.key)}"] button[data-answer="${focusedAnswer ?? 'allow'}"]`)?.focus();
    if (p.key !== cardKey) log.scrollTop = log.scrollHeight;
  }
  cardKey = p?.key ?? '';
  stop.hidden = !m.chat.running;
  const strip = renderPins(m.chat.pins);
  // Rebuilt only when it changed, so that a focused × keeps the focus while the answer streams.
  if (strip !== pinsHtml) {
    const focusedUnpin = !!(document.activeElement as HTMLElement | null)?.closest('.pins [data-unpin]');
    pinsStrip.innerHTML = strip;
    pinsHtml = strip;
    // An unpinned chip's × had the focus: the next one takes it, else the input.
    if (focusedUnpin) (pinsStrip.querySelector<HTMLElement>('[data-unpin]') ?? input).focus();
  }
  pinsStrip.hidden = !strip;
  const plan = renderPlan(m.chat.plan, planOpen);
  if (plan !== planHtml) {
    planBox.innerHTML = plan;
    planHtml = plan;
  }
  planBox.hidden = !plan;
  attachment.hidden = !m.attachment;
  attachment.innerHTML = m.attachment ? `<span>${escape(m.attachment)}</span> <a href="#" class="detach" title="Do not send the selection">×</a>` : '';
  if (m.usage) {
    meter.textContent = `Context ${meterText(m.usage, false)}`;
    meter.hidden = false;
  } else meter.hidden = true;
});

vscode.postMessage({ type: 'ready' });
