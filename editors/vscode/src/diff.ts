// Line diffs for the review of the agent's edits. Pure: the chat reducer turns an edit's old and
// new texts into a compact diff, and the diff editor gets a file's restore point back by applying
// reprise.changes' unified diff in reverse to the file on disk.

export type Op = { kind: ' ' | '-' | '+'; line: string };

/** splitLines cuts a text into lines that keep their terminator, so that joining gives it back. */
export function splitLines(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', start)) {
    out.push(text.slice(start, i + 1));
    start = i + 1;
  }
  if (start < text.length) out.push(text.slice(start));
  return out;
}

/**
 * Past this many cells (lines of the changed middle, old × new) the middle is shown as replaced
 * whole: an exact diff would cost quadratic memory, and the counts stay right for what it shows.
 */
const maxCells = 4_000_000;

/** lineDiff returns the edit script from a to b: common prefix and suffix, an LCS in between. */
export function lineDiff(a: readonly string[], b: readonly string[]): Op[] {
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]) suf++;
  const out: Op[] = a.slice(0, pre).map((line) => ({ kind: ' ', line }));
  const x = a.slice(pre, a.length - suf);
  const y = b.slice(pre, b.length - suf);
  if (x.length * y.length > maxCells) {
    for (const line of x) out.push({ kind: '-', line });
    for (const line of y) out.push({ kind: '+', line });
  } else out.push(...lcs(x, y));
  for (const line of a.slice(a.length - suf)) out.push({ kind: ' ', line });
  return out;
}

function lcs(x: readonly string[], y: readonly string[]): Op[] {
  const n = x.length;
  const m = y.length;
  // len[i*(m+1)+j]: length of the LCS of x[i:] and y[j:].
  const len = new Uint32Array((n + 1) * (m + 1));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      len[i * (m + 1) + j] = x[i] === y[j] ? len[(i + 1) * (m + 1) + j + 1] + 1 : Math.max(len[(i + 1) * (m + 1) + j], len[i * (m + 1) + j + 1]);
  const out: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && x[i] === y[j]) {
      out.push({ kind: ' ', line: x[i++] });
      j++;
    } else if (j < m && (i === n || len[i * (m + 1) + j + 1] >= len[(i + 1) * (m + 1) + j])) out.push({ kind: '+', line: y[j++] });
    else out.push({ kind: '-', line: x[i++] });
  }
  // Removals before additions within a run, as unified diffs show them.
  return normalize(out);
}

function normalize(ops: Op[]): Op[] {
  const out: Op[] = [];
  for (let k = 0; k < ops.length; ) {
    if (ops[k].kind === ' ') {
      out.push(ops[k++]);
      continue;
    }
    const run: Op[] = [];
    while (k < ops.length && ops[k].kind !== ' ') run.push(ops[k++]);
    out.push(...run.filter((o) => o.kind === '-'), ...run.filter((o) => o.kind === '+'));
  }
  return out;
}

export function counts(ops: readonly Op[]): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const o of ops) {
    if (o.kind === '+') added++;
    else if (o.kind === '-') removed++;
  }
  return { added, removed };
}

/** A hunk's lines as shown: a header ('@@'), context, removed or added lines, without terminators. */
export type ShownLine = { kind: ' ' | '-' | '+' | '@'; text: string };

/**
 * hunks renders ops as unified-diff hunks with context lines around each change, at most
 * maxLines lines; more says how many were left out.
 */
export function hunks(ops: readonly Op[], context = 3, maxLines = 200): { lines: ShownLine[]; more: number } {
  const changed = ops.map((o) => o.kind !== ' ');
  const keep = ops.map((_, i) => {
    for (let d = -context; d <= context; d++) if (changed[i + d]) return true;
    return false;
  });
  const lines: ShownLine[] = [];
  let oldLine = 1;
  let newLine = 1;
  for (let i = 0; i < ops.length; ) {
    if (!keep[i]) {
      if (ops[i].kind !== '+') oldLine++;
      if (ops[i].kind !== '-') newLine++;
      i++;
      continue;
    }
    let end = i;
    while (end < ops.length && keep[end]) end++;
    const part = ops.slice(i, end);
    const { added, removed } = counts(part);
    const common = part.length - added - removed;
    lines.push({ kind: '@', text: `@@ -${oldLine},${common + removed} +${newLine},${common + added} @@` });
    for (const o of part) lines.push({ kind: o.kind, text: o.line.replace(/\r?\n$/, '') });
    oldLine += common + removed;
    newLine += common + added;
    i = end;
  }
  return lines.length > maxLines ? { lines: lines.slice(0, maxLines), more: lines.length - maxLines } : { lines, more: 0 };
}

/**
 * reverseApply gives back the old side of a unified diff (as reprise.changes sends it) from its
 * new side, the file on disk. It throws when the file no longer matches the diff.
 */
export function reverseApply(unified: string, current: string): string {
  const cur = splitLines(current);
  const old: string[] = [];
  let at = 0; // next line of cur not yet copied
  const body = splitLines(unified);
  let k = 0;
  while (k < body.length && !body[k].startsWith('@@')) k++;
  let last: ' ' | '-' | '+' | undefined;
  for (; k < body.length; k++) {
    const l = body[k];
    const h = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@/.exec(l);
    if (h) {
      // "+0,0" (nothing on the new side) starts before the first line.
      const start = Number(h[2] ?? '1') === 0 ? Number(h[1]) : Number(h[1]) - 1;
      if (start < at || start > cur.length) throw new Error('the diff does not fit the file');
      old.push(...cur.slice(at, start));
      at = start;
      last = undefined;
      continue;
    }
    const kind = l[0];
    const text = l.slice(1);
    if (kind === '\\') {
      // The line before has no terminator: on the old side, strip the one written with it.
      if (last === '-') old[old.length - 1] = old[old.length - 1].replace(/\n$/, '');
      continue;
    }
    if (kind === ' ' || kind === '+') {
      const want = text.replace(/\n$/, '');
      if (at >= cur.length || cur[at].replace(/\n$/, '') !== want) throw new Error('the file changed since its diff was made');
      if (kind === ' ') old.push(cur[at]);
      at++;
      last = kind;
    } else if (kind === '-') {
      old.push(text.endsWith('\n') ? text : text + '\n');
      last = '-';
    } else throw new Error(`not a unified diff line: ${JSON.stringify(l.slice(0, 40))}`);
  }
  old.push(...cur.slice(at));
  return old.join('');
}
