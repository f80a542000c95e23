// The MCP servers list (Reprise: MCP Servers): reprise.mcp's servers as quick pick rows. Pure.
import { tokens } from './meter';
import { MCPStateFailed, MCPStateRunning, MCPStateStarting, MCPStateStopped, MCPStateUntrusted } from './protocol';
import type { MCPServerInfo } from './protocol';

const stateIcon: Record<string, string> = {
  [MCPStateRunning]: '$(pass-filled)',
  [MCPStateStarting]: '$(loading~spin)',
  [MCPStateFailed]: '$(error)',
  [MCPStateStopped]: '$(circle-outline)',
  [MCPStateUntrusted]: '$(shield)',
};

const stateText: Record<string, string> = {
  [MCPStateRunning]: 'running',
  [MCPStateStarting]: 'starting',
  [MCPStateFailed]: 'failed',
  [MCPStateStopped]: 'not started yet',
  [MCPStateUntrusted]: 'not trusted: starts once you agree',
};

export interface MCPRow {
  label: string;
  description: string;
  detail: string;
  name: string;
}

/** mcpRow is a server's row: its state, its tools and what their declarations cost per request. */
export function mcpRow(s: MCPServerInfo): MCPRow {
  const n = s.tools?.length ?? 0;
  const deferred = (s.tools ?? []).filter((t) => t.deferred).length;
  const toolsText = n === 0 ? 'no tools' : `${n} tool${n === 1 ? '' : 's'}${deferred ? `, ${deferred} found on demand` : ''} · ${tokens(s.tokens)} tokens a request`;
  const where = `${s.type} · from ${s.source}`;
  return {
    label: `${stateIcon[s.state] ?? '$(circle-outline)'} ${s.name}`,
    description: `${stateText[s.state] ?? s.state} · ${toolsText}`,
    detail: s.error ? `${where} · ${s.error}` : where,
    name: s.name,
  };
}
