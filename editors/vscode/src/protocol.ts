// Names and shapes of Reprise's wire protocol (lsp/PROTOCOL.md). The names mirror the Go
// constants in lsp/protocol.go, all of them and nothing else: lsp/names_test.go
// (TestVSCodeProtocolNames) checks both directions, test/unit/protocol.test.ts the strings.

export const MethodContextUsage = 'reprise/contextUsage';
export const MethodSessionUpdate = 'reprise/sessionUpdate';
/** Client → server: the user's own values of the cost settings (settings.ts costKeys). */
export const MethodDidChangeUserSettings = 'reprise/didChangeUserSettings';

export const CommandAsk = 'reprise.ask';
export const CommandCancel = 'reprise.cancel';
export const CommandCompact = 'reprise.compact';
export const CommandContext = 'reprise.context';
export const CommandCheckpoints = 'reprise.checkpoints';
export const CommandCheckpoint = 'reprise.checkpoint';
export const CommandSessions = 'reprise.sessions';
export const CommandNewSession = 'reprise.newSession';
export const CommandResume = 'reprise.resume';
export const CommandRestore = 'reprise.restore';
export const CommandChanges = 'reprise.changes';
export const CommandUndoCompaction = 'reprise.undoCompaction';
export const CommandShowContext = 'reprise.showContext';
export const CommandHistory = 'reprise.history';
export const CommandUndoFile = 'reprise.undoFile';
export const CommandUndoHunk = 'reprise.undoHunk';
export const CommandKeepHunk = 'reprise.keepHunk';
export const CommandShowChanges = 'reprise.showChanges';
export const CommandMCP = 'reprise.mcp';
export const CommandModels = 'reprise.models';
export const CommandKeep = 'reprise.keep';
export const CommandPin = 'reprise.pin';
export const CommandUnpin = 'reprise.unpin';
export const CommandPins = 'reprise.pins';
export const CommandForgetNote = 'reprise.forgetNote';
export const CommandFork = 'reprise.fork';
export const CommandExport = 'reprise.export';
export const CommandCancelSubagent = 'reprise.cancelSubagent';

export const ExperimentalCapability = 'reprise';
export const ConfigSection = 'reprise';
export const ServerName = 'reprise';

export const ActionAllowOnce = 'Allow once';
export const ActionAlwaysAllow = 'Always allow';
export const ActionReject = 'Reject';
export const ActionStartServer = 'Start it';
export const ActionDontStartServer = 'Do not start';
export const ActionUseWorkspace = 'Use it as the workspace';
export const ActionRefuseWorkspace = 'Do not use it';

export const MCPStateStarting = 'starting';
export const MCPStateRunning = 'running';
export const MCPStateFailed = 'failed';
export const MCPStateStopped = 'stopped';
export const MCPStateUntrusted = 'untrusted';

export const UpdateMessageChunk = 'agent_message_chunk';
export const UpdateThoughtChunk = 'agent_thought_chunk';
export const UpdateToolCall = 'tool_call';
export const UpdateToolCallUpdate = 'tool_call_update';
export const UpdateCompaction = 'compaction';
export const UpdateTurnEnd = 'turn_end';
export const UpdateRetry = 'retry';
export const UpdatePins = 'pins';
export const UpdatePlan = 'plan';
export const UpdateSubagent = 'subagent';

export const StopEndTurn = 'end_turn';
export const StopCancelled = 'cancelled';
export const StopCapped = 'capped';
export const StopError = 'error';
export const StopMaxTurnRequests = 'max_turn_requests';
export const StopCompactionLimit = 'compaction_limit';

export const ToolStatusInProgress = 'in_progress';
export const ToolStatusCompleted = 'completed';
export const ToolStatusFailed = 'failed';

export const ToolKindRead = 'read';
export const ToolKindEdit = 'edit';
export const ToolKindSearch = 'search';
export const ToolKindExecute = 'execute';
export const ToolKindThink = 'think';
export const ToolKindOther = 'other';

export const CompactionIdle = 'idle';
export const CompactionRunning = 'running';
export const CompactionBlocking = 'blocking';
export const CompactionDone = 'done';
export const CompactionCancelled = 'cancelled';
export const CompactionSkipped = 'skipped';

