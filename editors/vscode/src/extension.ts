// Entry point: wires the server connection, the store, the meter, the chat view, the context view
// and the commands.
import * as vscode from 'vscode';
import { Approvals } from './approvals';
import { Server } from './client';
import { ChatView } from './chat/view';
import { Commands, ids } from './commands';
import { ContextView } from './contextView';
import { createMeter } from './meterItem';
import { HunkLenses } from './hunkLens';
import { ConfigSection, UpdateTurnEnd } from './protocol';
import { Review } from './review';
import { restartsServer } from './settings';
import { Store } from './store';

let server: Server | undefined;

export async function activate(ctx: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel('Reprise');
  const store = new Store();
  let approvals: Approvals | undefined;
  server = new Server(
    output,
    {
      usage: (u) => store.setUsage(u),
      // A turn's end brings the files it changed: the store lists them under the turn, and the
      // changes one by one of every turn listed are asked again (the turn may have moved them).
      update: (p) => {
        store.update(p);
        if (p.update.sessionUpdate === UpdateTurnEnd && p.update.changes?.length) void rv.refreshAll(p.sessionId);
      },
      showMessageRequest: (p, token) => approvals!.request(p, token),
      stopped: () => approvals?.withdrawAll(),
    },
    ctx.extensionPath,
    ctx.secrets,
  );
  const rv = new Review(server, store);
  const contextView = new ContextView(server, store);
  // The chat view and the commands need each other: the view asks through the commands.
  let chat: ChatView | undefined;
  const commands = new Commands(server, store, () => chat!, () => contextView, ctx.extensionUri);
  chat = new ChatView(ctx.extensionUri, store, {
    ask: (t) => commands.ask(t),
    cancel: () => commands.cancel(),
    openCheckpoint: (n) => commands.openCheckpoint(n),
    showContext: () => contextView.show(),
    openFile: (p, line) => rv.openFile(p, line),
    openDiff: (p, turn, line) => rv.openDiff(p, turn, line),
    openLink: (url) => commands.openLink(url),
    review: async (action, turn, paths) => (action === 'keep' ? rv.keep(turn, paths) : rv.undo(turn, paths)),
    reviewHunk: async (action, turn, path, id) => {
      const t = { sessionId: store.current, turn, path, id };
      await (action === 'keep' ? rv.keepHunk(t) : rv.undoHunk(t));
    },
    detach: () => store.setAttachment(undefined),
    approve: (key, answer) => approvals!.answer(key, answer),
    retry: () => commands.retry(),
    openSettings: async () => void (await vscode.commands.executeCommand('workbench.action.openSettings', '@ext:reprise-dev.reprise')),
    enterApiKey: () => server!.enterKey(),
    pinMessage: (text, turn) => commands.pinMessage(text, turn),
    fork: (point) => commands.fork(point),
    stopSubagent: (id) => commands.stopSubagent(id),
    subagentTranscript: (id) => commands.subagentTranscript(id),
    unpin: (id) => commands.unpin(id),
  });
  const view = chat;
  approvals = new Approvals(store, () => view.visible, () => view.reveal(), `${ChatView.id}.focus`);
  ctx.subscriptions.push(
    output,
    server,
    contextView,
    chat,
    approvals,
    vscode.window.registerWebviewViewProvider(ChatView.id, chat, { webviewOptions: { retainContextWhenHidden: true } }),
    commands.register(),
    rv.register(),
    new HunkLenses(rv).register(),
    createMeter(store, ids.showContext, ids.selectModel),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (!e.affectsConfiguration(ConfigSection)) return;
      output.appendLine('Reprise settings changed.');
      // Server settings are pushed by the language client; the machine keys (the binary, its
      // environment, and the settings the server takes from initializationOptions only) and the
      // user's spending limits (the level the workspace's may only lower) need a new process.
      if (restartsServer((section) => e.affectsConfiguration(section)) || server?.spendingChanged()) void server?.restart();
    }),
  );
  await server.start();
}

export async function deactivate(): Promise<void> {
  await server?.stop();
}
