// Which session is current, its chat transcript and its latest usage. Pure (no vscode import):
// the chat view, the meter and the commands read it; the server's notifications feed it.
import { Action, ChatState, initialState, reduce } from './chat/state';
import type { Review } from './chat/state';
import type { Answer, Approval } from './chat/approval';
import type { ContextUsage, FileChange, Pin, SessionUpdate } from './protocol';

/** Attachment is a selection the next question is about. */
export interface Attachment {
  /** what the chat shows: "path:10-20" */
  label: string;
  /** what the model gets after the question */
  text: string;
}

/** draft is the key of the transcript of a first question whose session is not known yet. */
const draft = '';

export class Store {
  /** current is the session the server treats as current ('' before the first one exists). */
  current = draft;
  /** compacting is true while a manual compaction of the current session is in flight. */
  compacting = false;
  /** attachment is sent with the next question, then dropped. */
  attachment?: Attachment;
  private chats = new Map<string, ChatState>();
  private usages = new Map<string, ContextUsage>();
  private listeners: (() => void)[] = [];

  onChange(f: () => void): { dispose(): void } {
    this.listeners.push(f);
    return { dispose: () => (this.listeners = this.listeners.filter((g) => g !== f)) };
  }

  private changed(): void {
    for (const f of this.listeners) f();
  }

  chat(id = this.current): ChatState {
    return this.chats.get(id) ?? initialState(id || undefined);
  }

  usage(id = this.current): ContextUsage | undefined {
    return this.usages.get(id);
  }

  /** hasSession says whether the meter should be shown. */
  get hasSession(): boolean {
    return this.current !== draft;
  }

  private dispatch(id: string, a: Action): void {
    this.chats.set(id, reduce(this.chat(id), a));
  }

  /** adopt gives the draft transcript its session id and makes that session current. */
  private adopt(id: string): void {
    if (this.current === draft) {
      const d = this.chats.get(draft);
      this.chats.delete(draft);
      if (d && !this.chats.has(id)) this.chats.set(id, { ...d, sessionId: id });
      this.current = id;
    }
  }

  ask(text: string, attachment?: string): void {
    this.dispatch(this.current, { type: 'ask', text, attachment });
    this.changed();
  }

  setAttachment(a: Attachment | undefined): void {
    this.attachment = a;
    this.changed();
  }

  /** review marks what the user did with some of a turn's changed files. */
  review(id: string, turn: number, paths: string[], review: Review, reason?: string): void {
    this.dispatch(id, { type: 'review', turn, paths, review, reason });
    this.changed();
  }

  /** hunks gives a turn's files their changes now (reprise.changes {turn}), each kept or pending. */
  hunks(id: string, turn: number, files: FileChange[]): void {
    this.dispatch(id, { type: 'hunks', turn, files });
    this.changed();
  }

  asked(id: string): void {
    this.adopt(id);
    this.current = id;
    this.changed();
  }

  failed(text: string): void {
    this.dispatch(this.current, { type: 'error', text });
    this.changed();
  }

  update(p: SessionUpdate): void {
    if (!this.chats.has(p.sessionId) && this.current === draft) this.adopt(p.sessionId);
    this.dispatch(p.sessionId, { type: 'update', params: p, at: Date.now() });
    this.changed();
  }

  /** approvals maps a pending approval's key to the session whose chat shows it. */
  private approvals = new Map<string, string>();

  /** approval puts an approval request in the current session's chat, where the user answers it. */
  approval(key: string, a: Approval): void {
    this.approvals.set(key, this.current);
    this.dispatch(this.current, { type: 'approval', key, approval: a });
    this.changed();
  }

  /** answered records the answer to an approval (or its withdrawal). */
  answered(key: string, answer: Answer): void {
    const id = this.approvals.get(key);
    if (id === undefined) return;
    this.approvals.delete(key);
    this.dispatch(id, { type: 'answered', key, answer });
    this.changed();
  }

  /** waiting says whether an approval is waiting for the user's answer. */
  get waiting(): boolean {
    return this.approvals.size > 0;
  }

  setUsage(u: ContextUsage): void {
    this.usages.set(u.sessionId, u);
    if (this.current === draft) this.adopt(u.sessionId);
    this.changed();
  }

  /**
   * switchTo makes a session current (new or resumed), keeping the transcripts seen so far. It
   * returns whether the store held a transcript of that session; when not, the caller may fill it
   * in with restore.
   */
  switchTo(id: string): boolean {
    this.current = id;
    const held = this.holds(id);
    if (!this.chats.has(id)) this.chats.set(id, initialState(id));
    this.changed();
    return held;
  }

  /** holds says whether the store has a transcript of the session with something in it. */
  holds(id: string): boolean {
    return (this.chats.get(id)?.items.length ?? 0) > 0;
  }

  /**
   * restore sets a session's transcript rebuilt from the server's history, unless one arrived in
   * the meantime (a question asked or an update streamed while the history was on its way).
   */
  restore(id: string, chat: ChatState): void {
    if (this.holds(id)) return;
    this.chats.set(id, { ...chat, sessionId: id });
    this.changed();
  }

  /** setPins sets the current session's pins from reprise.pin or reprise.unpin's result. */
  setPins(pins: readonly Pin[] | null): void {
    this.dispatch(this.current, { type: 'pins', pins });
    this.changed();
  }

  setCompacting(on: boolean): void {
    this.compacting = on;
    this.changed();
  }
}