export const TriggerAuto = 'auto';
export const TriggerManual = 'manual';

export const SourceUsage = 'usage';
export const SourceEstimate = 'estimate';

export const StatusIdle = 'idle';
export const StatusRunning = 'running';
export const StatusCapped = 'capped';

export const EntryUser = 'user';
export const EntryAgent = 'agent';
export const EntryThought = 'thought';
export const EntryTool = 'tool';
export const EntryCompaction = 'compaction';
export const EntryTurnEnd = 'turn_end';

export const ReviewPending = 'pending';
export const ReviewKept = 'kept';
export const ReviewUndone = 'undone';
export const ReviewRefused = 'refused';

export const SandboxWorkspaceWrite = 'workspace-write';
export const SandboxOff = 'off';

export const CodeModelUnavailable = -32001;
export const CodeRequestCancelled = -32800;

export interface Breakdown {
  systemPrompt: number;
  customInstructions: number;
  /** The map of the workspace in the head; absent when there is none. */
  workspaceMap?: number;
  tools: number;
  mcpTools: number;
  messages: number;
  free: number;
  buffer: number;
}

/**
 * Money is a cost. When some call's model has no known price, `unknown` is set, `amount` is only
 * what the priced calls cost, and `text` reads `unknown` or `$0.0063 + unknown`: show `text`.
 */
export interface Money {
  amount: number;
  currency: string;
  unknown?: boolean;
  /** a local model served calls or serves the next: free, its cost is its time, which `text` gives (`local · 41 s`) */
  local?: boolean;
  /** the cost as users read it: `$0.0336`, `unknown`, `$0.0063 + unknown`, `local · 41 s` (absent from older servers) */
  text?: string;
}

export interface Totals {
  inputTokens: number;
  cachedTokens: number;
  /** thinking included */
  outputTokens: number;
  /** the thinking part of outputTokens */
  thoughtTokens?: number;
  cost: Money;
  /** the compaction summaries' calls, counted above too; absent before the first */
  summaries?: SummaryTotals;
  /** the subagents' calls (the task tool), counted above too; absent before the first */
  subagents?: SubagentTotals;
  /** how long the model took over the calls, where the client measured it (a local model's cost) */
  modelMillis?: number;
  /** the loop calls the implicit cache did not serve as expected, by cause; absent before the first */
  misses?: { calls: Record<string, number>; text: string };
}

/** SubagentTotals are what the subagents cost, apart. */
export interface SubagentTotals {
  runs: number;
  calls: number;
  inputTokens: number;
  cachedTokens: number;
  outputTokens: number;
  cost: Money;
  /** "2 subagents, 14 calls $0.0123 (48,210 input, 31,000 cached)" */
  text: string;
}

/**
 * Subagent is where a task call's subagent is (the subagent update, or a history entry's last).
 * Its id is its own session's: reprise.cancelSubagent and reprise.export take it.
 */
export interface Subagent {
  subagentId: string;
  parentId?: string;
  description: string;
  model: string;
  /** running, completed, failed or cancelled */
  status: string;
  calls: number;
  totals: Totals;
  /** the title of the call it runs now */
  tool?: string;
  /** what the parent's model got, on its last update */
  result?: string;
  error?: string;
  /** its transcript is saved: reprise.export {subagentId} gives it */
  saved?: boolean;
}

/** SummaryTotals are what the compaction summaries cost, apart. */
export interface SummaryTotals {
  calls: number;
  inputTokens: number;
  cachedTokens: number;
  outputTokens: number;
  /** calls served on the Flex tier */
  flex?: number;
  cost: Money;
  /** "2 summaries $0.0012 (8,120 input, 0 cached; 1 on Flex)" */
  text: string;
}

/** CacheHits compares the cached tokens the session's calls expected with those the API reported. */
export interface CacheHits {
  expected: number;
  /** each call counted up to its expectation */
  reported: number;
  /** reported ÷ expected, from 0 to 1 */
  hitRate: number;
}

