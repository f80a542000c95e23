import { describe, expect, it } from 'vitest';
import { renderItems } from '../../src/chat/render';
import { Action, ChatState, fromHistory, initialState, reduce } from '../../src/chat/state';
import { hunkLine, hunkLines, progressOf, progressText, reviewedByHunk, reviewTarget } from '../../src/hunks';
import type { FileChange, Hunk } from '../../src/protocol';

const hunk = (id: string, over: Partial<Hunk> = {}): Hunk => ({ id, oldStart: 2, oldLines: 1, newStart: 2, newLines: 1, review: 'pending', ...over });
const file = (path: string, over: Partial<FileChange> = {}): FileChange => ({ path, absPath: `/ws/${path}`, turn: 1, state: 'modified', added: 3, removed: 3, ...over });
const run = (...actions: Action[]): ChatState => actions.reduce(reduce, initialState('s1'));
const render = (s: ChatState, open = new Set<string>()) => renderItems(s, (t) => t, open);
const turnEnd = (files: FileChange[]): Action => ({ type: 'update', params: { sessionId: 's1', update: { sessionUpdate: 'turn_end', stopReason: 'end_turn', changes: files } } });

describe('a change named by its lines', () => {
  it.each([
    [hunk('a', { newStart: 12, newLines: 3 }), 'lines 12–14', 12],
    [hunk('b', { newStart: 7, newLines: 1 }), 'line 7', 7],
    // Only removes: newStart is the line before the gap; the lens goes on the line after it.
    [hunk('c', { oldStart: 5, oldLines: 2, newStart: 4, newLines: 0 }), 'after line 4', 5],
    [hunk('d', { oldStart: 1, oldLines: 2, newStart: 0, newLines: 0 }), 'at the top', 1],
    // Only adds: oldLines 0, the new lines are where the lens goes.
    [hunk('e', { oldStart: 3, oldLines: 0, newStart: 4, newLines: 2 }), 'lines 4–5', 4],
  ])('%#: %j', (h, label, line) => {
    expect(hunkLines(h)).toBe(label);
    expect(hunkLine(h)).toBe(line);
  });

  it('clamps the line to the document: a removal at the end goes on the last line', () => {
    expect(hunkLine(hunk('x', { oldStart: 10, oldLines: 2, newStart: 9, newLines: 0 }), 9)).toBe(9);
    expect(hunkLine(hunk('y', { newStart: 0, newLines: 0 }), 0)).toBe(1);
  });
});

describe('review progress', () => {
  it('counts the changes left, kept and undone', () => {
    const p = progressOf({ hunks: [hunk('a'), hunk('b', { review: 'kept' })], hunksUndone: 1 });
    expect(p).toEqual({ total: 3, kept: 1, undone: 1, pending: 1 });
    expect(progressText(p)).toBe('3 changes · 1 kept · 1 undone');
    expect(reviewedByHunk(p)).toBe(false);
    expect(progressText(progressOf({ hunks: [hunk('a')] }))).toBe('1 change');
  });

  it('from the history alone, says what was done without a total', () => {
    const p = progressOf({ hunksKept: 1, hunksUndone: 2 });
    expect(p.total).toBeUndefined();
    expect(progressText(p)).toBe('1 kept · 2 undone');
    expect(progressText(progressOf({}))).toBe('');
  });

  it('a file whose changes left were all kept is reviewed', () => {
    expect(reviewedByHunk(progressOf({ hunks: [hunk('a', { review: 'kept' })], hunksUndone: 1 }))).toBe(true);
    expect(reviewedByHunk(progressOf({ hunks: [] }))).toBe(false);
  });

  it("reads the diff editor's restore point", () => {
    expect(reviewTarget('session=abc%201&turn=3&side=before&v=2')).toEqual({ sessionId: 'abc 1', turn: 3 });
    expect(reviewTarget('session=abc&turn=3&side=deleted&v=2')).toBeUndefined();
    expect(reviewTarget('session=abc&turn=x&side=before')).toBeUndefined();
  });
});

