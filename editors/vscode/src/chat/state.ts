// The chat transcript as plain data, and the reducer that folds the server's session updates into
// it. No vscode import: the extension host keeps one ChatState per session and posts it to the
// webview, which only renders.
import { counts, hunks, lineDiff, ShownLine, splitLines } from '../diff';
import type { Answer, Approval } from './approval';
import { splitAttachment } from '../selection';
import type { CheckpointInfo, FileChange, HistoryEntry, LiveOutput, Pin, PlanEntry, SessionUpdate, Subagent, ToolContent, ToolOutput, Update } from '../protocol';
import {
  CompactionBlocking,
  CompactionDone,
  CompactionRunning,
  EntryAgent,
  EntryCompaction,
  EntryThought,
  EntryTool,
  EntryTurnEnd,
  EntryUser,
  StopEndTurn,
  ToolKindOther,
  ToolKindThink,
  ToolStatusCompleted,
  ToolStatusInProgress,
  UpdateCompaction,
  UpdateMessageChunk,
  UpdatePins,
  UpdatePlan,
  UpdateRetry,
  UpdateSubagent,
  UpdateThoughtChunk,
  UpdateToolCall,
  UpdateToolCallUpdate,
  UpdateTurnEnd,
} from '../protocol';

/** EditDiff is an edit's diff as the chat shows it: counts and bounded hunks, not whole texts. */
export interface EditDiff {
  /** absolute, as the server sends it */
  path: string;
  /** the turn the edit belongs to: its restore point is before that turn */
  turn: number;
  added: number;
  removed: number;
  created: boolean;
  lines: ShownLine[];
  /** lines of the diff left out of lines */
  more: number;
  /** why there is no diff (too large, binary) */
  note?: string;
}

/** Review is what the user did with a changed file: nothing yet, kept, undone, or an undo refused. */
export type Review = 'pending' | 'kept' | 'undone' | 'refused';

export interface ChangeRow extends FileChange {
  review: Review;
  reason?: string;
}

export type Item =
  | { type: 'user'; text: string; attachment?: string }
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
      diff?: EditDiff;
      /** a running command's output so far, until its result comes */
      live?: LiveOutput;
      /** when the call started and ended (ms since the epoch), for the elapsed time */
      started?: number;
      ended?: number;
      /** a task call's subagent, as its last subagent update showed it */
      subagent?: Subagent;
    }
  | { type: 'approval'; key: string; approval: Approval; answer?: Answer }
  | { type: 'changes'; turn: number; files: ChangeRow[] }
  | { type: 'compaction'; state: string; trigger: string; note?: string; checkpoint?: CheckpointInfo }
  /** a model call retried: one line per call, updated in place (at: when, delay: the wait in ms) */
  | { type: 'retry'; attempt: number; error: string; delay: number; at: number }
  | { type: 'end'; stopReason: string; error?: string }
  | { type: 'error'; text: string };

export interface ChatState {
  sessionId?: string;
  items: Item[];
  running: boolean;
  /** the session's pins, as the last pins update (or reprise.history) gave them; absent before any */
  pins?: Pin[];
  /** the agent's plan, as its last plan update (or the history's last write_todos) gave it */
  plan?: PlanEntry[];
}

export type Action =
  | { type: 'ask'; text: string; attachment?: string }
  | { type: 'asked'; sessionId: string }
  /** changes gives the files a turn changed (reprise.changes, filtered to that turn) */
  | { type: 'changes'; turn: number; files: FileChange[] }
  | { type: 'review'; turn: number; paths: string[]; review: Review; reason?: string }
  /** hunks gives the changes of a turn's files now (reprise.changes {turn}), each kept or pending */
  | { type: 'hunks'; turn: number; files: FileChange[] }
  /** at: when the update came (ms since the epoch); the elapsed times and countdowns count from it */
  | { type: 'update'; params: SessionUpdate; at?: number }
  /** approval: the server asks about a command; answered: the user (or the end of the turn) answered */
  | { type: 'approval'; key: string; approval: Approval }
  | { type: 'answered'; key: string; answer: Answer }
  | { type: 'error'; text: string }
  /** pins: every pin of the session, from reprise.pin or reprise.unpin's result */
  | { type: 'pins'; pins: readonly Pin[] | null }
  | { type: 'reset'; sessionId?: string };

