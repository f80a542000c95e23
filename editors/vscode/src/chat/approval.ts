// What an approval request says, read from the server's window/showMessageRequest (lsp/approve.go):
// the first line names what is asked and why, the second is the command (or the MCP call) as
// display text, the third what "Always allow" remembers. Pure: the host parses, the chat renders.
import { ActionAllowOnce, ActionAlwaysAllow, ActionReject } from '../protocol';

export interface Approval {
  /** command: a shell command; mcp: a tool of an MCP server; file: a write to a protected file (git hooks, editor settings) */
  kind: 'command' | 'mcp' | 'file';
  /** the command or the call, as the server shows it (control characters escaped, bounded) */
  command: string;
  /** why it needs approval */
  reason: string;
  /** what "Always allow" stores for the rest of the session, when the server says */
  rule?: string;
}

/** Answer is what the user did with an approval; withdrawn: the turn ended before an answer. */
export type Answer = 'allow' | 'always' | 'reject' | 'withdrawn';

/** actionOf is the title sent back to the server for an answer (null: a rejection). */
export const actionOf: Record<Answer, string | null> = {
  allow: ActionAllowOnce,
  always: ActionAlwaysAllow,
  reject: ActionReject,
  withdrawn: null,
};

const head = /^Reprise wants to (run a command that needs your approval|use a tool of an MCP server|write a protected file) \((.*)\):$/;
const kinds: Record<string, Approval['kind']> = {
  'run a command that needs your approval': 'command',
  'use a tool of an MCP server': 'mcp',
  'write a protected file': 'file',
};
const remembers = new RegExp(`^"${ActionAlwaysAllow}" remembers: (.*)$`);

/**
 * parseApproval reads a showMessageRequest as an approval: its actions must be exactly Allow once,
 * Always allow and Reject. A message in another shape is kept whole as the command, so nothing the
 * server said is lost.
 */
export function parseApproval(message: string, actions: readonly string[]): Approval | undefined {
  if (actions.length !== 3 || actions[0] !== ActionAllowOnce || actions[1] !== ActionAlwaysAllow || actions[2] !== ActionReject) return undefined;
  const lines = message.split('\n');
  const h = head.exec(lines[0] ?? '');
  if (!h || lines.length < 2) return { kind: 'command', command: message, reason: 'it needs your approval' };
  const a: Approval = { kind: kinds[h[1]], reason: h[2], command: lines[1] };
  const r = remembers.exec(lines[2] ?? '');
  if (r) a.rule = r[1];
  return a;
}

/** commandPattern is what the chat shows for "Always allow" when the server does not say: the command's first word and subcommand. */
export function commandPattern(command: string): string {
  const words = command.trim().split(/\s+/).slice(0, 2);
  return words.length === 2 && /^[a-z][\w-]*$/.test(words[1]) ? `${words.join(' ')} …` : `${words[0] ?? command} …`;
}
