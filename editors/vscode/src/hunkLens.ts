// Keep and Undo above each of the agent's changes in the diff editor Review opens (its restore
// point on the left, the file on the right), as VS Code's inline chat offers them: the lenses go
// on the right side, the file, which VS Code reloads from disk after an undo. A file the chat
// lists as waiting for review gets them in any editor too, as Copilot's edits do (a lens belongs
// to a document, not to one editor of it, so the diff's right side and the file's own tab show
// the same ones).
import * as vscode from 'vscode';
import { hunkLine, hunkLines, reviewTarget } from './hunks';
import { ReviewKept } from './protocol';
import { HunkTarget, originalScheme, Review } from './review';

/** The lenses' commands: internal (not contributed, so not in the palette). */
export const lensCommands = { keep: 'reprise.review.keepHunk', undo: 'reprise.review.undoHunk' } as const;

export class HunkLenses implements vscode.CodeLensProvider {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.changed.event;

  constructor(private readonly review: Review) {}

  register(): vscode.Disposable {
    const isReview = (t: vscode.Tab) => t.input instanceof vscode.TabInputTextDiff && t.input.original.scheme === originalScheme;
    return vscode.Disposable.from(
      this.changed,
      vscode.languages.registerCodeLensProvider({ scheme: 'file' }, this),
      // A diff opened or closed: its file's lenses come or go.
      vscode.window.tabGroups.onDidChangeTabs((e) => {
        if ([...e.opened, ...e.closed].some(isReview)) this.changed.fire();
      }),
      this.review.onDidReview(() => this.changed.fire()),
      vscode.commands.registerCommand(lensCommands.keep, (t: HunkTarget) => this.review.keepHunk(t)),
      vscode.commands.registerCommand(lensCommands.undo, (t: HunkTarget) => this.review.undoHunk(t)),
    );
  }

  async provideCodeLenses(doc: vscode.TextDocument, token: vscode.CancellationToken): Promise<vscode.CodeLens[]> {
    const inDiff = diffOf(doc.uri);
    const target = inDiff ?? this.review.pendingTurn(doc.uri);
    if (!target) return [];
    let files;
    try {
      files = await this.review.changes(target.sessionId, target.turn);
    } catch {
      return [];
    }
    const f = files.find((c) => vscode.Uri.file(c.absPath).toString() === doc.uri.toString());
    if (!f?.hunks || token.isCancellationRequested) return [];
    // A file kept whole from the chat's list has every change kept.
    const keptWhole = this.review.keptWhole(target.sessionId, target.turn, f.path);
    // Out of the diff, only while some change waits: a file reviewed is a file like any other.
    if (!inDiff && (keptWhole || f.hunks.every((h) => h.review === ReviewKept))) return [];
    const out: vscode.CodeLens[] = [];
    for (const h of f.hunks) {
      const line = hunkLine(h, doc.lineCount) - 1;
      const range = new vscode.Range(line, 0, line, 0);
      if (h.review === ReviewKept || keptWhole) {
        // Said, not offered: a change kept stays as the agent made it.
        out.push(new vscode.CodeLens(range, { title: '✓ Kept', command: '', tooltip: `The change at ${hunkLines(h)} is kept` }));
        continue;
      }
      const args: HunkTarget = { ...target, path: f.path, id: h.id };
      out.push(
        new vscode.CodeLens(range, { title: '✓ Keep', command: lensCommands.keep, arguments: [args], tooltip: `Keep the agent's change at ${hunkLines(h)}` }),
        new vscode.CodeLens(range, { title: '✗ Undo', command: lensCommands.undo, arguments: [args], tooltip: `Undo the agent's change at ${hunkLines(h)}: its old lines back, the rest of the file as it is` }),
      );
    }
    return out;
  }
}

/** diffOf is the session and turn of a Reprise diff editor showing uri on its right side. */
function diffOf(uri: vscode.Uri): { sessionId: string; turn: number } | undefined {
  for (const g of vscode.window.tabGroups.all) {
    for (const t of g.tabs) {
      if (!(t.input instanceof vscode.TabInputTextDiff) || t.input.original.scheme !== originalScheme) continue;
      if (t.input.modified.toString() !== uri.toString()) continue;
      const target = reviewTarget(t.input.original.query);
      if (target) return target;
    }
  }
  return undefined;
}
