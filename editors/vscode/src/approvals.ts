// Approvals in the conversation: the server's window/showMessageRequest about a command or an MCP
// call becomes a card in the chat (chat/approval.ts), answered there; the status bar says the agent
// waits until it is; a notification is added only when the chat is not in view. The request stays
// pending until the user answers or the server withdraws it ($/cancelRequest, a cancelled turn).
import * as vscode from 'vscode';
import type { CancellationToken, MessageActionItem, ShowMessageRequestParams } from 'vscode-languageclient/node';
import { MessageType } from 'vscode-languageclient/node';
import { actionOf, Answer, parseApproval } from './chat/approval';
import { ActionAllowOnce, ActionAlwaysAllow, ActionReject } from './protocol';
import type { Store } from './store';

const showInChat = 'Show in Chat';

export class Approvals implements vscode.Disposable {
  private readonly pending = new Map<string, (a: Answer) => void>();
  private readonly item: vscode.StatusBarItem;
  private next = 1;

  constructor(
    private readonly store: Store,
    /** whether the chat view is on screen */
    private readonly chatVisible: () => boolean,
    private readonly revealChat: () => Promise<void>,
    revealCommand: string,
  ) {
    this.item = vscode.window.createStatusBarItem('reprise.approval', vscode.StatusBarAlignment.Left, 1000);
    this.item.name = 'Reprise approval';
    this.item.text = '$(bell-dot) Reprise: waiting for your approval';
    this.item.tooltip = 'The agent waits for your answer in the Reprise chat';
    this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
    this.item.command = revealCommand;
  }

  /** request answers window/showMessageRequest: an approval through the chat, anything else as VS Code would. */
  async request(params: ShowMessageRequestParams, token: CancellationToken): Promise<MessageActionItem | null> {
    const actions = params.actions ?? [];
    const a = parseApproval(params.message, actions.map((x) => x.title));
    if (!a) return (await show(params.type)(params.message, ...actions)) ?? null;
    const key = String(this.next++);
    const answered = new Promise<Answer>((resolve) => this.pending.set(key, resolve));
    this.store.approval(key, a);
    this.refresh();
    const sub = token.onCancellationRequested(() => this.answer(key, 'withdrawn'));
    if (!this.chatVisible()) {
      // An extra for when the chat is hidden: the card stays the place to answer.
      const what = { command: 'run a command', mcp: 'use an MCP tool', file: 'write a protected file' }[a.kind];
      void vscode.window
        .showWarningMessage(`Reprise wants to ${what}: ${a.command}`, ActionAllowOnce, ActionAlwaysAllow, ActionReject, showInChat)
        .then((t) => {
          if (t === showInChat) void this.revealChat();
          else if (t === ActionAllowOnce) this.answer(key, 'allow');
          else if (t === ActionAlwaysAllow) this.answer(key, 'always');
          else if (t === ActionReject) this.answer(key, 'reject');
        });
    }
    const got = await answered;
    sub.dispose();
    const title = actionOf[got];
    return title === null ? null : { title };
  }

  /** answer answers a pending approval; a second answer to the same one is ignored. */
  answer(key: string, a: Answer): void {
    const resolve = this.pending.get(key);
    if (!resolve) return;
    this.pending.delete(key);
    this.store.answered(key, a);
    this.refresh();
    resolve(a);
  }

  /** withdrawAll answers every pending approval as withdrawn (the server stopped). */
  withdrawAll(): void {
    for (const key of [...this.pending.keys()]) this.answer(key, 'withdrawn');
  }

  private refresh(): void {
    if (this.pending.size > 0) this.item.show();
    else this.item.hide();
  }

  dispose(): void {
    this.withdrawAll();
    this.item.dispose();
  }
}

function show(type: number): (m: string, ...items: MessageActionItem[]) => Thenable<MessageActionItem | undefined> {
  if (type === MessageType.Error) return vscode.window.showErrorMessage;
  if (type === MessageType.Warning) return vscode.window.showWarningMessage;
  return vscode.window.showInformationMessage;
}
