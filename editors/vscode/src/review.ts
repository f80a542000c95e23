// Review of the agent's changes: a file's restore point against the disk in VS Code's diff editor,
// Keep (reprise.keep) and Undo (reprise.restore with paths) of the files each turn changed (which
// the chat lists from turn_end, or from reprise.history when reopened), each change of a file kept
// or undone on its own (reprise.keep and reprise.restore with hunks), and the chat's file links.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { message, Server } from './client';
import { reverseApply } from './diff';
import { ChangesResult, CommandChanges, CommandKeep, CommandRestore, FileChange, KeepArgs, KeepResult, RestoreArgs, RestoreResult } from './protocol';
import type { Store } from './store';

/** originalScheme names the read-only documents holding a file as it was at a restore point. */
export const originalScheme = 'reprise-original';

/** HunkTarget names one change of a file: a hunk id of reprise.changes {sessionId, turn}. */
export interface HunkTarget {
  sessionId: string;
  turn: number;
  path: string;
  id: string;
}

export class Review {
  /** The texts of the restore points opened in a diff editor, by document URI. */
  private readonly originals = new Map<string, string>();
  private opened = 0;
  /** The turns whose changes one by one were asked for the chat, as session:turn. */
  private readonly asked = new Set<string>();
  private readonly reviewedEmitter = new vscode.EventEmitter<void>();
  /** onDidReview fires once a change was kept or undone and the chat's list has it, or the files waiting for review changed. */
  readonly onDidReview = this.reviewedEmitter.event;

  constructor(
    private readonly server: Server,
    private readonly store: Store,
  ) {}

  /**
   * pendingTurn is the session and turn of the chat's latest list holding uri's file still waiting
   * for review: its changes get Keep and Undo in any editor of the file, as Copilot's edits do.
   */
  pendingTurn(uri: vscode.Uri): { sessionId: string; turn: number } | undefined {
    const sessionId = this.store.current;
    const items = this.store.chat(sessionId).items;
    for (let i = items.length - 1; i >= 0; i--) {
      const it = items[i];
      if (it.type !== 'changes') continue;
      const f = it.files.find((r) => vscode.Uri.file(r.absPath).toString() === uri.toString());
      if (f) return f.state === 'modified' && f.review === 'pending' ? { sessionId, turn: it.turn } : undefined;
    }
    return undefined;
  }

  /** pendingKey names the files waiting for review in the current chat, to notice a change of them. */
  private pendingKey(): string {
    const out: string[] = [this.store.current];
    for (const it of this.store.chat(this.store.current).items) {
      if (it.type === 'changes') for (const f of it.files) if (f.review === 'pending') out.push(`${it.turn}:${f.path}`);
    }
    return out.join('\n');
  }

  register(): vscode.Disposable {
    // A list of changes the chat shows (a turn's end, a reopened session) gets each file's
    // changes one by one, once; and the lenses follow the files waiting for review.
    let pending = '';
    const sub = this.store.onChange(() => {
      const key = this.pendingKey();
      if (key !== pending) {
        pending = key;
        this.reviewedEmitter.fire();
      }
      const id = this.store.current;
      for (const turn of this.turnsToReview(id)) {
        const key = `${id}:${turn}`;
        if (this.asked.has(key) || !this.needsHunks(id, turn)) continue;
        this.asked.add(key);
        void this.refreshHunks(id, turn);
      }
    });
    return vscode.Disposable.from(
      this.reviewedEmitter,
      sub,
      vscode.workspace.registerTextDocumentContentProvider(originalScheme, {
        provideTextDocumentContent: (uri) => this.originals.get(uri.toString()) ?? '',
      }),
    );
  }

  /** turnsToReview are the turns of a chat listing a modified file not undone. */
  private turnsToReview(sessionId: string): number[] {
    const out: number[] = [];
    for (const it of this.store.chat(sessionId).items) {
      if (it.type === 'changes' && it.files.some((f) => f.state === 'modified' && f.review !== 'undone')) out.push(it.turn);
    }
    return out;
  }

  private needsHunks(sessionId: string, turn: number): boolean {
    return this.store.chat(sessionId).items.some((it) => it.type === 'changes' && it.turn === turn && it.files.some((f) => f.state === 'modified' && f.review !== 'undone' && !f.hunks));
  }

  /** refreshHunks gives the chat's list of turn the changes of its files now; undefined when it cannot. */
  private async refreshHunks(sessionId: string, turn: number): Promise<FileChange[] | undefined> {
    try {
      const files = await this.changes(sessionId, turn);
      this.store.hunks(sessionId, turn, files);
      return files;
    } catch {
      return undefined; // a session not loaded, an older server: the rows stay as they are
    }
  }

  /**
   * refreshAll asks again for the changes of every turn the chat lists: a later turn's edits, or
   * a change kept or undone, move or drop the changes the earlier turns list for the same file.
   */
  async refreshAll(sessionId: string): Promise<void> {
    await Promise.all(this.turnsToReview(sessionId).map((t) => this.refreshHunks(sessionId, t)));
  }

