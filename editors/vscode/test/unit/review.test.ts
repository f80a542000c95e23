import MarkdownIt from 'markdown-it';
import { describe, expect, it } from 'vitest';
import { fileTarget, linkKind, pathLinks } from '../../src/chat/links';
import { checkpointCSP, checkpointHtml } from '../../src/checkpointView';
import { renderItems } from '../../src/chat/render';
import { Action, ChatState, changesByTurn, initialState, reduce } from '../../src/chat/state';
import type { FileChange, Update } from '../../src/protocol';
import { attachmentOf, maxSelectionChars, withAttachment } from '../../src/selection';

const up = (update: Update): Action => ({ type: 'update', params: { sessionId: 's1', update } });
const run = (...actions: Action[]): ChatState => actions.reduce(reduce, initialState('s1'));
const render = (s: ChatState) => renderItems(s, (t) => t, new Set());

const file = (path: string, over: Partial<FileChange> = {}): FileChange => ({
  path, absPath: `/ws/${path}`, turn: 1, state: 'modified', added: 1, removed: 1, diff: `--- a/${path}\n+++ b/${path}\n@@ -1 +1 @@\n-x\n+y\n`, ...over,
});

describe('an edit in the chat', () => {
  const edit = (content: Update['content']) =>
    run(
      { type: 'ask', text: 'edit' },
      up({ sessionUpdate: 'tool_call', toolCallId: 't1', title: 'Edit src/a.go', kind: 'edit', status: 'in_progress', rawInput: { path: 'src/a.go' } }),
      up({ sessionUpdate: 'tool_call_update', toolCallId: 't1', status: 'completed', rawOutput: { output: 'ok' }, content }),
    );

  it('keeps counts and hunks of the diff, not the whole texts', () => {
    const old = Array.from({ length: 30 }, (_, i) => `line ${i + 1}\n`).join('');
    const s = edit([{ type: 'diff', path: '/ws/src/a.go', oldText: old, newText: old.replace('line 12\n', 'line twelve\n') }]);
    const t = s.items[1];
    if (t.type !== 'tool' || !t.diff) throw new Error('no diff');
    expect(t.diff).toMatchObject({ path: '/ws/src/a.go', turn: 1, added: 1, removed: 1, created: false, more: 0 });
    expect(t.diff.lines.length).toBe(9); // a header, 3 + 3 lines of context, one removed, one added
    expect(JSON.stringify(t.diff)).not.toContain('line 1\\n');
    const html = render(s);
    expect(html).toContain('<span class="add">+1</span> <span class="del">−1</span>');
    expect(html).toContain('class="opendiff" data-path="/ws/src/a.go" data-turn="1"');
    expect(html).toContain('<div class="dl add">+line twelve</div>');
    // The path in the title opens the file at the changed line.
    expect(html).toContain('Edit <a href="#" class="file" data-path="src/a.go" data-line="12"');
  });

  it('marks a created file and shows a note instead of a diff too large to send', () => {
    const created = edit([{ type: 'diff', path: '/ws/src/a.go', newText: 'a\nb\n' }]).items[1];
    expect(created.type === 'tool' && created.diff).toMatchObject({ created: true, added: 2, removed: 0 });
    const big = edit([{ type: 'content', content: { type: 'text', text: 'diff too large: 70 KiB' } }]);
    expect(render(big)).toContain('<div class="note">diff too large: 70 KiB</div>');
    expect(render(big)).not.toContain('class="counts"');
  });

  it('escapes what the model wrote in a diff', () => {
    const html = render(edit([{ type: 'diff', path: '/ws/x"><img src=x>', oldText: '', newText: '<script>alert(1)</script>\n' }]));
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('<img');
  });
});

