// Review of the agent's changes: a file's restore point against the disk in VS Code's diff editor,
// Keep (reprise.keep) and Undo (reprise.restore with paths) of the files each turn changed (which
// the chat lists from turn_end, or from reprise.history when reopened), and the chat's file links.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { message, Server } from './client';
import { reverseApply } from './diff';
import { ChangesResult, CommandChanges, CommandKeep, CommandRestore, FileChange, KeepResult, RestoreResult } from './protocol';
import type { Store } from './store';

/** originalScheme names the read-only documents holding a file as it was at a restore point. */
export const originalScheme = 'reprise-original';

export class Review {
  /** The texts of the restore points opened in a diff editor, by document URI. */
  private readonly originals = new Map<string, string>();
  private opened = 0;

  constructor(
    private readonly server: Server,
    private readonly store: Store,
  ) {}

  register(): vscode.Disposable {
    return vscode.workspace.registerTextDocumentContentProvider(originalScheme, {
      provideTextDocumentContent: (uri) => this.originals.get(uri.toString()) ?? '',
    });
  }

  private async changes(sessionId: string, turn: number): Promise<FileChange[]> {
    const res = await this.server.execute<ChangesResult>(CommandChanges, { sessionId, turn });
    return res.files ?? [];
  }

  /** openDiff shows a file as it was before turn against the file now, in VS Code's diff editor. */
  async openDiff(given: string, turn: number): Promise<void> {
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
    await vscode.commands.executeCommand('vscode.diff', left, right, title, { preview: true });
  }

  /**
   * keep marks files as reviewed: they stay as the agent left them. The server records it, so that
   * the session reopened lists them kept.
   */
  async keep(turn: number, paths: string[]): Promise<void> {
    const sessionId = this.store.current;
    if (this.server.supports(CommandKeep)) {
      try {
        await this.server.execute<KeepResult>(CommandKeep, { sessionId, turn, paths });
      } catch (err) {
        void vscode.window.showWarningMessage(`Reprise: not kept: ${message(err)}`);
        return;
      }
    }
    this.store.review(sessionId, turn, paths, 'kept');
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
      const res = await this.server.execute<RestoreResult>(CommandRestore, { sessionId, turn, paths });
      if (res.restored.length) this.store.review(sessionId, turn, res.restored, 'undone');
      for (const r of res.refused ?? []) this.store.review(sessionId, turn, [r.path], 'refused', r.reason);
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
