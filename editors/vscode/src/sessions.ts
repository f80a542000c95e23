// The rows of the Resume Session picker. No vscode import, so it is unit-tested as is.
import { humanTime, tokens, turnsAndCalls } from './meter';
import type { SessionInfo } from './protocol';

/** SessionItem is one row of the picker: what it shows and the session it resumes. */
export interface SessionItem {
  label: string;
  description: string;
  detail: string;
  id: string;
}

/** sessionItem is a session's row: its title, how full its window is, its turns and model calls. */
export function sessionItem(s: SessionInfo, now = Date.now()): SessionItem {
  return {
    label: s.title || s.sessionId,
    description: `${Math.round(s.percent)}% · ${tokens(s.used)}/${tokens(s.size)}${s.current ? ' · current' : ''}${s.running ? ' · running' : ''}`,
    detail: `${s.sessionId} · ${turnsAndCalls(s.turns, s.calls)} · ${humanTime(s.lastActivity, now)}`,
    id: s.sessionId,
  };
}