export function initialState(sessionId?: string): ChatState {
  return { sessionId, items: [], running: false };
}

/** reduce returns the state after an action; it never mutates its input. */
export function reduce(state: ChatState, action: Action): ChatState {
  switch (action.type) {
    case 'reset':
      return initialState(action.sessionId);
    case 'ask': {
      const user: Item = action.attachment ? { type: 'user', text: action.text, attachment: action.attachment } : { type: 'user', text: action.text };
      return { ...state, running: true, items: [...state.items, user] };
    }
    case 'changes':
      return setChanges(state, action.turn, action.files);
    case 'review':
      return setReview(state, action.turn, action.paths, action.review, action.reason);
    case 'hunks':
      return setHunks(state, action.turn, action.files);
    case 'asked':
      return { ...state, sessionId: action.sessionId };
    case 'error':
      return { ...state, running: false, items: [...state.items, { type: 'error', text: action.text }] };
    case 'update':
      return applyUpdate(state, action.params, action.at ?? 0);
    case 'pins':
      return { ...state, pins: [...(action.pins ?? [])] };
    case 'approval':
      return { ...state, items: [...state.items, { type: 'approval', key: action.key, approval: action.approval }] };
    case 'answered':
      return answer(state, action.key, action.answer);
  }
}

function answer(state: ChatState, key: string | undefined, a: Answer): ChatState {
  return {
    ...state,
    items: state.items.map((it) => (it.type === 'approval' && !it.answer && (key === undefined || it.key === key) ? { ...it, answer: a } : it)),
  };
}

/** pendingApproval is the approval waiting for the user's answer, if any. */
export function pendingApproval(state: ChatState): Extract<Item, { type: 'approval' }> | undefined {
  return state.items.find((it): it is Extract<Item, { type: 'approval' }> => it.type === 'approval' && !it.answer);
}

function applyUpdate(state: ChatState, p: SessionUpdate, at: number): ChatState {
  const u = p.update;
  const items = state.items;
  switch (u.sessionUpdate) {
    case UpdateMessageChunk:
    case UpdateThoughtChunk: {
      const type = u.sessionUpdate === UpdateMessageChunk ? 'agent' : 'thought';
      const text = u.content && !Array.isArray(u.content) ? u.content.text : '';
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
        diff: Array.isArray(u.content) ? (editDiff(u.content, turnCount(items)) ?? prev?.diff) : prev?.diff,
        subagent: prev?.subagent,
      };
      if (!tool.diff) delete tool.diff;
      if (!tool.subagent) delete tool.subagent;
      // The output so far is shown while the call runs; the result replaces it.
      const live = tool.status === ToolStatusInProgress ? (u.live ?? prev?.live) : undefined;
      if (live) tool.live = live;
      if (at) {
        tool.started = prev?.started ?? at;
        if (tool.status !== ToolStatusInProgress) tool.ended = prev?.ended ?? at;
      }
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
      // One line per retried call: a retry right after another replaces it.
      const line: Item = { type: 'retry', attempt: r.attempt, error: r.error, delay: Math.round((r.delay ?? 0) / 1e6), at };
      const last = kept[kept.length - 1];
      if (last && last.type === 'retry') return { ...state, items: [...kept.slice(0, -1), line] };
      return { ...state, items: [...kept, line] };
    }
    case UpdateSubagent: {
      // Its progress goes on its task call's row, which the tool_call made.
      const i = items.findIndex((it) => it.type === 'tool' && it.id === u.toolCallId);
      if (i < 0 || !u.subagent) return state;
      const sub = u.subagent;
      return { ...state, items: items.map((it, j) => (j === i ? { ...(it as Extract<Item, { type: 'tool' }>), subagent: sub } : it)) };
    }
    case UpdatePins:
      // The whole list each time: a pin added, removed, or its tokens counted again.
      return { ...state, pins: [...(u.pins ?? [])] };
    case UpdatePlan:
      // The whole plan each time it is written.
      return { ...state, plan: [...(u.entries ?? [])] };
    case UpdateTurnEnd: {
      const ended = answer(state, undefined, 'withdrawn');
      let next: ChatState = { ...ended, running: false, items: [...ended.items, { type: 'end', stopReason: u.stopReason ?? StopEndTurn, error: u.error }] };
      // The files the turn changed, listed under it for review (rebuilt: with what became of each).
      for (const [turn, files] of changesByTurn(u.changes ?? [])) next = setChanges(next, turn, files);
      return next;
    }
    default:
      return state;
  }
}