describe('a turn\'s changes', () => {
  const turn2 = run({ type: 'ask', text: 'one' }, up({ sessionUpdate: 'turn_end', stopReason: 'end_turn' }), { type: 'ask', text: 'two' });

  it('go after the turn they belong to', () => {
    const s = reduce(turn2, { type: 'changes', turn: 1, files: [file('b.txt'), file('a.txt')] });
    expect(s.items.map((it) => it.type)).toEqual(['user', 'end', 'changes', 'user']);
    const c = s.items[2];
    expect(c.type === 'changes' && c.files.map((f) => [f.path, f.review])).toEqual([['a.txt', 'pending'], ['b.txt', 'pending']]);
    expect(reduce(s, { type: 'changes', turn: 2, files: [file('c.txt', { turn: 2 })] }).items.map((it) => it.type)).toEqual(['user', 'end', 'changes', 'user', 'changes']);
    // No file, no list.
    expect(reduce(turn2, { type: 'changes', turn: 1, files: [] })).toBe(turn2);
  });

  it('keep what the user did when listed again', () => {
    let s = reduce(turn2, { type: 'changes', turn: 1, files: [file('a.txt'), file('b.txt'), file('c.txt')] });
    s = reduce(s, { type: 'review', turn: 1, paths: ['a.txt'], review: 'undone' });
    s = reduce(s, { type: 'review', turn: 1, paths: ['b.txt'], review: 'kept' });
    s = reduce(s, { type: 'review', turn: 1, paths: ['c.txt'], review: 'refused', reason: 'changed since the agent last wrote it' });
    // The server no longer lists the undone file.
    s = reduce(s, { type: 'changes', turn: 1, files: [file('b.txt'), file('c.txt')] });
    const c = s.items.find((it) => it.type === 'changes');
    expect(c?.type === 'changes' && c.files.map((f) => [f.path, f.review, f.reason])).toEqual([
      ['a.txt', 'undone', undefined],
      ['b.txt', 'kept', undefined],
      ['c.txt', 'refused', 'changed since the agent last wrote it'],
    ]);
  });

  it('shows a changed file by its whole name, its folder after it to be cut first', () => {
    const s = reduce(turn2, { type: 'changes', turn: 1, files: [file('editors/vscode/src/chat/create_session.ts')] });
    const html = render(s);
    expect(html).toContain('title="Open editors/vscode/src/chat/create_session.ts">create_session.ts</a>');
    expect(html).toContain('<span class="dir" title="editors/vscode/src/chat/create_session.ts">editors/vscode/src/chat</span>');
  });

  it('render Keep and Undo for files not yet reviewed, and why an undo was refused', () => {
    let s = reduce(turn2, { type: 'changes', turn: 1, files: [file('a.txt'), file('b.txt', { state: 'created', removed: 0, userChanged: true }), file('c.txt')] });
    let html = render(s);
    expect(html).toContain('Changes · 3 files');
    expect(html).toContain('data-act="undo" data-all="1"');
    expect(html).toContain('<div class="row pending" data-path="b.txt"><span class="name"><span class="codicon codicon-new-file" aria-hidden="true"></span> <a href="#" class="file" data-path="b.txt"');
    // Each row is a toolbar: the diff as an icon, Keep and Undo as buttons with their icons.
    expect(html).toContain('<a href="#" class="opendiff icon-button" role="button" data-path="b.txt" data-turn="1"');
    expect(html).toContain('<button class="icon-button" data-act="keep" title="Keep the agent\'s change to b.txt" aria-label="Keep"><span class="codicon codicon-check" aria-hidden="true"></span></button>');
    expect(html).toContain('Changes · 3 files · 3 to review');
    expect(html).toContain('<span class="state">created</span>');
    expect(html).toContain('<span class="state">edited since</span>');
    s = reduce(s, { type: 'review', turn: 1, paths: ['a.txt'], review: 'undone' });
    s = reduce(s, { type: 'review', turn: 1, paths: ['b.txt'], review: 'refused', reason: 'changed since the agent last wrote it' });
    html = render(s);
    expect(html).toMatch(/<div class="row undone" data-path="a.txt">.*<span class="done"><span class="codicon codicon-discard" aria-hidden="true"><\/span> Undone<\/span>/);
    expect(html).toContain('<div class="reason">Not undone: changed since the agent last wrote it</div>');
    // Two files are still open: b.txt (refused) and c.txt.
    expect(html).toContain('data-act="keep" data-all="1"');
    // Keep all and Undo all stay while one file is left.
    s = reduce(s, { type: 'review', turn: 1, paths: ['b.txt'], review: 'kept' });
    expect(render(s)).toContain('Undo all</button>');
    s = reduce(s, { type: 'review', turn: 1, paths: ['b.txt', 'c.txt'], review: 'kept' });
    expect(render(s)).not.toContain('data-act');
  });

  it('come with the turn_end, without their diffs', () => {
    const s = run(
      { type: 'ask', text: 'one' },
      up({ sessionUpdate: 'turn_end', stopReason: 'end_turn', changes: [file('b.txt'), file('a.txt')] }),
      { type: 'ask', text: 'two' },
      up({ sessionUpdate: 'turn_end', stopReason: 'end_turn' }),
    );
    expect(s.items.map((it) => it.type)).toEqual(['user', 'end', 'changes', 'user', 'end']);
    const c = s.items[2];
    expect(c.type === 'changes' && c.files.map((f) => [f.path, f.review, f.diff])).toEqual([['a.txt', 'pending', undefined], ['b.txt', 'pending', undefined]]);
  });

  it('rebuilt from a history carry their review state, which a later listing keeps', () => {
    let s = reduce(turn2, { type: 'changes', turn: 1, files: [file('a.txt', { review: 'kept' }), file('b.txt', { review: 'refused', reason: 'edited' }), file('c.txt', { review: 'pending' })] });
    s = reduce(s, { type: 'changes', turn: 1, files: [file('a.txt'), file('b.txt'), file('c.txt')] });
    const c = s.items.find((it) => it.type === 'changes');
    expect(c?.type === 'changes' && c.files.map((f) => [f.path, f.review, f.reason])).toEqual([
      ['a.txt', 'kept', undefined],
      ['b.txt', 'refused', 'edited'],
      ['c.txt', 'pending', undefined],
    ]);
  });

  it('undone from a turn are undone in the later turns too, as the file is back to before that turn', () => {
    let s = reduce(turn2, { type: 'changes', turn: 1, files: [file('a.txt'), file('b.txt')] });
    s = reduce(s, { type: 'changes', turn: 2, files: [file('a.txt', { turn: 2 })] });
    s = reduce(s, { type: 'review', turn: 1, paths: ['a.txt'], review: 'undone' });
    const rows = s.items.flatMap((it) => (it.type === 'changes' ? it.files.map((f) => [it.turn, f.path, f.review]) : []));
    expect(rows).toEqual([[1, 'a.txt', 'undone'], [1, 'b.txt', 'pending'], [2, 'a.txt', 'undone']]);
    // A Keep is the turn's own.
    s = reduce(s, { type: 'changes', turn: 3, files: [file('b.txt', { turn: 3 })] });
    s = reduce(s, { type: 'review', turn: 1, paths: ['b.txt'], review: 'kept' });
    const last = s.items.filter((it) => it.type === 'changes').pop();
    expect(last?.type === 'changes' && last.files[0].review).toBe('pending');
  });

  it('of a reopened session are grouped by the turn of their restore point', () => {
    const m = changesByTurn([file('a', { turn: 1 }), file('b', { turn: 3 }), file('c', { turn: 1 })]);
    expect([...m].map(([t, fs]) => [t, fs.map((f) => f.path)])).toEqual([[1, ['a', 'c']], [3, ['b']]]);
  });
});

