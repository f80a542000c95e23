// Messages between the chat view's host side (view.ts) and its webview (webview.ts).
import type { ContextUsage } from '../protocol';
import type { Answer } from './approval';
import type { ChatState } from './state';

export type ToWebview = {
  type: 'state';
  chat: ChatState;
  usage?: ContextUsage;
  compacting: boolean;
  /** a compaction runs in the background (reprise/contextUsage) */
  background: boolean;
  /** the selection the next question is about ("path:10-20"), shown above the input */
  attachment?: string;
} | { type: 'focus' };

export type FromWebview =
  | { type: 'ready' }
  | { type: 'ask'; text: string }
  | { type: 'cancel' }
  | { type: 'checkpoint'; n: number }
  | { type: 'context' }
  | { type: 'openFile'; path: string; line?: number }
  /** openDiff opens a file's diff from before turn, at line (the file's now) when given */
  | { type: 'openDiff'; path: string; turn: number; line?: number }
  | { type: 'openLink'; url: string }
  | { type: 'review'; action: 'keep' | 'undo'; turn: number; paths: string[] }
  /** hunk keeps or undoes one change (a hunk id of reprise.changes {turn}) of the file at path */
  | { type: 'hunk'; action: 'keep' | 'undo'; turn: number; path: string; id: string }
  | { type: 'detach' }
  | { type: 'approve'; key: string; answer: Answer }
  /** retry asks the last question again; settings opens Reprise's settings; apiKey asks for the key */
  | { type: 'retry' }
  | { type: 'settings' }
  | { type: 'apiKey' }
  | { type: 'copy'; text: string }
  /** insert puts a code block's text at the active editor's cursor (replacing its selection) */
  | { type: 'insert'; text: string }
  /** pin keeps a message's text in the context (turn: the message's turn, when known); unpin drops a pin */
  | { type: 'pin'; text: string; turn?: number }
  | { type: 'unpin'; id: string }
  /** fork starts a new session from before a user message's turn, or after a checkpoint */
  | { type: 'fork'; turn?: number; checkpoint?: number }
  /** stopSubagent stops one subagent, the turn going on; subagentTranscript opens its transcript */
  | { type: 'stopSubagent'; id: string }
  | { type: 'subagentTranscript'; id: string };
