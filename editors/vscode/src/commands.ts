// The extension's own commands. Their ids (reprise.chat.*, reprise.ui.*) differ from the server's
// (reprise.ask, …), which vscode-languageclient registers from executeCommandProvider.
import * as vscode from 'vscode';
import { code, message, Server } from './client';
import { fromHistory, userTurns } from './chat/state';
import type { ChatView } from './chat/view';
import type { ContextView } from './contextView';
import {
  CheckpointInfo,
  CheckpointResult,
  CodeModelUnavailable,
  CodeRequestCancelled,
  CommandAsk,
  CommandCancel,
  CommandCheckpoint,
  CommandCheckpoints,
  CommandCompact,
  CommandContext,
  CommandCancelSubagent,
  CommandExport,
  CommandForgetNote,
  CommandFork,
  CommandHistory,
  CommandMCP,
  MCPResult,
  CommandNewSession,
  CommandPin,
  CommandPins,
  CommandUnpin,
  CommandRestore,
  CommandResume,
  CommandSessions,
  CompactResult,
  ContextResult,
  EntryCompaction,
  ExportResult,
  ForkArgs,
  ForkResult,
  HistoryResult,
  NotesResult,
  PinArgs,
  PinResult,
  PinsResult,
  SessionInfo,
} from './protocol';
import { attachmentOf, withAttachment } from './selection';
import { checkpointHtml } from './checkpointView';
import { selectModel } from './modelPicker';
import { linkKind } from './chat/links';
import type { Attachment } from './store';
import { humanTime, tokens } from './meter';
import { sessionItem } from './sessions';
import { mcpRow } from './mcp';
import type { Store } from './store';

export const ids = {
  ask: 'reprise.chat.ask',
  askSelection: 'reprise.chat.askSelection',
  compact: 'reprise.ui.compact',
  showContext: 'reprise.ui.showContext',
  checkpoints: 'reprise.ui.checkpoints',
  newSession: 'reprise.ui.newSession',
  resume: 'reprise.ui.resume',
  cancel: 'reprise.ui.cancel',
  restore: 'reprise.ui.restore',
  restart: 'reprise.ui.restart',
  selectModel: 'reprise.ui.selectModel',
  enterApiKey: 'reprise.ui.enterApiKey',
  mcpServers: 'reprise.ui.mcpServers',
  pinFile: 'reprise.ui.pinFile',
  pinText: 'reprise.ui.pinText',
  unpin: 'reprise.ui.unpin',
  forgetNote: 'reprise.ui.forgetNote',
  fork: 'reprise.ui.fork',
  export: 'reprise.ui.export',
} as const;

/** transcriptScheme names the read-only documents holding a subagent's transcript. */
export const transcriptScheme = 'reprise-transcript';

export class Commands {
  /** The subagents' transcripts opened, by document URI. */
  private readonly transcripts = new Map<string, string>();
  private readonly transcriptChanged = new vscode.EventEmitter<vscode.Uri>();

  constructor(
    private readonly server: Server,
    private readonly store: Store,
    private readonly chat: () => ChatView,
    private readonly context: () => ContextView,
    /** The extension's folder, for the checkpoint view's stylesheet. */
    private readonly extensionUri: vscode.Uri,
  ) {}

  register(): vscode.Disposable {
    const reg = (id: string, f: (...a: unknown[]) => unknown) => vscode.commands.registerCommand(id, f);
    return vscode.Disposable.from(
      this.transcriptChanged,
      vscode.workspace.registerTextDocumentContentProvider(transcriptScheme, {
        onDidChange: this.transcriptChanged.event,
        provideTextDocumentContent: (uri) => this.transcripts.get(uri.toString()) ?? '',
      }),
      reg(ids.ask, (text?: unknown) => this.askCommand(typeof text === 'string' ? text : undefined)),
      reg(ids.askSelection, () => this.askSelection()),
      reg(ids.compact, (focus?: unknown) => this.compact(typeof focus === 'string' ? focus : undefined)),
      reg(ids.showContext, () => this.context().show()),
      reg(ids.checkpoints, () => this.checkpoints()),
      reg(ids.newSession, () => this.newSession()),
      reg(ids.resume, () => this.resume()),
      reg(ids.cancel, () => this.cancel()),
      reg(ids.restore, () => this.restore()),
      reg(ids.restart, () => this.server.restart()),
      reg(ids.selectModel, () => selectModel(this.server, ids.newSession)),
      reg(ids.enterApiKey, () => this.server.enterKey()),
      reg(ids.mcpServers, () => this.mcpServers()),
      reg(ids.pinFile, (uri?: unknown) => this.pinFile(uri instanceof vscode.Uri ? uri : undefined)),
      reg(ids.pinText, (text?: unknown) => this.pinText(typeof text === 'string' ? text : undefined)),
      reg(ids.unpin, (id?: unknown) => this.unpin(typeof id === 'string' ? id : undefined)),
      reg(ids.forgetNote, (key?: unknown) => this.forgetNote(typeof key === 'string' ? key : undefined)),
      reg(ids.fork, () => this.fork()),
      reg(ids.export, () => this.exportSession()),
    );
  }