function turnCount(items: readonly Item[]): number {
  return items.filter((it) => it.type === 'user').length;
}

/** editDiff turns an edit's content (ACP's diff, whole texts) into what the chat shows. */
function editDiff(content: readonly ToolContent[], turn: number): EditDiff | undefined {
  for (const c of content) {
    if (c.type === 'diff' && c.path && c.newText !== undefined) {
      const ops = lineDiff(splitLines(c.oldText ?? ''), splitLines(c.newText));
      const { lines, more } = hunks(ops);
      return { path: c.path, turn, ...counts(ops), created: c.oldText === undefined, lines, more };
    }
    if (c.type === 'content' && c.content?.text) return { path: '', turn, added: 0, removed: 0, created: false, lines: [], more: 0, note: c.content.text };
  }
  return undefined;
}

/**
 * setChanges puts a turn's changed files after that turn's exchange (before the next question),
 * replacing the list it had; a row keeps what the user did with it (or takes the review state the
 * history gives), and a file undone stays listed as undone though the server no longer reports
 * it. The rows hold no diff: the chat does not show it, and the diff editor asks for it fresh.
 */
function setChanges(state: ChatState, turn: number, files: readonly FileChange[]): ChatState {
  const items = state.items;
  const at = items.findIndex((it) => it.type === 'changes' && it.turn === turn);
  const prev = at >= 0 ? (items[at] as Extract<Item, { type: 'changes' }>).files : [];
  const rows: ChangeRow[] = files.map(({ diff: _diff, review: given, reason: why, ...f }) => {
    const p = prev.find((r) => r.path === f.path);
    const review = (given as Review | undefined) ?? p?.review ?? 'pending';
    // A refusal stays with its reason until the user keeps the file or tries again.
    const reason = given ? why : p?.reason;
    // The changes one by one come apart (setHunks): a list that lacks them keeps those known.
    if (!f.hunks && p?.hunks) Object.assign(f, { hunks: p.hunks, hunksUndone: p.hunksUndone });
    return review !== 'pending' && reason ? { ...f, review, reason } : { ...f, review };
  });
  for (const p of prev) if (p.review === 'undone' && !rows.some((r) => r.path === p.path)) rows.push(p);
  rows.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  if (at >= 0) {
    if (rows.length === 0) return { ...state, items: items.filter((_, j) => j !== at) };
    return { ...state, items: items.map((it, j) => (j === at ? { type: 'changes', turn, files: rows } : it)) };
  }
  if (rows.length === 0) return state;
  const item: Item = { type: 'changes', turn, files: rows };
  // Before the question of turn+1, or last.
  let seen = 0;
  const next = items.findIndex((it) => it.type === 'user' && ++seen === turn + 1);
  if (next < 0) return { ...state, items: [...items, item] };
  return { ...state, items: [...items.slice(0, next), item, ...items.slice(next)] };
}

/**
 * setReview marks files of a turn's changes. An undo puts a file back as it was before the turn,
 * so the file's rows of the later turns are undone too, as the server's history says.
 */
