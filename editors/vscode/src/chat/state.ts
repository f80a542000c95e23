// The chat transcript as plain data, and the reducer that folds the server's session updates into
// it. No vscode import: the extension host keeps one ChatState per session and posts it to the
// webview, which only renders.
import type { CheckpointInfo, HistoryEntry, SessionUpdate, ToolOutput, Update } from '../protocol';
import {
  CompactionBlocking,
  CompactionDone,
  CompactionRunning,
  EntryAgent,
  EntryCompaction,
  EntryThought,
  EntryTool,
  EntryUser,
  StopEndTurn,
  ToolKindOther,
  ToolStatusInProgress,
  UpdateCompaction,
  UpdateMessageChunk,
  UpdateRetry,
  UpdateThoughtChunk,
  UpdateToolCall,
  UpdateToolCallUpdate,
  UpdateTurnEnd,
} from '../protocol';

export type Item =
  | { type: 'user'; text: string }
  | { type: 'agent'; text: string }
  | { type: 'thought'; text: string }
  | {
      type: 'tool';
      id: string;
      title: string;
      kind: string;
      status: string;
      input?: Record<string, unknown>;
      output?: ToolOutput;
    }
  | { type: 'compaction'; state: string; trigger: string; note?: string; checkpoint?: CheckpointInfo }
  | { type: 'retry'; attempt: number; error: string }
  | { type: 'end'; stopReason: string; error?: string }
  | { type: 'error'; text: string };

export interface ChatState {
  sessionId?: string;
  items: Item[];
  running: boolean;
}

export type Action =
  | { type: 'ask'; text: string }
  | { type: 'asked'; sessionId: string }
  | { type: 'update'; params: SessionUpdate }
  | { type: 'error'; text: string }
  | { type: 'reset'; sessionId?: string };

export function initialState(sessionId?: string): ChatState {
  return { sessionId, items: [], running: false };
}

/** reduce returns the state after an action; it never mutates its input. */
export function reduce(state: ChatState, action: Action): ChatState {
  switch (action.type) {
    case 'reset':
      return initialState(action.sessionId);
    case 'ask':
      return { ...state, running: true, items: [...state.items, { type: 'user', text: action.text }] };
    case 'asked':
      return { ...state, sessionId: action.sessionId };
    case 'error':
      return { ...state, running: false, items: [...state.items, { type: 'error', text: action.text }] };
    case 'update':
      return applyUpdate(state, action.params);
  }
}

function applyUpdate(state: ChatState, p: SessionUpdate): ChatState {
  const u = p.update;
  const items = state.items;
  switch (u.sessionUpdate) {
    case UpdateMessageChunk:
    case UpdateThoughtChunk: {
      const type = u.sessionUpdate === UpdateMessageChunk ? 'agent' : 'thought';
      const text = u.content?.text ?? '';
      const last = items[items.length - 1];
      if (last && last.type === type) {
        return { ...state, running: true, items: [...items.slice(0, -1), { type, text: last.text + text }] };
      }
      return { ...state, running: true, items: [...items, { type, text }] };
    }
    case UpdateToolCall:
    case UpdateToolCallUpdate: {
      const id = u.toolCallId ?? '';
      const i = items.findIndex((it) => it.type === 'tool' && it.id === id);
      const prev = i >= 0 ? (items[i] as Extract<Item, { type: 'tool' }>) : undefined;
      const tool: Item = {
        type: 'tool',
        id,
        title: u.title || prev?.title || id,
        kind: u.kind || prev?.kind || ToolKindOther,
        status: u.status || prev?.status || ToolStatusInProgress,
        input: u.rawInput ?? prev?.input,
        output: u.rawOutput ?? prev?.output,
      };
      const next = i >= 0 ? items.map((it, j) => (j === i ? tool : it)) : [...items, tool];
      return { ...state, running: true, items: next };
    }
    case UpdateCompaction: {
      const c = u.compaction;
      if (!c) return state;
      const item: Item = { type: 'compaction', state: c.state, trigger: c.trigger, note: c.note, checkpoint: c.checkpoint };
      // A compaction's later states replace its marker instead of adding new ones.
      const last = lastIndex(items, (it) => it.type === 'compaction' && (it.state === CompactionRunning || it.state === CompactionBlocking));
      if (last >= 0) return { ...state, items: items.map((it, j) => (j === last ? item : it)) };
      return { ...state, items: [...items, item] };
    }
    case UpdateRetry: {
      const r = u.retry;
      if (!r) return state;
      let kept = items;
      if (r.discard) {
        // The text streamed by the failed call is void: drop the trailing agent text and thoughts.
        let k = kept.length;
        while (k > 0 && (kept[k - 1].type === 'agent' || kept[k - 1].type === 'thought')) k--;
        kept = kept.slice(0, k);
      }
      return { ...state, items: [...kept, { type: 'retry', attempt: r.attempt, error: r.error }] };
    }
    case UpdateTurnEnd:
      return {
        ...state,
        running: false,
        items: [...items, { type: 'end', stopReason: u.stopReason ?? StopEndTurn, error: u.error }],
      };
    default:
      return state;
  }
}