  private sessionArgs(): { sessionId?: string } {
    return this.store.current ? { sessionId: this.store.current } : {};
  }

  private async askCommand(text?: string): Promise<void> {
    const t = text ?? (await vscode.window.showInputBox({ title: 'Ask Reprise', prompt: 'What should the agent do?', ignoreFocusOut: true }));
    if (!t) return;
    await this.chat().reveal();
    await this.ask(t);
  }

  /** askSelection attaches the editor's selection to the next question and shows the chat. */
  private async askSelection(): Promise<void> {
    const a = selectionAttachment(vscode.window.activeTextEditor);
    if (!a) {
      void vscode.window.showInformationMessage('Reprise: select some text in an editor first.');
      return;
    }
    this.store.setAttachment(a);
    await this.chat().reveal();
  }

  /**
   * ask sends a question for the current session (a new one when there is none), with the
   * selection attached to it if any.
   */
  async ask(text: string): Promise<void> {
    const a = this.store.attachment;
    this.store.setAttachment(undefined);
    this.store.ask(text, a?.label);
    try {
      const res = await this.server.execute<{ sessionId: string }>(CommandAsk, { text: withAttachment(text, a), ...this.sessionArgs() });
      this.store.asked(res.sessionId);
    } catch (err) {
      this.store.failed(message(err));
      this.report(err);
    }
  }

  /** retry asks the current chat's last question again (a stopped turn's Retry). */
  async retry(): Promise<void> {
    const last = userTurns(this.store.chat()).pop();
    if (last) await this.ask(last.text);
  }

  /**
   * pinFile pins a workspace file: the one given (explorer, editor title), else the active
   * editor's. Its content then stays in the model's context, re-read at each compaction.
   */
  private async pinFile(uri?: vscode.Uri): Promise<void> {
    // The active editor's file, else the active tab's (a webview beside it takes no text editor).
    const tab = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
    const target = uri ?? vscode.window.activeTextEditor?.document.uri ?? (tab instanceof vscode.TabInputText ? tab.uri : undefined);
    if (!target || target.scheme !== 'file') {
      void vscode.window.showInformationMessage('Reprise: open a file of the workspace to pin it.');
      return;
    }
    await this.pin({ kind: 'file', path: target.fsPath });
  }

  /** pinText pins a text the user types: a rule or a fact the model must keep whatever is compacted. */
  private async pinText(text?: string): Promise<void> {
    const t = text ?? (await vscode.window.showInputBox({
      title: 'Pin Text to Reprise\'s Context',
      prompt: 'A text the agent keeps in its context whatever is compacted (a rule, a fact, a decision)',
      ignoreFocusOut: true,
    }));
    if (!t || !t.trim()) return;
    await this.pin({ kind: 'message', text: t });
  }

  /** pinMessage pins a message of the chat: its text, with its turn when known. */
  async pinMessage(text: string, turn?: number): Promise<void> {
    await this.pin({ kind: 'message', text, ...(turn ? { turn } : {}) });
  }

  private async pin(args: PinArgs): Promise<void> {
    try {
      const res = await this.server.execute<PinResult>(CommandPin, { ...this.sessionArgs(), ...args });
      // The pins session update says the same; the result shows it at once.
      this.store.setPins(res.pins ?? [res.pin]);
    } catch (err) {
      this.report(err);
    }
  }