export interface ContextUsage {
  sessionId: string;
  used: number;
  size: number;
  percent: number;
  /** SourceUsage or SourceEstimate */
  source: string;
  breakdown: Breakdown;
  totals: Totals;
  /** how implicit caching did; absent while no call expected cached tokens */
  cache?: CacheHits;
  /** state is CompactionIdle, CompactionRunning or CompactionBlocking */
  /** decision: past compactAt, what the server decided about the context and why, in dollars. */
  compaction: { state: string; count: number; decision?: string };
  compactAt: number;
  blockAt: number;
}

export interface CheckpointInfo {
  n: number;
  title: string;
  trigger: string;
  replaced: number;
  tokensBefore: number;
  tokensAfter: number;
  time?: string;
  /** cleared: how many old tool results the checkpoint cleared, with no summary (0 or absent: a compaction). */
  cleared?: number;
}

export interface CheckpointResult extends CheckpointInfo {
  summary: string;
  markdown: string;
}

export interface CompactResult {
  checkpoint: CheckpointInfo;
  before: number;
  after: number;
}

export interface SessionInfo {
  sessionId: string;
  title: string;
  lastActivity: string;
  /** the user's prompts */
  turns: number;
  /** the model calls they took: several for a turn that calls tools */
  calls: number;
  used: number;
  size: number;
  percent: number;
  running: boolean;
  current: boolean;
  saved?: boolean;
  error?: string;
}

export interface LargeItem {
  index: number;
  kind: string;
  label: string;
  path?: string;
  tokens: number;
  stale?: boolean;
}

export interface ContextResult extends ContextUsage {
  model: string;
  /** the model that answered the last call, when the API named another than `model` */
  servedModel?: string;
  largest: LargeItem[] | null;
  lastPrompt: number;
  /** the user's prompts */
  turns: number;
  /** the model calls they took */
  calls: number;
  rereads: number;
  checkpoints: number;
  status: string;
  fixedTokens: number;
  /** the pinned items, kept whatever compaction does (absent from servers without pins) */
  pins?: { id: string; kind: PinKind; label: string; path?: string; tokens: number }[] | null;
  pinnedTokens?: number;
  /** what each MCP server's declared tools cost per request; the catalogue is server '' */
  mcp?: { server: string; tools: number; deferred?: number; tokens: number }[] | null;
  /** what the harness holds and restates after each compaction */
  state?: HarnessState;
  text: string;
}

/** HarnessState is reprise.context's state: the files changed, the last test verdict, the agent's plan and notes. */
export interface HarnessState {
  filesModified?: string[] | null;
  lastVerdict?: string;
  plan?: PlanEntry[] | null;
  notes?: Note[] | null;
}

/** Note is an exact value the agent saved with save_note. */
export interface Note {
  key: string;
  value: string;
}

/** ForkArgs are reprise.fork's: the session (the current one by default) and the point (neither: as it is now). */
export interface ForkArgs {
  sessionId?: string;
  checkpoint?: number;
  turn?: number;
}

/** ForkResult is what reprise.fork returns: the new session, now the current one, and what to say of the files. */
export interface ForkResult {
  sessionId: string;
  parent: string;
  from: string;
  /** the parent's first turn after the point that changed files: reprise.restore with it puts them back */
  restoreTurn?: number;
  note: string;
}

/** ExportResult is what reprise.export returns: the text (no path given) or the file written. */
export interface ExportResult {
  format: 'md' | 'html';
  fileName: string;
  content?: string;
  path?: string;
}

/** NotesResult is what reprise.forgetNote returns: the notes left, oldest first. */
export interface NotesResult {
  notes: Note[] | null;
}

export interface ToolOutput {
  output: string;
  savedPath?: string;
  omitted?: number;
  refused?: boolean;
  /** a command's test verdict, its last line that says one ("FAIL example.com/x 0.01s") */
  verdict?: string;
}

/** LiveOutput is a running command's output so far (display only): the final rawOutput replaces it. */
export interface LiveOutput {
  /** the end of the output: at most 4 KiB and 40 lines */
  tail: string;
  /** printed so far; more than tail holds when its start is left out */
  bytes: number;
  /** since the command started */
  elapsedMs: number;
  /** what a command that printed nothing for 3 s is likely doing ("building or starting, no output yet") */
  note?: string;
}