describe('the Changes list by change', () => {
  const three = [hunk('h1', { newStart: 2 }), hunk('h2', { newStart: 6, newLines: 2 }), hunk('h3', { newStart: 10 })];
  const listed = run({ type: 'ask', text: 'rewrite' }, turnEnd([file('recipe.md'), file('new.md', { state: 'created' })]));

  it('gives modified files their changes, not created ones, keeping the counts of the turn', () => {
    const s = reduce(listed, { type: 'hunks', turn: 1, files: [file('recipe.md', { added: 9, hunks: three }), file('new.md', { state: 'created' })] });
    const c = s.items.find((it) => it.type === 'changes');
    if (c?.type !== 'changes') throw new Error('no changes');
    expect(c.files.map((f) => [f.path, f.added, f.hunks?.length])).toEqual([['new.md', 3, undefined], ['recipe.md', 3, 3]]);
    // A list asked again (a later turn's end) keeps them.
    const again = reduce(s, turnEnd([file('recipe.md'), file('new.md', { state: 'created' })]));
    const c2 = again.items.find((it) => it.type === 'changes');
    expect(c2?.type === 'changes' && c2.files[1].hunks?.length).toBe(3);
  });

  it('shows the progress and, unfolded, each change with its own Keep and Undo', () => {
    const s = reduce(listed, { type: 'hunks', turn: 1, files: [file('recipe.md', { hunks: [three[0], { ...three[1], review: 'kept' }], hunksUndone: 1 })] });
    const html = render(s, new Set(['hunks-1-recipe.md']));
    expect(html).toContain('<details class="hunks" data-key="hunks-1-recipe.md" open><summary title="Review the changes of recipe.md one by one">3 changes · 1 kept · 1 undone</summary>');
    expect(html).toContain('data-line="2" title="Open the diff of recipe.md at this change">Line 2</a>');
    expect(html).toContain('data-hunk="h1" data-hunk-act="keep" title="Keep this change" aria-label="Keep the change at line 2 of recipe.md"');
    expect(html).toContain('data-hunk="h1" data-hunk-act="undo" title="Undo this change alone" aria-label="Undo the change at line 2 of recipe.md"');
    expect(html).toContain('<div class="hunk kept"><a href="#" class="opendiff" data-path="recipe.md" data-turn="1" data-line="6"');
    expect(html).not.toContain('data-hunk="h2"');
    // Folded by default.
    expect(render(s)).toContain('<details class="hunks" data-key="hunks-1-recipe.md"><summary');
  });

  it('a file whose changes left were all kept waits no more; one of a single change has no list', () => {
    const s = reduce(listed, { type: 'hunks', turn: 1, files: [file('recipe.md', { hunks: [{ ...three[0], review: 'kept' }, { ...three[1], review: 'kept' }], hunksUndone: 1 })] });
    const html = render(s);
    expect(html).toContain('<div class="row reviewed" data-path="recipe.md">');
    expect(html).toContain('Reviewed</span>');
    expect(html).toContain('<div class="hunks-progress">3 changes · 2 kept · 1 undone</div>');
    expect(html).toContain('Changes · 2 files · 1 to review');
    const one = render(reduce(listed, { type: 'hunks', turn: 1, files: [file('recipe.md', { hunks: [three[0]] })] }));
    expect(one).not.toContain('hunks');
  });

  it('a file whose changes were all undone one by one is listed undone, with nothing left to review', () => {
    // The first undone: two left; the second: the server lists the file no more, and the
    // extension marks it undone whole (Review.undoHunk), in this order.
    const one = reduce(listed, { type: 'hunks', turn: 1, files: [file('recipe.md', { hunks: [three[1]], hunksUndone: 1 }), file('new.md', { state: 'created' })] });
    const gone = reduce(one, { type: 'hunks', turn: 1, files: [file('new.md', { state: 'created' })] });
    const s = reduce(gone, { type: 'review', turn: 1, paths: ['recipe.md'], review: 'undone' });
    const html = render(s);
    expect(html).toContain('<div class="row undone" data-path="recipe.md">');
    expect(html).toContain('Undone</span>');
    expect(html).not.toMatch(/data-path="recipe.md"[^]*data-hunk-act/);
    // No count of changes left over from before the last undo.
    expect(html).not.toContain('hunks-progress');
    // Only the created file waits.
    expect(html).toContain('Changes · 2 files · 1 to review');
    // Listed again at a later turn's end without it, the file stays listed undone.
    const later = reduce(s, turnEnd([file('new.md', { state: 'created' })]));
    expect(render(later)).toContain('<div class="row undone" data-path="recipe.md">');
  });

  it('a reopened session shows the counts its history gives', () => {
    const s = fromHistory('s1', [
      { turn: 1, kind: 'user', text: 'rewrite' },
      { turn: 1, kind: 'turn_end', stopReason: 'end_turn', changes: [file('recipe.md', { review: 'pending', hunksKept: 1, hunksUndone: 1 })] },
    ], []);
    expect(render(s)).toContain('<div class="hunks-progress">1 kept · 1 undone</div>');
  });
});
