// The chat view: a webview view in Reprise's activity-bar container. The host keeps the state
// (store.ts) and posts it whole on every change; the webview renders it and sends back requests.
import * as vscode from 'vscode';
import { CompactionRunning } from '../protocol';
import type { Store } from '../store';
import type { Answer } from './approval';
import type { FromWebview, ToWebview } from './messages';

export interface ChatActions {
  ask(text: string): Promise<void>;
  cancel(): Promise<void>;
  openCheckpoint(n: number): Promise<void>;
  showContext(): Promise<void>;
  openFile(path: string, line?: number): Promise<void>;
  openDiff(path: string, turn: number, line?: number): Promise<void>;
  /** openLink opens a web page of an answer in the browser; any other scheme is refused. */
  openLink(url: string): Promise<void>;
  review(action: 'keep' | 'undo', turn: number, paths: string[]): Promise<void>;
  /** reviewHunk keeps or undoes one change of a file */
  reviewHunk(action: 'keep' | 'undo', turn: number, path: string, id: string): Promise<void>;
  detach(): void;
  approve(key: string, answer: Answer): void;
  /** retry asks the last question of the chat again */
  retry(): Promise<void>;
  openSettings(): Promise<void>;
  enterApiKey(): Promise<void>;
  /** pinMessage pins a chat message's text, with its turn when known */
  pinMessage(text: string, turn?: number): Promise<void>;
  unpin(id: string): Promise<void>;
  /** fork starts a new session from before turn, or after checkpoint, and shows it */
  fork(point: { turn?: number; checkpoint?: number }): Promise<void>;
  /** stopSubagent stops one subagent of the running turn; the turn goes on */
  stopSubagent(id: string): Promise<void>;
  /** subagentTranscript opens a subagent's whole transcript, as Markdown */
  subagentTranscript(id: string): Promise<void>;
}

export class ChatView implements vscode.WebviewViewProvider, vscode.Disposable {
  static readonly id = 'reprise.chat';
  private view?: vscode.WebviewView;
  private readonly sub: { dispose(): void };

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly store: Store,
    private readonly actions: ChatActions,
  ) {
    this.sub = store.onChange(() => this.post());
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const dist = vscode.Uri.joinPath(this.extensionUri, 'dist');
    const media = vscode.Uri.joinPath(this.extensionUri, 'media');
    view.webview.options = { enableScripts: true, localResourceRoots: [dist, media] };
    view.webview.html = html(view.webview, dist, media);
    view.webview.onDidReceiveMessage((m: FromWebview) => this.receive(m));
    view.onDidDispose(() => (this.view = undefined));
  }

  /** visible says whether the chat is on screen. */
  get visible(): boolean {
    return this.view?.visible ?? false;
  }

  /** reveal shows the chat view, focused on its input. */
  async reveal(): Promise<void> {
    await vscode.commands.executeCommand(`${ChatView.id}.focus`);
    void this.view?.webview.postMessage({ type: 'focus' });
  }

  private receive(m: FromWebview): void {
    switch (m.type) {
      case 'ready':
        this.post();
        break;
      case 'ask':
        void this.actions.ask(m.text);
        break;
      case 'cancel':
        void this.actions.cancel();
        break;
      case 'checkpoint':
        void this.actions.openCheckpoint(m.n);
        break;
      case 'context':
        void this.actions.showContext();
        break;
      case 'openFile':
        void this.actions.openFile(m.path, m.line);
        break;
      case 'openDiff':
        void this.actions.openDiff(m.path, m.turn, m.line);
        break;
      case 'openLink':
        void this.actions.openLink(m.url);
        break;
      case 'review':
        void this.actions.review(m.action, m.turn, m.paths);
        break;
      case 'hunk':
        void this.actions.reviewHunk(m.action, m.turn, m.path, m.id);
        break;
      case 'detach':
        this.actions.detach();
        break;
      case 'approve':
        this.actions.approve(m.key, m.answer);
        break;
      case 'retry':
        void this.actions.retry();
        break;
      case 'settings':
        void this.actions.openSettings();
        break;
      case 'apiKey':
        void this.actions.enterApiKey();
        break;
      case 'insert':
        void insertAtCursor(m.text);
        break;
      case 'copy':
        void vscode.env.clipboard.writeText(m.text);
        break;
      case 'pin':
        void this.actions.pinMessage(m.text, m.turn);
        break;
      case 'unpin':
        void this.actions.unpin(m.id);
        break;
      case 'fork':
        void this.actions.fork({ turn: m.turn, checkpoint: m.checkpoint });
        break;
      case 'stopSubagent':
        void this.actions.stopSubagent(m.id);
        break;
      case 'subagentTranscript':
        void this.actions.subagentTranscript(m.id);
        break;
    }
  }

  private post(): void {
    if (!this.view) return;
    const msg: ToWebview = {
      type: 'state',
      chat: this.store.chat(),
      usage: this.store.usage(),
      compacting: this.store.compacting,
      background: this.store.usage()?.compaction?.state === CompactionRunning,
      attachment: this.store.attachment?.label,
    };
    void this.view.webview.postMessage(msg);
  }

  dispose(): void {
    this.sub.dispose();
  }
}

function html(webview: vscode.Webview, dist: vscode.Uri, media: vscode.Uri): string {
  const nonce = Math.random().toString(36).slice(2) + Math.random().toString(36).slice(2);
  const script = webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.js'));
  const style = webview.asWebviewUri(vscode.Uri.joinPath(media, 'chat.css'));
  const icons = webview.asWebviewUri(vscode.Uri.joinPath(dist, 'codicon.css'));
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${webview.cspSource}; font-src ${webview.cspSource}; script-src 'nonce-${nonce}';">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${icons}">
<link rel="stylesheet" href="${style}">
<title>Reprise</title>
</head>
<body>
<main id="log" aria-live="polite"></main>
<footer>
  <div id="activity" class="activity" role="status" hidden></div>
  <div id="meter" class="meter" title="Context window"></div>
  <div id="plan" class="plan" hidden></div>
  <div id="pins" class="pins" hidden></div>
  <div id="attachment" class="attachment" hidden></div>
  <textarea id="input" rows="3" placeholder="Ask Reprise… (Enter to send, Shift+Enter for a new line)" aria-label="Ask Reprise"></textarea>
  <div class="buttons">
    <button id="stop" class="secondary" title="Stop the running turn" hidden>Stop</button>
    <button id="send" title="Send">Send</button>
  </div>
</footer>
<script nonce="${nonce}" src="${script}"></script>
</body>
</html>`;
}

/** insertAtCursor puts text where the active editor's cursors are, replacing their selections. */
async function insertAtCursor(text: string): Promise<void> {
  const editor = vscode.window.activeTextEditor ?? vscode.window.visibleTextEditors[0];
  if (!editor) {
    void vscode.window.showInformationMessage('Reprise: open a file to insert the code into.');
    return;
  }
  await editor.edit((b) => {
    for (const sel of editor.selections) b.replace(sel, text);
  });
}