  /** changes are reprise.changes {sessionId, turn}: the files changed from turn on, compared with the disk. */
  async changes(sessionId: string, turn: number): Promise<FileChange[]> {
    const res = await this.server.execute<ChangesResult>(CommandChanges, { sessionId, turn });
    return res.files ?? [];
  }

  /** openDiff shows a file as it was before turn against the file now, in VS Code's diff editor. */
  async openDiff(given: string, turn: number, line?: number): Promise<void> {
    const sessionId = this.store.current;
    let files: FileChange[];
    try {
      files = await this.changes(sessionId, turn);
    } catch (err) {
      void vscode.window.showErrorMessage(`Reprise: ${message(err)}`);
      return;
    }
    const f = files.find((c) => c.path === given || c.absPath === given);
    if (!f) {
      void vscode.window.showInformationMessage(`Reprise: ${given} is no longer changed by the agent (undone, or back as it was).`);
      return;
    }
    if (f.binary || (f.diff === undefined && f.state !== 'created')) {
      void vscode.window.showInformationMessage(`Reprise: no diff of ${f.path}: ${f.note ?? 'none was made'}.`);
      return;
    }
    let original = '';
    try {
      const now = f.state === 'deleted' ? '' : new TextDecoder().decode(await vscode.workspace.fs.readFile(vscode.Uri.file(f.absPath)));
      if (f.state !== 'created') original = reverseApply(f.diff ?? '', now);
    } catch (err) {
      void vscode.window.showWarningMessage(`Reprise: cannot show the diff of ${f.path}: ${message(err)}. Try again.`);
      return;
    }
    const doc = (side: string, text: string) => {
      const uri = vscode.Uri.from({ scheme: originalScheme, path: `/${f.path}`, query: `session=${encodeURIComponent(sessionId)}&turn=${turn}&side=${side}&v=${++this.opened}` });
      this.originals.set(uri.toString(), text);
      return uri;
    };
    const left = doc('before', original);
    const right = f.state === 'deleted' ? doc('deleted', '') : vscode.Uri.file(f.absPath);
    const title = `${path.basename(f.path)} (before turn ${turn}) ↔ ${f.state === 'deleted' ? 'deleted' : 'now'}`;
    const at = line && line > 0 ? new vscode.Range(line - 1, 0, line - 1, 0) : undefined;
    await vscode.commands.executeCommand('vscode.diff', left, right, title, { preview: true, selection: at });
  }

  /**
   * keep marks files as reviewed: they stay as the agent left them. The server records it, so that
   * the session reopened lists them kept.
   */
  async keep(turn: number, paths: string[]): Promise<void> {
    const sessionId = this.store.current;
    if (this.server.supports(CommandKeep)) {
      try {
        await this.server.execute<KeepResult>(CommandKeep, { sessionId, turn, paths } satisfies KeepArgs);
      } catch (err) {
        void vscode.window.showWarningMessage(`Reprise: not kept: ${message(err)}`);
        return;
      }
    }
    this.store.review(sessionId, turn, paths, 'kept');
    this.reviewedEmitter.fire();
  }

  /** keptWhole says whether the user kept a file of turn whole (its row's Keep). */
  keptWhole(sessionId: string, turn: number, path: string): boolean {
    return this.store.chat(sessionId).items.some((it) => it.type === 'changes' && it.turn === turn && it.files.some((f) => f.path === path && f.review === 'kept'));
  }

  /**
   * undo puts files back as they were before turn. Each file is undone or refused on its own (a
   * file the user edited since is refused, so that edit is kept), and its row says which. The
   * rows keep the counts of the turn's end, as a reopened chat shows them: what the agent changed,
   * not what the user did since (Open diff compares with the disk now).
   */
  async undo(turn: number, paths: string[]): Promise<void> {
    const sessionId = this.store.current;
    try {
      const res = await this.server.execute<RestoreResult>(CommandRestore, { sessionId, turn, paths } satisfies RestoreArgs);
      if (res.restored.length) this.store.review(sessionId, turn, res.restored, 'undone');
      for (const r of res.refused ?? []) this.store.review(sessionId, turn, [r.path ?? ''], 'refused', r.reason);
      if (res.refused?.length) {
        void vscode.window.showWarningMessage(`Reprise: not undone: ${res.refused.map((r) => `${r.path} (${r.reason})`).join('; ')}`);
      }
    } catch (err) {
      const m = message(err);
      // "reprise.restore: nothing restored: a.txt: why; b.txt: why" names each file and its reason.
      const reasons = new Map<string, string>();
      for (const part of m.replace(/^.*?nothing restored: /, '').split('; ')) {
        const p = paths.find((q) => part.startsWith(`${q}: `));
        if (p) reasons.set(p, part.slice(p.length + 2));
      }
      for (const p of paths) this.store.review(sessionId, turn, [p], 'refused', reasons.get(p) ?? m);
      const named = paths.every((p) => reasons.has(p));
      void vscode.window.showWarningMessage(named ? `Reprise: not undone: ${paths.map((p) => `${p} (${reasons.get(p)})`).join('; ')}` : `Reprise: ${m}`);
    }
    this.reviewedEmitter.fire();
  }