  /** unpin drops a pin: the one named, else one picked from the session's pins. */
  async unpin(id?: string): Promise<void> {
    try {
      if (!id) {
        const list = (await this.server.execute<PinsResult>(CommandPins, this.sessionArgs())).pins ?? [];
        if (list.length === 0) {
          void vscode.window.showInformationMessage('Reprise: nothing is pinned in this session.');
          return;
        }
        const pick = await vscode.window.showQuickPick(
          list.map((p) => ({ label: p.label, description: `${p.kind} · ${tokens(p.tokens)} tokens`, id: p.id })),
          { title: 'Unpin from Reprise\'s Context', placeHolder: 'The pin to drop' },
        );
        if (!pick) return;
        id = pick.id;
      }
      const res = await this.server.execute<PinsResult>(CommandUnpin, { ...this.sessionArgs(), id });
      this.store.setPins(res.pins ?? []);
    } catch (err) {
      this.report(err);
    }
  }

  /**
   * forgetNote deletes one of the agent's notes: the one named (the context view's Delete link),
   * else one picked from the session's notes. The server tells the model at its next call.
   */
  async forgetNote(key?: string): Promise<void> {
    try {
      if (!key) {
        const c = await this.server.execute<ContextResult>(CommandContext, this.sessionArgs());
        const notes = c.state?.notes ?? [];
        if (notes.length === 0) {
          void vscode.window.showInformationMessage('Reprise: the agent keeps no note in this session.');
          return;
        }
        const pick = await vscode.window.showQuickPick(
          notes.map((n) => ({ label: n.key, detail: n.value })),
          { title: 'Forget a Note of the Agent', placeHolder: 'The note to delete (the agent is told)' },
        );
        if (!pick) return;
        key = pick.label;
      }
      const res = await this.server.execute<NotesResult>(CommandForgetNote, { ...this.sessionArgs(), key });
      const left = res.notes?.length ?? 0;
      void vscode.window.showInformationMessage(`Reprise: note “${key}” deleted; the agent is told at its next call. ${left} left.`);
      await this.context().refresh();
    } catch (err) {
      this.report(err);
    }
  }

  /**
   * fork starts a new session from a point of the current one (picked when not given: as it is
   * now, after a checkpoint, or before a question) and shows it; the current one is kept. The
   * files are not touched: the message says so and offers to put back what the original's later
   * turns changed.
   */
  async fork(point?: { turn?: number; checkpoint?: number }): Promise<void> {
    try {
      if (!point) {
        point = await this.pickForkPoint();
        if (!point) return;
      }
      const args: ForkArgs = { ...this.sessionArgs() };
      if (point.turn) args.turn = point.turn;
      if (point.checkpoint) args.checkpoint = point.checkpoint;
      const res = await this.server.execute<ForkResult>(CommandFork, args);
      await this.open(res.sessionId);
      const restore = res.restoreTurn ? 'Restore Files' : undefined;
      const files = res.restoreTurn
        ? `The files are as the original left them: Restore Files puts back what it changed from turn ${res.restoreTurn} on.`
        : 'The files on disk were not changed.';
      const choice = await vscode.window.showInformationMessage(`Reprise: forked from ${res.from}; the original session is kept. ${files}`, ...(restore ? [restore] : []));
      if (choice === restore && res.restoreTurn) {
        const r = await this.server.execute<{ restored: string[] | null }>(CommandRestore, { sessionId: res.parent, turn: res.restoreTurn });
        const restored = r.restored ?? [];
        void vscode.window.showInformationMessage(restored.length ? `Reprise: restored ${restored.join(', ')}.` : 'Reprise: no file to restore.');
      }
    } catch (err) {
      this.report(err);
    }
  }

  /**
   * exportSession saves the current session for people, as Markdown or one HTML page, where the
   * user says: the whole conversation with each turn's tokens and dollars, secrets masked.
   */
  /** stopSubagent stops one subagent of the running turn: its task call says so and the turn goes on. */
  async stopSubagent(id: string): Promise<void> {
    try {
      const res = await this.server.execute<{ cancelled: boolean }>(CommandCancelSubagent, { ...this.sessionArgs(), subagentId: id });
      if (!res.cancelled) void vscode.window.showInformationMessage('Reprise: that subagent has already ended.');
    } catch (err) {
      this.report(err);
    }
  }