function setReview(state: ChatState, turn: number, paths: readonly string[], review: Review, reason?: string): ChatState {
  return {
    ...state,
    items: state.items.map((it) => {
      if (it.type !== 'changes' || (review === 'undone' ? it.turn < turn : it.turn !== turn)) return it;
      const files = it.files.map((f): ChangeRow => {
        if (!paths.includes(f.path)) return f;
        const row: ChangeRow = { ...f, review };
        if (review === 'refused' && reason) row.reason = reason;
        else delete row.reason;
        return row;
      });
      return { ...it, files };
    }),
  };
}

/**
 * setHunks gives a turn's modified files their changes now, as reprise.changes {turn} lists them;
 * a file it no longer lists has none left (its row's review says why: undone, or back as it was).
 * The rows' counts stay those of the turn's end.
 */
function setHunks(state: ChatState, turn: number, files: readonly FileChange[]): ChatState {
  return {
    ...state,
    items: state.items.map((it) => {
      if (it.type !== 'changes' || it.turn !== turn) return it;
      const rows = it.files.map((r): ChangeRow => {
        if (r.state !== 'modified') return r;
        const f = files.find((c) => c.path === r.path);
        return { ...r, hunks: f?.hunks ?? [], hunksUndone: f?.hunksUndone ?? r.hunksUndone };
      });
      return { ...it, files: rows };
    }),
  };
}

/** changesByTurn groups reprise.changes {turn: 1} by the turn of each file's restore point. */
export function changesByTurn(files: readonly FileChange[]): Map<number, FileChange[]> {
  const m = new Map<number, FileChange[]>();
  for (const f of files) m.set(f.turn, [...(m.get(f.turn) ?? []), f]);
  return m;
}

function lastIndex<T>(xs: T[], pred: (x: T) => boolean): number {
  for (let i = xs.length - 1; i >= 0; i--) if (pred(xs[i])) return i;
  return -1;
}

/**
 * fromHistory rebuilds a session's transcript from the entries of reprise.history, through the
 * reducer and the same updates the server streamed, so that a reopened session looks as it did
 * live: each tool with its input, output and diff, each turn's end with its changed files and what
 * became of them. checkpoints (reprise.checkpoints) fill in the compaction markers (trigger,
 * tokens before and after); without them a marker names its checkpoint only.
 */
export function fromHistory(sessionId: string, entries: readonly HistoryEntry[], checkpoints: readonly CheckpointInfo[] = [], pins?: readonly Pin[] | null): ChatState {
  let state = initialState(sessionId);
  const up = (update: Update) => (state = reduce(state, { type: 'update', params: { sessionId, update } }));
  // A turn the history does not end (a server without turn_end entries, or a turn running)
  // ends as a finished one.
  let open = false;
  const endTurn = () => open && up({ sessionUpdate: UpdateTurnEnd, stopReason: StopEndTurn });
  for (const e of entries) {
    switch (e.kind) {
      case EntryUser:
        endTurn();
        open = true;
        // The question as the user wrote it, its selection as a chip: not the text the model got.
        state = reduce(state, { type: 'ask', ...splitAttachment(e.text ?? '') });
        break;
      case EntryAgent:
        up({ sessionUpdate: UpdateMessageChunk, content: { type: 'text', text: e.text ?? '' } });
        break;
      case EntryThought:
        up({ sessionUpdate: UpdateThoughtChunk, content: { type: 'text', text: e.text ?? '' } });
        break;
      case EntryTool:
        for (const u of toolUpdates(e)) up(u);
        break;
      case EntryCompaction:
        up(compactionUpdate(e, checkpoints));
        break;
      case EntryTurnEnd:
        open = false;
        up({ sessionUpdate: UpdateTurnEnd, stopReason: e.stopReason ?? StopEndTurn, error: e.error, turn: { calls: e.calls ?? 0 }, changes: e.changes });
        break;
    }
  }
  endTurn();
  // The pins as they are now, through the update that brings them live.
  if (pins && pins.length > 0) up({ sessionUpdate: UpdatePins, pins: [...pins] });
  return { ...state, running: false };
}