describe('path links in answers', () => {
  const md = new MarkdownIt({ html: false, linkify: true }).use(pathLinks);
  it('link code spans and paths with a known extension', () => {
    const html = md.render('See `lsp/server.go:42` and agent/loop.go, then README.md.');
    expect(html).toContain('<a href="#" class="file" data-path="lsp/server.go" data-line="42" title="Open lsp/server.go at line 42"><code>lsp/server.go:42</code></a>');
    expect(html).toContain('data-path="agent/loop.go"');
    expect(html).toContain('data-path="README.md"');
  });
  it('leave alone what is not a path', () => {
    const html = md.render('Version `1.2.3`, e.g. this, https://example.com/a.go and `a b.go`.\n\n```\nmain.go\n```');
    expect(html).not.toContain('class="file"');
  });
  it('escape the text around a link', () => {
    expect(md.render('a <b> c.go')).toContain('a &lt;b&gt; <a href="#" class="file" data-path="c.go"');
  });
});

describe('links the model wrote', () => {
  const md = new MarkdownIt({ html: false, linkify: true }).use(pathLinks);
  /** anchors lists the <a> tags of html. */
  const anchors = (html: string) => html.match(/<a [^>]*>/g) ?? [];
  it('a Markdown link to a workspace file is a file link, at its line', () => {
    const html = md.render('See [the loop](agent/loop.go#L12) and [notes](./docs/my%20notes.md:3).');
    expect(html).toContain('<a href="#" class="file" data-path="agent/loop.go" data-line="12" title="Open agent/loop.go at line 12">the loop</a>');
    expect(html).toContain('data-path="./docs/my notes.md" data-line="3"');
  });
  it.each([
    ['vscode://file/etc/passwd', 'vscode://file/etc/passwd'],
    ['vscode://vscode.git/clone?url=https://evil.example/x.git', 'vscode://vscode.git/clone?url=https://evil.example/x.git'],
    ['command:workbench.action.terminal.sendSequence?%7B%22text%22%3A%22id%22%7D', 'command:workbench.action.terminal.sendSequence'],
    ['/etc/passwd', '/etc/passwd'],
    ['//evil.example/x', '//evil.example/x'],
    ['mailto:someone@example.com', 'mailto:someone@example.com'],
  ])('[README.md](%s) is shown as what it is, not as a link', (href, shown) => {
    const html = md.render(`Open [README.md](${href}) now.`);
    expect(anchors(html)).toEqual([]);
    expect(html).not.toContain('href="vscode');
    expect(html).not.toContain('href="command');
    expect(html).toContain('<span class="link-off" title="Not a link of this workspace">README.md</span> <span class="url">');
    expect(html).toContain(shown);
  });
  it('a web link shows its address and opens through the extension, never by navigation', () => {
    const html = md.render('Read [the docs](https://example.com/docs) or https://example.com/a.go.');
    expect(html).toContain('<a href="#" class="web" data-href="https://example.com/docs" title="Open https://example.com/docs in the browser">the docs</a> <span class="url">https://example.com/docs</span>');
    // A bare address is shown once.
    expect(html).toContain('<a href="#" class="web" data-href="https://example.com/a.go" title="Open https://example.com/a.go in the browser">https://example.com/a.go</a>.');
    for (const a of anchors(html)) expect(a).toMatch(/^<a href="#" /);
  });
  it('javascript: and data: links stay text', () => {
    const html = md.render('[x](javascript:alert(1)) [y](data:text/html,hi)');
    expect(anchors(html)).toEqual([]);
  });
  it('an image is never loaded: its description and address are shown', () => {
    const html = md.render('![tracker](https://beacon.example/p.png?u=1) ![](http://127.0.0.1:9/x.png)');
    expect(html).not.toContain('<img');
    expect(html).toContain('<span class="blocked" title="Images are not loaded">[image: tracker]</span> <span class="url">https://beacon.example/p.png?u=1</span>');
    expect(html).toContain('[image]</span> <span class="url">http://127.0.0.1:9/x.png</span>');
  });
  it('linkKind and fileTarget', () => {
    expect(['a.go', 'src/a.ts#L3', './x', 'https://h/x', 'http://h', 'vscode://x', 'command:x', 'file:///etc', '/abs', '#top', '', 'C:\\x'].map(linkKind)).toEqual(
      ['file', 'file', 'file', 'web', 'web', 'other', 'other', 'other', 'other', 'other', 'other', 'other'],
    );
    expect(fileTarget('a.ts#L3-L5')).toEqual({ path: 'a.ts', line: 3 });
    expect(fileTarget('a%2.ts')).toEqual({ path: 'a%2.ts', line: undefined });
  });
});