  /**
   * subagentTranscript opens a subagent's whole transcript (its own saved session) as Markdown,
   * in the editor: a read-only document, which closes without asking to save it.
   */
  async subagentTranscript(id: string): Promise<void> {
    try {
      const res = await this.server.execute<ExportResult>(CommandExport, { ...this.sessionArgs(), subagentId: id, format: 'md' });
      const uri = vscode.Uri.from({ scheme: transcriptScheme, path: `/subagent-${id}.md` });
      this.transcripts.set(uri.toString(), res.content ?? '');
      this.transcriptChanged.fire(uri);
      const doc = await vscode.workspace.openTextDocument(uri);
      await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Active, preview: true });
    } catch (err) {
      this.report(err);
    }
  }

  async exportSession(): Promise<void> {
    try {
      const pick = await vscode.window.showQuickPick(
        [
          { label: 'Markdown', description: 'for a review, an issue, a note', format: 'md' as const },
          { label: 'HTML', description: 'one page that reads in any browser, light or dark', format: 'html' as const },
        ],
        { title: 'Export Reprise Session', placeHolder: 'The format' },
      );
      if (!pick) return;
      const res = await this.server.execute<ExportResult>(CommandExport, { ...this.sessionArgs(), format: pick.format });
      const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
      const target = await vscode.window.showSaveDialog({
        title: 'Export Reprise Session',
        defaultUri: folder ? vscode.Uri.joinPath(folder, res.fileName) : undefined,
        filters: pick.format === 'html' ? { HTML: ['html'] } : { Markdown: ['md'] },
      });
      if (!target) return;
      await vscode.workspace.fs.writeFile(target, new TextEncoder().encode(res.content ?? ''));
      const open = pick.format === 'md' ? 'Open' : undefined;
      const choice = await vscode.window.showInformationMessage(`Reprise: session exported to ${vscode.workspace.asRelativePath(target)}.`, ...(open ? [open] : []));
      if (choice === open) await vscode.window.showTextDocument(target);
    } catch (err) {
      this.report(err);
    }
  }

  /** pickForkPoint asks where to fork the current session from. */
  private async pickForkPoint(): Promise<{ turn?: number; checkpoint?: number } | undefined> {
    const chat = this.store.chat();
    const items: (vscode.QuickPickItem & { point: { turn?: number; checkpoint?: number } })[] = [{ label: 'As it is now', point: {} }];
    for (const it of chat.items) {
      if (it.type === 'compaction' && it.checkpoint) items.push({ label: `After checkpoint ${it.checkpoint.n}`, description: it.checkpoint.title, point: { checkpoint: it.checkpoint.n } });
    }
    for (const t of userTurns(chat)) items.push({ label: `Before turn ${t.turn}`, description: t.text.slice(0, 80), point: { turn: t.turn } });
    const pick = await vscode.window.showQuickPick(items, { title: 'Fork Reprise Session', placeHolder: 'Where the new session starts; this one is kept' });
    return pick?.point;
  }

  /** mcpServers lists the MCP servers new sessions get, with their state and tools. */
  private async mcpServers(): Promise<void> {
    let res: MCPResult;
    try {
      res = await this.server.execute<MCPResult>(CommandMCP, {});
    } catch (err) {
      this.report(err);
      return;
    }
    const servers = res.servers ?? [];
    if (servers.length === 0) {
      const a = await vscode.window.showInformationMessage('Reprise: no MCP server is configured. Add one in the reprise.mcpServers setting or in .vscode/mcp.json.', 'Open Settings');
      if (a) await vscode.commands.executeCommand('workbench.action.openSettings', 'reprise.mcpServers');
      return;
    }
    const pick = await vscode.window.showQuickPick(servers.map(mcpRow), {
      title: `Reprise MCP Servers · ${tokens(res.tokens)} tokens a request`,
      placeHolder: 'Pick a server to see its tools',
    });
    const s = servers.find((x) => x.name === pick?.name);
    if (!s || (s.tools ?? []).length === 0) return;
    await vscode.window.showQuickPick(
      s.tools.map((t) => ({ label: t.tool, description: `${tokens(t.tokens)} tokens${t.deferred ? ' · found on demand' : ''}`, detail: t.description })),
      { title: `Tools of ${s.name}`, matchOnDetail: true },
    );
  }

  async cancel(): Promise<void> {
    try {
      await this.server.execute(CommandCancel, this.sessionArgs());
    } catch (err) {
      this.report(err);
    }
  }

  private async compact(focus?: string): Promise<void> {
    if (focus === undefined) {
      focus = await vscode.window.showInputBox({
        title: 'Compact Session',
        prompt: 'Optional focus: what the summary must keep (leave empty for none)',
        ignoreFocusOut: true,
      });
      if (focus === undefined) return;
    }
    this.store.setCompacting(true);
    let res: CompactResult;
    try {
      res = await this.server.execute<CompactResult>(CommandCompact, { ...this.sessionArgs(), ...(focus ? { focus } : {}) });
    } catch (err) {
      if (code(err) !== CodeRequestCancelled) this.report(err);
      return;
    } finally {
      this.store.setCompacting(false);
    }
    const cp = res.checkpoint;
    const open = await vscode.window.showInformationMessage(
      `Reprise: compacted ${tokens(res.before)} → ${tokens(res.after)} tokens. Checkpoint ${cp.n}: ${cp.title}`,
      'Open Checkpoint',
    );
    if (open) await this.openCheckpoint(cp.n);
  }

  private async checkpoints(): Promise<void> {
    try {
      const list = await this.server.execute<CheckpointInfo[] | null>(CommandCheckpoints, this.sessionArgs());
      if (!list || list.length === 0) {
        void vscode.window.showInformationMessage('Reprise: this session has no checkpoint yet. Compact Session makes one.');
        return;
      }
      const pick = await vscode.window.showQuickPick(
        [...list].reverse().map((c) => ({
          label: `Checkpoint ${c.n}: ${c.title}`,
          description: `${c.trigger} · ${tokens(c.tokensBefore)} → ${tokens(c.tokensAfter)} tokens`,
          detail: `${c.replaced} messages replaced${c.time ? ` · ${humanTime(c.time)}` : ''}`,
          n: c.n,
        })),
        { title: 'Reprise Checkpoints', placeHolder: 'Open a checkpoint summary' },
      );
      if (pick) await this.openCheckpoint(pick.n);
    } catch (err) {
      this.report(err);
    }
  }

  /**
   * openCheckpoint shows a checkpoint's summary in a webview of its own, as inert text: no script,
   * no image, no link that navigates (checkpointView.ts).
   */
  async openCheckpoint(n: number): Promise<void> {
    const sessionId = this.store.current || undefined;
    let markdown: string;
    let title = `Checkpoint ${n}`;
    try {
      const cp = await this.server.execute<CheckpointResult>(CommandCheckpoint, { ...(sessionId ? { sessionId } : {}), n });
      title = `Checkpoint ${cp.n}: ${cp.title}`;
      markdown = cp.markdown || `# ${title}\n\n${cp.summary}`;
    } catch (err) {
      markdown = `# Checkpoint unavailable\n\n${message(err)}`;
    }
    const media = vscode.Uri.joinPath(this.extensionUri, 'media');
    const panel = vscode.window.createWebviewPanel('reprise.checkpoint', title, vscode.ViewColumn.Active, {
      enableScripts: false,
      enableCommandUris: false,
      localResourceRoots: [media],
    });
    const style = panel.webview.asWebviewUri(vscode.Uri.joinPath(media, 'checkpoint.css'));
    panel.webview.html = checkpointHtml(markdown, title, panel.webview.cspSource, style.toString());
  }

  /** openLink opens a web page named in an answer, through VS Code (which asks before an untrusted site). */
  async openLink(url: string): Promise<void> {
    if (linkKind(url) !== 'web') {
      void vscode.window.showWarningMessage(`Reprise: ${url.slice(0, 200)} is not a web page; it is not opened.`);
      return;
    }
    await vscode.env.openExternal(vscode.Uri.parse(url, true));
  }

  private async newSession(): Promise<void> {
    try {
      const res = await this.server.execute<{ sessionId: string }>(CommandNewSession);
      this.store.switchTo(res.sessionId);
      await this.chat().reveal();
    } catch (err) {
      this.report(err);
    }
  }

  private async resume(): Promise<void> {
    try {
      const list = (await this.server.execute<SessionInfo[] | null>(CommandSessions)) ?? [];
      if (list.length === 0) {
        void vscode.window.showInformationMessage('Reprise: no session to resume.');
        return;
      }
      const pick = await vscode.window.showQuickPick(list.map((s) => sessionItem(s)), { title: 'Resume Reprise Session' });
      if (!pick) return;
      const res = await this.server.execute<{ sessionId: string }>(CommandResume, { sessionId: pick.id });
      await this.open(res.sessionId);
    } catch (err) {
      this.report(err);
    }
  }

  /**
   * open makes a session current and shows its chat; a session whose transcript the store does
   * not hold (saved on disk, or begun before this extension host) gets it from reprise.history.
   */
  private async open(sessionId: string): Promise<void> {
    const held = this.store.switchTo(sessionId);
    await this.chat().reveal();
    if (!held) await this.loadHistory(sessionId);
  }

  private async loadHistory(sessionId: string): Promise<void> {
    // A server without reprise.history leaves the chat empty, as before.
    if (!this.server.supports(CommandHistory)) return;
    let h: HistoryResult;
    try {
      h = await this.server.execute<HistoryResult>(CommandHistory, { sessionId });
    } catch (err) {
      this.report(err);
      return;
    }
    const entries = h.entries ?? [];
    if (entries.length === 0 && !h.pins?.length) return;
    // The checkpoints fill in the compaction markers; without them the markers are shorter.
    const checkpoints = entries.some((e) => e.kind === EntryCompaction)
      ? await this.server.execute<CheckpointInfo[] | null>(CommandCheckpoints, { sessionId }).catch(() => null)
      : null;
    // The changes of each turn come with its end, with what the user did with them since.
    // The pins come as the live pins update brings them, through the same reducer.
    this.store.restore(sessionId, fromHistory(sessionId, entries, checkpoints ?? [], h.pins));
  }

  private async restore(): Promise<void> {
    const turns = userTurns(this.store.chat());
    let turn: number | undefined;
    if (turns.length > 0) {
      const pick = await vscode.window.showQuickPick(
        turns.map((t) => ({ label: `Turn ${t.turn}`, description: t.text.slice(0, 80), turn: t.turn })).reverse(),
        { title: 'Restore Files to Before Turn', placeHolder: 'The workspace files the agent changed from this turn on are put back' },
      );
      turn = pick?.turn;
    } else {
      const s = await vscode.window.showInputBox({ title: 'Restore Files to Before Turn', prompt: 'Turn number', validateInput: (v) => (/^\d+$/.test(v) ? undefined : 'a turn number') });
      turn = s ? Number(s) : undefined;
    }
    if (turn === undefined) return;
    try {
      const res = await this.server.execute<unknown>(CommandRestore, { ...this.sessionArgs(), turn });
      const files = res && typeof res === 'object' && 'restored' in res ? (res as { restored: string[] }).restored : undefined;
      void vscode.window.showInformationMessage(`Reprise: files restored to before turn ${turn}${files ? `: ${files.join(', ')}` : ''}.`);
    } catch (err) {
      this.report(err);
    }
  }

  /** report shows a failed request; a missing API key comes with its fix. */
  private report(err: unknown): void {
    if (code(err) === CodeModelUnavailable) {
      void this.server.askForKey(`${message(err)}.`);
      return;
    }
    void vscode.window.showErrorMessage(`Reprise: ${message(err)}`);
  }
}

/** selectionAttachment reads the active editor's selection; undefined when nothing is selected. */
function selectionAttachment(editor: vscode.TextEditor | undefined): Attachment | undefined {
  if (!editor || editor.selection.isEmpty) return undefined;
  const sel = editor.selection;
  // A selection ending at the start of a line does not include that line.
  const end = sel.end.character === 0 && sel.end.line > sel.start.line ? sel.end.line - 1 : sel.end.line;
  const doc = editor.document;
  const name = doc.uri.scheme === 'file' ? vscode.workspace.asRelativePath(doc.uri, false) : doc.fileName;
  return attachmentOf(name, doc.languageId, sel.start.line + 1, end + 1, doc.getText(sel));
}