/**
 * messageTurn is the turn a transcript item belongs to, numbered from 1 as the server counts
 * turns (the user's prompts); undefined before the first question.
 */
export function messageTurn(items: readonly Item[], index: number): number | undefined {
  let n = 0;
  for (let i = 0; i <= index && i < items.length; i++) if (items[i].type === 'user') n++;
  return n > 0 ? n : undefined;
}

/**
 * pinOf is the pin that holds a message's text, if the user pinned it. The server sends a message
 * pin's text as the prompt has it: whole, or past 4,000 characters its start and its end around a
 * line that says how much was left out (contextwin.CapText).
 */
export function pinOf(pins: readonly Pin[] | undefined, text: string): Pin | undefined {
  const t = text.trim();
  return pins?.find((p) => p.kind === 'message' && p.text !== undefined && holds(p.text.trim(), t));
}

const omitted = /\n\[… \d+ characters of this message omitted[^\n]*…\]\n/;

/** holds reports whether a pin's text is text, whole or cut around an omission line. */
function holds(pinned: string, text: string): boolean {
  if (pinned === text) return true;
  const m = omitted.exec(pinned);
  return m !== null && text.length > pinned.length - m[0].length && text.startsWith(pinned.slice(0, m.index)) && text.endsWith(pinned.slice(m.index + m[0].length));
}

/** toolUpdates are the tool_call and tool_call_update a history's tool entry stands for. */
function toolUpdates(e: HistoryEntry): Update[] {
  const call: Update = { sessionUpdate: UpdateToolCall, toolCallId: e.toolCallId, title: e.title, kind: e.toolKind, status: ToolStatusInProgress, rawInput: e.rawInput };
  const sub: Update[] = e.subagent ? [{ sessionUpdate: UpdateSubagent, toolCallId: e.toolCallId, subagent: e.subagent }] : [];
  if (e.status === ToolStatusInProgress || e.status === undefined) return [call, ...sub];
  const out: ToolOutput = { output: e.output ?? '' };
  if (e.savedPath) out.savedPath = e.savedPath;
  if (e.omitted) out.omitted = e.omitted;
  if (e.refused) out.refused = e.refused;
  if (e.verdict) out.verdict = e.verdict;
  const updates: Update[] = [call, { sessionUpdate: UpdateToolCallUpdate, toolCallId: e.toolCallId, title: e.title, kind: e.toolKind, status: e.status, rawOutput: out, content: e.content }, ...sub];
  // A plan the agent wrote was told live as a plan update; the history has the call that wrote it.
  const plan = e.toolKind === ToolKindThink && e.status === ToolStatusCompleted ? planOf(e.rawInput?.todos) : undefined;
  if (plan) updates.push({ sessionUpdate: UpdatePlan, entries: plan });
  return updates;
}

/** planOf reads write_todos' todos argument; undefined when it is not a list of plan items. */
function planOf(todos: unknown): PlanEntry[] | undefined {
  if (!Array.isArray(todos)) return undefined;
  const plan: PlanEntry[] = [];
  for (const t of todos) {
    if (typeof t !== 'object' || t === null) return undefined;
    const { description, status } = t as Record<string, unknown>;
    if (typeof description !== 'string' || !['pending', 'in_progress', 'completed', 'cancelled'].includes(status as string)) return undefined;
    plan.push({ description, status: status as PlanEntry['status'] });
  }
  return plan;
}

/** compactionUpdate is the end of the compaction a history's entry records. */
function compactionUpdate(e: HistoryEntry, checkpoints: readonly CheckpointInfo[]): Update {
  const n = e.checkpoint ?? 0;
  const cp: CheckpointInfo = checkpoints.find((c) => c.n === n) ?? { n, title: e.title ?? '', trigger: '', replaced: 0, tokensBefore: 0, tokensAfter: 0 };
  return { sessionUpdate: UpdateCompaction, compaction: { state: CompactionDone, trigger: cp.trigger, checkpoint: n > 0 ? cp : undefined } };
}

