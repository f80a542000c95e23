// Messages between the chat view's host side (view.ts) and its webview (webview.ts).
import type { ContextUsage } from '../protocol';
import type { ChatState } from './state';

export type ToWebview = {
  type: 'state';
  chat: ChatState;
  usage?: ContextUsage;
  compacting: boolean;
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
  | { type: 'openDiff'; path: string; turn: number }
  | { type: 'openLink'; url: string }
  | { type: 'review'; action: 'keep' | 'undo'; turn: number; paths: string[] }
  | { type: 'detach' };
