// Review by hunk: what the chat's Changes list and the diff editor's CodeLenses say about a file's
// changes. Pure (no vscode import): the webview's renderer and the extension host both use it.
import { ReviewKept } from './protocol';
import type { FileChange, Hunk } from './protocol';

/** hunkLines names where a change is in the file now: "lines 12–14", "line 12", "after line 12". */
export function hunkLines(h: Hunk): string {
  if (h.newLines === 0) return h.newStart === 0 ? 'at the top' : `after line ${h.newStart}`;
  if (h.newLines === 1) return `line ${h.newStart}`;
  return `lines ${h.newStart}–${h.newStart + h.newLines - 1}`;
}

/**
 * hunkLine is the 1-based line of the file now a change's lens and links go to: its first new
 * line, or for a change that only removes lines the line after the gap (the last line when the
 * gap is at the end). lineCount clamps it to the document.
 */
export function hunkLine(h: Hunk, lineCount = Number.MAX_SAFE_INTEGER): number {
  const line = h.newLines === 0 ? h.newStart + 1 : h.newStart;
  return Math.max(1, Math.min(line, lineCount));
}

/** Progress counts a file's changes: every one the agent made, those kept and those undone. */
export interface Progress {
  /** undefined when only the history's counts are known (the changes not asked yet) */
  total?: number;
  kept: number;
  undone: number;
  pending: number;
}

/** progressOf counts a file's changes from reprise.changes' hunks, else from the history's counts. */
export function progressOf(f: Pick<FileChange, 'hunks' | 'hunksUndone' | 'hunksKept'>): Progress {
  const undone = f.hunksUndone ?? 0;
  if (!f.hunks) return { kept: f.hunksKept ?? 0, undone, pending: 0 };
  const kept = f.hunks.filter((h) => h.review === ReviewKept).length;
  return { total: f.hunks.length + undone, kept, undone, pending: f.hunks.length - kept };
}

/** progressText is "3 changes · 1 kept · 1 undone", the parts that are zero left out. */
export function progressText(p: Progress): string {
  const parts = [
    p.total !== undefined ? `${p.total} change${p.total === 1 ? '' : 's'}` : '',
    p.kept ? `${p.kept} kept` : '',
    p.undone ? `${p.undone} undone` : '',
  ];
  return parts.filter(Boolean).join(' · ');
}

/** reviewedByHunk: every change left of the file was kept one by one, none waits. */
export function reviewedByHunk(p: Progress): boolean {
  return p.total !== undefined && p.total > 0 && p.pending === 0 && p.kept > 0;
}

/** reviewTarget is what a diff editor's original side names: the session and turn it compares from. */
export function reviewTarget(query: string): { sessionId: string; turn: number } | undefined {
  const q = new URLSearchParams(query);
  const turn = Number(q.get('turn'));
  if (q.get('side') !== 'before' || !Number.isInteger(turn) || turn < 1) return undefined;
  return { sessionId: q.get('session') ?? '', turn };
}