export interface CompactionUpdate {
  /** one of the Compaction* names but CompactionIdle */
  state: string;
  trigger: string;
  note?: string;
  checkpoint?: CheckpointInfo;
}

/** ToolContent is one item of an edit's content: ACP's diff, or a note when it is too large. */
export interface ToolContent {
  type: string; // "diff" or "content"
  path?: string;
  oldText?: string;
  newText?: string;
  content?: { type: string; text: string };
}

export interface Update {
  sessionUpdate: string;
  /** a text block for message chunks; a list for an edit's tool_call_update */
  content?: { type: string; text: string } | ToolContent[];
  toolCallId?: string;
  title?: string;
  kind?: string;
  status?: string;
  rawInput?: Record<string, unknown>;
  rawOutput?: ToolOutput;
  /** a running command's tool_call_update (status in_progress): its output so far */
  live?: LiveOutput;
  compaction?: CompactionUpdate;
  retry?: { attempt: number; delay: number; error: string; discard: boolean };
  stopReason?: string;
  error?: string;
  turn?: { calls: number; totals?: Totals };
  /** turn_end: the files the turn changed, without diffs */
  changes?: FileChange[];
  /** pins: every pin of the session, after the change */
  pins?: Pin[];
  /** plan: the agent's whole plan (write_todos), [] when it cleared it */
  entries?: PlanEntry[];
  /** subagent: where the subagent of the task call toolCallId is */
  subagent?: Subagent;
}

/** PlanStatus is where a plan item is; at most one is in_progress. */
export type PlanStatus = 'pending' | 'in_progress' | 'completed' | 'cancelled';

/** PlanEntry is one item of the agent's plan, as the plan update and reprise.context's state give it. */
export interface PlanEntry {
  description: string;
  status: PlanStatus;
}

/** PinKind is what a pin holds: a workspace file, or a text the user pinned (typed, or a chat message). */
export type PinKind = 'file' | 'message';

/**
 * Pin is an item kept in the model's context whatever compaction does: a file (re-read at each
 * compaction) or a text. ids are "p1", "p2"… within a session.
 */
export interface Pin {
  id: string;
  kind: PinKind;
  /** what the editors show: the file's path, or the text's start */
  label: string;
  path?: string;
  text?: string;
  tokens: number;
}

/** PinArgs are reprise.pin's arguments: a file by its path, or a text (an earlier message's with its turn). */
export interface PinArgs {
  sessionId?: string;
  kind: PinKind;
  path?: string;
  text?: string;
  turn?: number;
}

/** PinResult is what reprise.pin returns: the new pin, and every pin of the session. */
export interface PinResult {
  pin: Pin;
  pins: Pin[] | null;
}

/** PinsResult is what reprise.unpin and reprise.pins return. */
export interface PinsResult {
  pins: Pin[] | null;
}

/**
 * HistoryEntry is one element of the conversation reprise.history returns. A tool entry carries
 * what its tool_call and tool_call_update did, a turn end what its turn_end did, each changed
 * file with its review state.
 */
export interface HistoryEntry {
  turn: number;
  /** one of the Entry* names */
  kind: string;
  text?: string;
  toolCallId?: string;
  title?: string;
  toolKind?: string;
  status?: string;
  rawInput?: Record<string, unknown>;
  output?: string;
  savedPath?: string;
  omitted?: number;
  refused?: boolean;
  /** an edit's diff, as tool_call_update's content */
  content?: ToolContent[];
  /** checkpoint is the number of a compaction's checkpoint. */
  checkpoint?: number;
  stopReason?: string;
  error?: string;
  calls?: number;
  changes?: FileChange[];
  /** a task call's subagent, as its last subagent update showed it */
  subagent?: Subagent;
  /** a command's test verdict, as rawOutput's */
  verdict?: string;
}

export interface HistoryResult {
  sessionId: string;
  entries: HistoryEntry[] | null;
  /** the session's pins (absent from servers without them) */
  pins?: Pin[] | null;
}

