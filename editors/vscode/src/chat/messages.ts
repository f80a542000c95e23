// Messages between the chat view's host side (view.ts) and its webview (webview.ts).
import type { ContextUsage } from '../protocol';
import type { ChatState } from './state';

export type ToWebview = { type: 'state'; chat: ChatState; usage?: ContextUsage; compacting: boolean };

export type FromWebview =
  | { type: 'ready' }
  | { type: 'ask'; text: string }
  | { type: 'cancel' }
  | { type: 'checkpoint'; n: number }
  | { type: 'context' };