/** userTurns lists the user's prompts of the transcript, numbered from 1 as the server counts turns. */
export function userTurns(state: ChatState): { turn: number; text: string }[] {
  return state.items
    .filter((it): it is Extract<Item, { type: 'user' }> => it.type === 'user')
    .map((it, i) => ({ turn: i + 1, text: it.text }));
}

/** Activity is the one line that says what the agent is doing, updated in place. */
export interface Activity {
  kind: 'approval' | 'thinking' | 'streaming' | 'tool' | 'retry' | 'compacting';
  text: string;
}

/** seconds writes a duration as people read it: "4 s", "1 min 5 s". */
export function seconds(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min${s % 60 ? ` ${s % 60} s` : ''}`;
}

/**
 * activity says what the agent is doing now (now: ms since the epoch, for the elapsed times and
 * the countdown); background: a compaction runs in the background (reprise/contextUsage). Nothing
 * when the agent is idle.
 */
export function activity(state: ChatState, now: number, background = false): Activity | undefined {
  if (pendingApproval(state)) return { kind: 'approval', text: 'Waiting for your approval' };
  const bg = background ? ' · compacting the context in the background' : '';
  if (!state.running) return background ? { kind: 'compacting', text: 'Compacting the context in the background…' } : undefined;
  // A tool still running in this turn says what the agent waits for, whatever came after it.
  const from = state.items.map((it) => it.type).lastIndexOf('user');
  const runningTools = state.items.slice(from + 1).filter((it): it is Extract<Item, { type: 'tool' }> => it.type === 'tool' && it.status === ToolStatusInProgress);
  const t = runningTools[0];
  if (t) {
    const more = runningTools.length > 1 ? ` and ${runningTools.length - 1} more` : '';
    // "Run go test" reads "Running go test"; other tools by their title ("Read a.go…"); a
    // subagent by what it does now.
    const sa = t.subagent;
    const what = sa
      ? `Subagent «${sa.description}»: ${sa.tool ? `${sa.tool}…` : 'thinking…'} · ${sa.calls} call${sa.calls === 1 ? '' : 's'}`
      : /^Run /.test(t.title) ? `Running ${t.title.slice(4)}` : `${t.title}…`;
    // One clock with the row: a running command's time is the server's, which starts when the
    // command does (an approval's wait not counted); another call's, since it was asked.
    const elapsed = t.live ? t.live.elapsedMs : t.started ? now - t.started : undefined;
    return { kind: 'tool', text: `${what}${more}${elapsed !== undefined ? ` · ${seconds(elapsed)}` : ''}${bg}` };
  }
  let last: Item | undefined;
  for (let i = state.items.length - 1; i >= 0 && !last; i--) if (state.items[i].type !== 'changes' && state.items[i].type !== 'approval') last = state.items[i];
  switch (last?.type) {
    case 'retry': {
      const left = last.at + last.delay - now;
      const why = last.error.length > 120 ? `${last.error.slice(0, 119)}…` : last.error;
      // The attempt before the error, which a narrow view cuts.
      return { kind: 'retry', text: `${left >= 500 ? `Retrying in ${seconds(left)}` : 'Retrying'} (attempt ${last.attempt}): ${why}` };
    }
    case 'agent':
      return { kind: 'streaming', text: `Writing the answer…${bg}` };
    case 'compaction':
      if (last.state === CompactionRunning || last.state === CompactionBlocking)
        return { kind: 'compacting', text: last.state === CompactionBlocking ? 'Compacting the context before the next call…' : 'Compacting the context in the background…' };
      break;
  }
  return { kind: 'thinking', text: `Thinking…${bg}` };
}
