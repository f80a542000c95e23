import { describe, expect, it } from 'vitest';
import { counts, hunks, lineDiff, reverseApply, splitLines } from '../../src/diff';

const diff = (a: string, b: string) => lineDiff(splitLines(a), splitLines(b));

describe('lineDiff', () => {
  it('finds the changed line between common ones', () => {
    const ops = diff('a\nb\nc\n', 'a\nB\nc\n');
    expect(ops.map((o) => o.kind + o.line).join('')).toBe(' a\n-b\n+B\n c\n');
    expect(counts(ops)).toEqual({ added: 1, removed: 1 });
  });

  it('counts a created and an emptied file', () => {
    expect(counts(diff('', 'x\ny\n'))).toEqual({ added: 2, removed: 0 });
    expect(counts(diff('x\ny\n', ''))).toEqual({ added: 0, removed: 2 });
  });

  it('keeps interleaved changes apart', () => {
    const ops = diff('1\n2\n3\n4\n5\n', '1\nX\n3\n5\n6\n');
    expect(counts(ops)).toEqual({ added: 2, removed: 2 });
    expect(ops.filter((o) => o.kind === ' ').map((o) => o.line)).toEqual(['1\n', '3\n', '5\n']);
  });

  it('replaces a huge middle whole instead of spending quadratic memory', () => {
    const a = Array.from({ length: 3000 }, (_, i) => `a${i}\n`).join('');
    const b = Array.from({ length: 3000 }, (_, i) => `b${i}\n`).join('');
    expect(counts(diff(a, b))).toEqual({ added: 3000, removed: 3000 });
  });
});

describe('hunks', () => {
  it('shows three lines of context and numbers the hunks', () => {
    const a = Array.from({ length: 20 }, (_, i) => `${i + 1}\n`).join('');
    const b = a.replace('2\n', 'two\n').replace('18\n', 'eighteen\n');
    const { lines, more } = hunks(diff(a, b));
    expect(more).toBe(0);
    const heads = lines.filter((l) => l.kind === '@').map((l) => l.text);
    expect(heads).toEqual(['@@ -1,5 +1,5 @@', '@@ -15,6 +15,6 @@']);
    expect(lines).toContainEqual({ kind: '+', text: 'eighteen' });
  });

  it('bounds what it shows and says how much is left out', () => {
    const b = Array.from({ length: 500 }, (_, i) => `${i}\n`).join('');
    const { lines, more } = hunks(diff('', b), 3, 200);
    expect(lines.length).toBe(200);
    expect(more).toBe(301); // 500 lines and a header
  });
});

describe('reverseApply', () => {
  // Diffs as agent/diff writes them (its own test cases).
  const cases: [string, string, string, string][] = [
    ['one line', 'a\nb\nc\n', 'a\nB\nc\n', '--- x\n+++ y\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n'],
    ['created', '', 'a\n', '--- /dev/null\n+++ b/x\n@@ -0,0 +1 @@\n+a\n'],
    ['deleted', 'a\nb\n', '', '--- a/x\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n'],
    ['no newline', 'a\n', 'a', '--- x\n+++ y\n@@ -1 +1 @@\n-a\n+a\n\\ No newline at end of file\n'],
    ['old without newline', 'a', 'a\nb\n', '--- x\n+++ y\n@@ -1 +1,2 @@\n-a\n\\ No newline at end of file\n+a\n+b\n'],
    [
      'two hunks',
      '1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n',
      '0\n2\n3\n4\n5\n6\n7\n8\n9\n11\n',
      '--- x\n+++ y\n@@ -1,4 +1,4 @@\n-1\n+0\n 2\n 3\n 4\n@@ -7,4 +7,4 @@\n 7\n 8\n 9\n-10\n+11\n',
    ],
  ];
  for (const [name, old, cur, unified] of cases) {
    it(`gives back the old side: ${name}`, () => expect(reverseApply(unified, cur)).toBe(old));
  }

  it('refuses a file changed since the diff', () => {
    expect(() => reverseApply('--- x\n+++ y\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n', 'a\nC\nc\n')).toThrow(/changed since/);
  });
});