/** FileChange is one file of reprise.changes. */
export interface FileChange {
  path: string;
  absPath: string;
  turn: number;
  /** modified, created or deleted */
  state: string;
  added: number;
  removed: number;
  diff?: string;
  binary?: boolean;
  note?: string;
  userChanged?: boolean;
  /** reprise.history only: one of the Review* names */
  review?: string;
  /** reprise.history only: why an undo was refused */
  reason?: string;
  /** reprise.changes, a modified file with a diff: its changes, each kept or undone on its own */
  hunks?: Hunk[];
  /** the file's changes undone one by one (no longer in diff nor hunks) */
  hunksUndone?: number;
  /** reprise.history only: the file's changes kept one by one */
  hunksKept?: number;
}

/**
 * Hunk is one change of a file: a run of removed and added lines between kept ones, numbered as
 * a unified diff's header (1-based; one that only adds has oldLines 0 and oldStart the line before
 * it, one that only removes newLines 0 and newStart the line before the gap).
 */
export interface Hunk {
  id: string;
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  /** ReviewPending or ReviewKept */
  review: string;
}

export interface ChangesResult {
  sessionId: string;
  turn: number;
  files: FileChange[];
}

/** KeepArgs are reprise.keep's: paths, or hunk ids of reprise.changes of the same turn. */
export interface KeepArgs {
  sessionId?: string;
  turn: number;
  paths?: string[];
  hunks?: string[];
}

export interface KeepResult {
  kept: string[];
}

/** RestoreArgs are reprise.restore's: every file, some paths, or hunk ids of reprise.changes of the same turn. */
export interface RestoreArgs {
  sessionId?: string;
  turn: number;
  paths?: string[];
  hunks?: string[];
}

export interface RestoreResult {
  restored: string[];
  /** with hunks: those undone */
  hunks?: string[];
  /** path is absent for a hunk found in no file; hunk is set for a hunk refused */
  refused?: { path?: string; hunk?: string; reason: string }[];
}

export interface SessionUpdate {
  sessionId: string;
  update: Update;
}

/** MCPResult is what reprise.mcp returns: the MCP servers and what their tools cost per request. */
export interface MCPResult {
  servers: MCPServerInfo[];
  tokens: number;
}

export interface MCPServerInfo {
  name: string;
  source: string;
  type: string;
  /** one of the MCPState names */
  state: string;
  error?: string;
  tools: { name: string; tool: string; description?: string; tokens: number; deferred?: boolean }[];
  tokens: number;
}

export interface ModelsArgs {
  /** also list retired models and the catalogue's models the API does not list */
  all?: boolean;
  /** read the API's list again instead of the copy kept for a day */
  refresh?: boolean;
}

/** ModelInfo is one model of reprise.models: the API's list joined with the model catalogue. */
export interface ModelInfo {
  id: string;
  displayName: string;
  /** ga, preview, deprecated, retired; '' when the catalogue does not know the model */
  status: string;
  /** `ga`, `retired → gemini-3.8-flash`, `not in the catalogue`, `ga, not listed for this key` */
  statusText: string;
  replacement?: string;
  /** the catalogue has a row for it */
  known: boolean;
  /** the API lists it for this key */
  listed: boolean;
  inputTokenLimit: number;
  outputTokenLimit?: number;
  /** per 1M tokens today; null: unknown */
  prices: { input: number; cachedInput: number; output: number } | null;
  priceText: string;
  cacheMinTokens: number;
  explicitCaching: boolean;
  thinkingLevels: string[] | null;
  thinkingDefault?: string;
  /** one line for a picker */
  detail: string;
  default?: boolean;
  /** the model new sessions use */
  current?: boolean;
  /** a server on the user's machine or network serves it, unpriced: free, its time counted */
  local?: boolean;
}

export interface ModelsResult {
  models: ModelInfo[] | null;
  /** the model new sessions use (the model setting) */
  model: string;
  /** the catalogue's default */
  default: string;
  catalogueAsOf: string;
  /** when the API's list was read; absent when it could not be */
  listedAt?: string;
  /** the list came from the copy kept for a day */
  cached?: boolean;
  /** why the list is the catalogue's alone (no key, the API failed) */
  warning?: string;
}
