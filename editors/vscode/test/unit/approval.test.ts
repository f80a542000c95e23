import { describe, expect, it } from 'vitest';
import { commandPattern, parseApproval } from '../../src/chat/approval';
import { renderItems } from '../../src/chat/render';
import { Action, activity, ChatState, initialState, pendingApproval, reduce } from '../../src/chat/state';
import type { Update } from '../../src/protocol';

const actions = ['Allow once', 'Always allow', 'Reject'];
const up = (update: Update, at = 0): Action => ({ type: 'update', params: { sessionId: 's1', update }, at });
const run = (...as: Action[]): ChatState => as.reduce(reduce, initialState('s1'));
const render = (s: ChatState) => renderItems(s, (t) => t, new Set());

describe('parseApproval', () => {
  it('reads the command, the reason and the rule of lsp/approve.go', () => {
    const msg = 'Reprise wants to run a command that needs your approval (not in the allowlist (reprise.allow)):\ngo test ./...\n"Always allow" remembers: go test';
    expect(parseApproval(msg, actions)).toEqual({ kind: 'command', reason: 'not in the allowlist (reprise.allow)', command: 'go test ./...', rule: 'go test' });
  });
  it('tells an MCP call from a command', () => {
    const msg = 'Reprise wants to use a tool of an MCP server (MCP tools are always asked):\neverything__echo {"message":"hi"}\n"Always allow" remembers: everything__echo';
    expect(parseApproval(msg, actions)?.kind).toBe('mcp');
  });
  it('tells a protected file write, shown without a prompt sign', () => {
    const msg = 'Reprise wants to write a protected file (.vscode/tasks.json holds editor or shell settings that can run programs outside the sandbox):\nwrite .vscode/tasks.json\n"Always allow" remembers: writes to .vscode/tasks.json';
    const a = parseApproval(msg, actions);
    expect(a).toEqual({ kind: 'file', reason: '.vscode/tasks.json holds editor or shell settings that can run programs outside the sandbox', command: 'write .vscode/tasks.json', rule: 'writes to .vscode/tasks.json' });
    const html = render(run({ type: 'ask', text: 'x' }, { type: 'approval', key: 'k9', approval: a! }));
    expect(html).toContain('Reprise wants to write a protected file');
    expect(html).toContain('<pre class="cmd">write .vscode/tasks.json</pre>');
  });
  it('keeps a message of another shape whole, and leaves other questions alone', () => {
    expect(parseApproval('Run it?', actions)).toEqual({ kind: 'command', command: 'Run it?', reason: 'it needs your approval' });
    expect(parseApproval('Use / as the workspace?', ['Use it as the workspace', 'Do not use it'])).toBeUndefined();
  });
  it('shows the command pattern when the server does not name the rule', () => {
    expect(commandPattern('git diff --stat')).toBe('git diff …');
    expect(commandPattern('./build.sh --all')).toBe('./build.sh …');
  });
});

describe('an approval in the chat', () => {
  const asked = run(
    { type: 'ask', text: 'Run echo' },
    up({ sessionUpdate: 'tool_call', toolCallId: 't1', title: 'Run echo hi', kind: 'execute', status: 'in_progress', rawInput: { command: 'echo hi' } }, 1000),
    { type: 'approval', key: 'k1', approval: { kind: 'command', command: 'echo hi', reason: 'not in the allowlist', rule: 'echo hi' } },
  );

  it('is a card with the command, why, the three answers with their keys, and the rule stored', () => {
    const html = render(asked);
    expect(html).toContain('<div class="approval pending" data-key="k1"');
    expect(html).toContain('<pre class="cmd">$ echo hi</pre>');
    expect(html).toContain('Needs your approval: not in the allowlist');
    for (const a of ['data-answer="allow"', 'data-answer="always"', 'data-answer="reject"', '<kbd>1</kbd>', '<kbd>2</kbd>', '<kbd>3</kbd>']) expect(html).toContain(a);
    expect(html).toContain('Always allow remembers <code>echo hi</code> for the rest of this session.');
    expect(pendingApproval(asked)?.key).toBe('k1');
    expect(activity(asked, 5000)).toEqual({ kind: 'approval', text: 'Waiting for your approval' });
  });

  it('becomes one line once answered, and the agent is no longer waiting', () => {
    const s = reduce(asked, { type: 'answered', key: 'k1', answer: 'always' });
    expect(render(s)).toContain('Always allowed: <code>echo hi</code>');
    expect(pendingApproval(s)).toBeUndefined();
    expect(activity(s, 4000)).toEqual({ kind: 'tool', text: 'Running echo hi · 3 s' });
  });

  it('once the command runs, the activity line keeps the row\'s clock, which the approval\'s wait is not in', () => {
    const answered = reduce(asked, { type: 'answered', key: 'k1', answer: 'allow' });
    // Asked at 1 s, answered 20 s later; the command has run 2 s when the server says so.
    const s = reduce(answered, { type: 'update', at: 23_000, params: { sessionId: 's1', update: { sessionUpdate: 'tool_call_update', toolCallId: 't1', status: 'in_progress', live: { tail: 'x', bytes: 1, elapsedMs: 2000 } } } });
    expect(activity(s, 23_000)?.text).toBe('Running echo hi · 2 s');
    expect(render(s)).toContain('running · 2 s');
  });

  it('is withdrawn when the turn ends unanswered', () => {
    const s = reduce(asked, up({ sessionUpdate: 'turn_end', stopReason: 'cancelled' }));
    expect(render(s)).toContain('Not answered: the turn ended');
    expect(pendingApproval(s)).toBeUndefined();
  });
});