function lastIndex<T>(xs: T[], pred: (x: T) => boolean): number {
  for (let i = xs.length - 1; i >= 0; i--) if (pred(xs[i])) return i;
  return -1;
}

/**
 * fromHistory rebuilds a session's transcript from the entries of reprise.history, through the
 * reducer and the same updates the server streams, so that a reopened session looks as it did live.
 * checkpoints (reprise.checkpoints) fill in the compaction markers (trigger, tokens before and
 * after); without them a marker names its checkpoint only.
 */
export function fromHistory(sessionId: string, entries: readonly HistoryEntry[], checkpoints: readonly CheckpointInfo[] = []): ChatState {
  let state = initialState(sessionId);
  const up = (update: Update) => (state = reduce(state, { type: 'update', params: { sessionId, update } }));
  const endTurn = () => up({ sessionUpdate: UpdateTurnEnd, stopReason: StopEndTurn });
  for (const e of entries) {
    switch (e.kind) {
      case EntryUser:
        if (state.items.length > 0) endTurn();
        state = reduce(state, { type: 'ask', text: e.text ?? '' });
        break;
      case EntryAgent:
        up({ sessionUpdate: UpdateMessageChunk, content: { type: 'text', text: e.text ?? '' } });
        break;
      case EntryThought:
        up({ sessionUpdate: UpdateThoughtChunk, content: { type: 'text', text: e.text ?? '' } });
        break;
      case EntryTool:
        up({
          sessionUpdate: UpdateToolCall,
          toolCallId: e.toolCallId,
          title: e.title,
          kind: e.toolKind,
          status: e.status,
          rawOutput: e.output !== undefined ? { output: e.output } : undefined,
        });
        break;
      case EntryCompaction: {
        const n = e.checkpoint ?? 0;
        const cp: CheckpointInfo = checkpoints.find((c) => c.n === n) ?? {
          n,
          title: e.title ?? '',
          trigger: '',
          replaced: 0,
          tokensBefore: 0,
          tokensAfter: 0,
        };
        up({ sessionUpdate: UpdateCompaction, compaction: { state: CompactionDone, trigger: cp.trigger, checkpoint: n > 0 ? cp : undefined } });
        break;
      }
    }
  }
  if (state.items.length > 0) endTurn();
  return { ...state, running: false };
}

/** userTurns lists the user's prompts of the transcript, numbered from 1 as the server counts turns. */
export function userTurns(state: ChatState): { turn: number; text: string }[] {
  return state.items
    .filter((it): it is Extract<Item, { type: 'user' }> => it.type === 'user')
    .map((it, i) => ({ turn: i + 1, text: it.text }));
}