describe('the checkpoint view', () => {
  const summary = [
    '# Checkpoint 1: Read the notes',
    '',
    '**Objective:** read the notes. ![tracker](https://beacon.example/p.png) <img src="https://beacon.example/raw.png">',
    '',
    'See [the docs](https://example.com/docs), [a file](notes.txt), [run](command:workbench.action.terminal.new) and <https://auto.example/x>.',
    '',
    '<script>alert(1)</script>',
  ].join('\n');
  const html = checkpointHtml(summary, 'Checkpoint 1: Read the notes', 'vscode-webview://abc', 'vscode-webview://abc/media/checkpoint.css');
  it('allows nothing but its stylesheet', () => {
    expect(checkpointCSP('vscode-webview://abc')).toBe("default-src 'none'; style-src vscode-webview://abc;");
    expect(html).toContain(`<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src vscode-webview://abc;">`);
    expect(html).not.toMatch(/img-src|https:;|script-src/);
  });
  it('loads no image and has no link, no script, no raw HTML', () => {
    expect(html).not.toMatch(/<img|<a |<script| src="| href="(?!vscode-webview:)/);
    expect(html).toContain('&lt;img src=&quot;https://beacon.example/raw.png&quot;&gt;');
    expect(html).toContain('[image: tracker]</span> <span class="url">https://beacon.example/p.png</span>');
    expect(html).toContain('<span class="link-off" title="Links are not followed here">the docs</span> <span class="url">https://example.com/docs</span>');
    expect(html).toContain('<span class="link-off" title="Links are not followed here">a file</span> <span class="url">notes.txt</span>');
    expect(html).toContain('command:workbench.action.terminal.new');
    expect(html).toContain('<h1>Checkpoint 1: Read the notes</h1>');
  });
});

describe('a selection attached to a question', () => {
  it('is fenced so that its text cannot close the fence', () => {
    const a = attachmentOf('src/a.ts', 'typescript', 3, 5, 'x\n```\ny');
    expect(a.label).toBe('src/a.ts:3-5');
    expect(a.text).toBe('The question is about this selection of src/a.ts, lines 3-5:\n````typescript\nx\n```\ny\n````');
    expect(withAttachment('Why?', a)).toBe(`Why?\n\n${a.text}`);
    expect(withAttachment('Why?', undefined)).toBe('Why?');
  });
  it('is named, not sent, when large', () => {
    const a = attachmentOf('big.txt', 'plaintext', 7, 7, 'x'.repeat(maxSelectionChars + 1));
    expect(a.label).toBe('big.txt:7');
    expect(a.text).toContain('big.txt, line 7');
    expect(a.text).not.toContain('xxx');
  });
  it('shows on the question in the chat', () => {
    const s = run({ type: 'ask', text: 'Why?', attachment: 'src/a.ts:3-5' });
    expect(render(s)).toContain('<div class="attachment">src/a.ts:3-5</div>');
  });
});