  /** keepHunk records one change of a file kept: it stays as the agent made it. */
  async keepHunk(t: HunkTarget): Promise<void> {
    try {
      await this.server.execute<KeepResult>(CommandKeep, { sessionId: t.sessionId, turn: t.turn, hunks: [t.id] } satisfies KeepArgs);
    } catch (err) {
      void vscode.window.showWarningMessage(`Reprise: the change to ${t.path} is not kept: ${message(err)}`);
    }
    await this.reviewed(t.sessionId, t.turn);
  }

  /**
   * undoHunk puts one change of a file back as it was, the rest of the file untouched. A change
   * the user edited since is refused, with the reason. An unsaved editor of the file is not
   * written over: the user saves it first.
   */
  async undoHunk(t: HunkTarget): Promise<void> {
    const abs = this.absPath(t);
    const dirty = vscode.workspace.textDocuments.find((d) => d.isDirty && d.uri.scheme === 'file' && (d.uri.fsPath === abs || vscode.workspace.asRelativePath(d.uri, false) === t.path));
    if (dirty) {
      void vscode.window.showWarningMessage(`Reprise: save ${t.path} first: Undo writes the file on disk.`);
      return;
    }
    let undone = false;
    try {
      const res = await this.server.execute<RestoreResult>(CommandRestore, { sessionId: t.sessionId, turn: t.turn, hunks: [t.id] } satisfies RestoreArgs);
      undone = (res.hunks ?? []).includes(t.id);
      const why = (res.refused ?? []).map((r) => r.reason);
      if (why.length) void vscode.window.showWarningMessage(`Reprise: the change to ${t.path} is not undone: ${why.join('; ')}`);
    } catch (err) {
      // "reprise.restore: nothing undone: h…: why" names the change and why.
      const why = message(err).replace(/^.*?nothing undone: /, '').replace(`${t.id}: `, '');
      void vscode.window.showWarningMessage(`Reprise: the change to ${t.path} is not undone: ${why}`);
    }
    const files = await this.reviewed(t.sessionId, t.turn);
    // Every change undone: the file is back as before the turn, undone whole.
    if (undone && files && !files.some((f) => f.path === t.path)) this.store.review(t.sessionId, t.turn, [t.path], 'undone');
  }

  /** reviewed refreshes the chat's lists and the lenses after a change was kept or undone; it gives the target turn's files. */
  private async reviewed(sessionId: string, turn: number): Promise<FileChange[] | undefined> {
    const turns = [...new Set([turn, ...this.turnsToReview(sessionId)])];
    const got = await Promise.all(turns.map((t) => this.refreshHunks(sessionId, t)));
    this.reviewedEmitter.fire();
    return got[0];
  }

  /** absPath is the file a change is in, as the chat's list names it. */
  private absPath(t: HunkTarget): string | undefined {
    for (const it of this.store.chat(t.sessionId).items) {
      if (it.type !== 'changes') continue;
      const f = it.files.find((r) => r.path === t.path);
      if (f) return f.absPath;
    }
    return undefined;
  }

  /**
   * openFile opens a file of the workspace named in the chat, at a line. A name without folders
   * is looked up in the workspace; a path outside it is not opened.
   */
  async openFile(given: string, line?: number): Promise<void> {
    const uri = await resolve(given);
    if (!uri) {
      void vscode.window.showInformationMessage(`Reprise: ${given} is not a file of this workspace.`);
      return;
    }
    const at = line && line > 0 ? new vscode.Position(line - 1, 0) : undefined;
    await vscode.window.showTextDocument(uri, { preview: true, selection: at ? new vscode.Range(at, at) : undefined });
  }
}

async function exists(uri: vscode.Uri): Promise<boolean> {
  try {
    return ((await vscode.workspace.fs.stat(uri)).type & vscode.FileType.File) !== 0;
  } catch {
    return false;
  }
}

function inside(folder: string, p: string): boolean {
  const r = path.relative(folder, p);
  return r !== '' && !r.startsWith('..') && !path.isAbsolute(r);
}

async function resolve(given: string): Promise<vscode.Uri | undefined> {
  const folders = vscode.workspace.workspaceFolders ?? [];
  if (path.isAbsolute(given)) {
    const uri = vscode.Uri.file(given);
    return folders.some((f) => inside(f.uri.fsPath, uri.fsPath)) && (await exists(uri)) ? uri : undefined;
  }
  const clean = path.posix.normalize(given.replace(/\\/g, '/'));
  if (clean.startsWith('../')) return undefined;
  for (const f of folders) {
    const uri = vscode.Uri.joinPath(f.uri, clean);
    if (inside(f.uri.fsPath, uri.fsPath) && (await exists(uri))) return uri;
  }
  // The agent often names a file by its base name or a tail of its path.
  const found = await vscode.workspace.findFiles(`**/${clean.replace(/^\.\//, '')}`, '**/{node_modules,.git}/**', 2);
  return found.length === 1 ? found[0] : undefined;
}
