package lsp

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/tools"
	"github.com/reprise-dev/reprise/contextwin"
)

// contextUsageParams is reprise/contextUsage: how full the session's context window is.
type contextUsageParams struct {
	SessionID string               `json:"sessionId"`
	Used      int                  `json:"used"`
	Size      int                  `json:"size"`
	Percent   float64              `json:"percent"`
	Source    string               `json:"source"` // SourceUsage or SourceEstimate
	Breakdown contextwin.Breakdown `json:"breakdown"`
	Totals    totals               `json:"totals"`
	// Cache is how implicit caching did: the cached tokens the session's calls expected, those
	// the API reported (each call up to its expectation) and their ratio; absent while no call
	// expected any.
	Cache      *contextwin.CacheHits `json:"cache,omitempty"`
	Compaction compactionState       `json:"compaction"`
	CompactAt  float64               `json:"compactAt"`
	BlockAt    float64               `json:"blockAt"`
}

// totals are a session's cumulative billed figures.
type totals struct {
	InputTokens   int   `json:"inputTokens"`
	CachedTokens  int   `json:"cachedTokens"`
	OutputTokens  int   `json:"outputTokens"`            // thinking included
	ThoughtTokens int   `json:"thoughtTokens,omitempty"` // the thinking part of outputTokens
	Cost          money `json:"cost"`
	// Summaries are the compaction summaries' calls, counted in the figures above too; absent
	// before the first.
	Summaries *summaryTotals `json:"summaries,omitempty"`
	// Subagents are the subagents' calls, counted in the figures above too; absent before the
	// first.
	Subagents *subagentTotals `json:"subagents,omitempty"`
	// ModelMillis is how long the model took over the calls, as measured where the client does
	// (a local model's cost, which cost.text then gives); absent when nothing was measured.
	ModelMillis int64 `json:"modelMillis,omitempty"`
	// Misses are the loop calls the implicit cache did not serve as expected, by cause; absent
	// before the first.
	Misses *missTotals `json:"misses,omitempty"`
}

// missTotals count the uncached calls by cause (first, resume, rewritten, tools, below, idle,
// unexplained), with the text users read: "3 uncached calls: 1 first call, 2 after a clearing
// or summary".
type missTotals struct {
	Calls map[contextwin.MissCause]int `json:"calls"`
	Text  string                       `json:"text"`
}

// subagentTotals are what the subagents cost, apart.
type subagentTotals struct {
	Runs         int   `json:"runs"`
	Calls        int   `json:"calls"`
	InputTokens  int   `json:"inputTokens"`
	CachedTokens int   `json:"cachedTokens"`
	OutputTokens int   `json:"outputTokens"`
	Cost         money `json:"cost"`
	// Text is the subagents as users read them: "2 subagents, 14 calls $0.0123 (48,210 input,
	// 31,000 cached)".
	Text string `json:"text"`
}

// summaryTotals are what the summaries cost, apart.
type summaryTotals struct {
	Calls        int   `json:"calls"`
	InputTokens  int   `json:"inputTokens"`
	CachedTokens int   `json:"cachedTokens"`
	OutputTokens int   `json:"outputTokens"`
	Flex         int   `json:"flex,omitempty"` // calls served on the Flex tier
	Cost         money `json:"cost"`
	// Text is the summaries as users read them: "2 summaries $0.0012 (8,120 input, 0 cached; 1
	// on Flex)".
	Text string `json:"text"`
}

// money is an amount of money. Unknown is set when some call's model had no known price: Amount
// is then only what the priced calls cost, and the cost must show as unknown, never as $0.
type money struct {
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
	Unknown  bool    `json:"unknown,omitempty"`
	// Local is set when a local model served calls, or serves the next: free, its cost is its
	// time, and Text says it ("local · 41 s", "$0.0063 + local 41 s").
	Local bool `json:"local,omitempty"`
	// Text is the cost as users read it: "$0.0063", "unknown", "$0.0063 + unknown".
	Text string `json:"text"`
}

// compactionState says whether a compaction is running and how many happened.
type compactionState struct {
	State string `json:"state"` // CompactionIdle, CompactionRunning or CompactionBlocking
	Count int    `json:"count"`
	// Decision says, past compactAt, what was decided about the context and why (agent.Usage).
	Decision string `json:"decision,omitempty"`
}

// sessionUpdateParams is reprise/sessionUpdate.
type sessionUpdateParams struct {
	SessionID string `json:"sessionId"`
	Update    update `json:"update"`
}

// update is one step of a turn; the fields present depend on SessionUpdate.
type update struct {
	SessionUpdate string `json:"sessionUpdate"`
	// agent_message_chunk, agent_thought_chunk: sent as "content" (see MarshalJSON)
	Content *textContent `json:"-"`
	// tool_call_update of a write or edit: also "content", a list as ACP's ToolCallContent
	ToolContent []toolContent `json:"-"`
	// tool_call, tool_call_update
	ToolCallID string         `json:"toolCallId,omitempty"`
	Title      string         `json:"title,omitempty"`
	Kind       string         `json:"kind,omitempty"`
	Status     string         `json:"status,omitempty"`
	RawInput   map[string]any `json:"rawInput,omitempty"`
	RawOutput  *toolOutput    `json:"rawOutput,omitempty"`
	// tool_call_update of a running command (status in_progress): its output so far
	Live *liveOutput `json:"live,omitempty"`
	// compaction
	Compaction *compactionUpdate `json:"compaction,omitempty"`
	// retry
	Retry *agent.RetryEvent `json:"retry,omitempty"`
	// turn_end
	StopReason string  `json:"stopReason,omitempty"`
	Error      string  `json:"error,omitempty"`
	Turn       *figure `json:"turn,omitempty"`
	// Changes are the files the turn changed, as reprise.changes lists them but without diffs.
	Changes []fileChange `json:"changes,omitempty"`
	// pins: the session's pins after a change (never null: an empty list when none is left)
	Pins *[]contextwin.PinInfo `json:"pins,omitempty"`
	// plan: the agent's whole plan after a write_todos (never null: an empty list when cleared)
	Entries *[]contextwin.Todo `json:"entries,omitempty"`
	// subagent: where a subagent is; toolCallId is its task call
	Subagent *subagentUpdate `json:"subagent,omitempty"`
}

// subagentUpdate is a subagent as the editor shows it under its task call.
type subagentUpdate struct {
	ID          string `json:"subagentId"`         // its session's id: reprise.cancelSubagent and reprise.export take it
	Parent      string `json:"parentId,omitempty"` // the session (left out in a history entry, which is its own)
	Description string `json:"description"`
	Model       string `json:"model"`
	Status      string `json:"status"` // running, completed, failed, cancelled
	Calls       int    `json:"calls"`
	Totals      totals `json:"totals"`
	Tool        string `json:"tool,omitempty"` // the title of the call it runs now
	Result      string `json:"result,omitempty"`
	Error       string `json:"error,omitempty"`
	// Saved: its transcript is saved (reprise.export with subagentId gives it).
	Saved bool `json:"saved,omitempty"`
}

func subagentUpdateOf(e *agent.SubagentEvent) *subagentUpdate {
	return &subagentUpdate{ID: e.ID, Parent: e.Parent, Description: e.Description, Model: e.Model, Status: e.Status, Calls: e.Calls,
		Totals: totalsOf(e.Totals), Tool: e.Tool, Result: e.Result, Error: e.Err, Saved: e.Saved != ""}
}

// MarshalJSON sends Content or ToolContent as "content": ACP gives the field both shapes, one
// block for a message chunk and a list for a tool call.
func (u update) MarshalJSON() ([]byte, error) {
	type plain update
	var c any
	if u.Content != nil {
		c = u.Content
	} else if len(u.ToolContent) > 0 {
		c = u.ToolContent
	}
	return json.Marshal(struct {
		plain
		Content any `json:"content,omitempty"`
	}{plain(u), c})
}

// UnmarshalJSON reads "content" by its shape, for the tests and the Go clients.
func (u *update) UnmarshalJSON(b []byte) error {
	type plain update
	var w struct {
		plain
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*u = update(w.plain)
	switch {
	case len(w.Content) > 0 && w.Content[0] == '{':
		return json.Unmarshal(w.Content, &u.Content)
	case len(w.Content) > 0 && w.Content[0] == '[':
		return json.Unmarshal(w.Content, &u.ToolContent)
	}
	return nil
}

// toolContent is one item of a tool call's content, as ACP's ToolCallContent: a diff (type
// "diff"), or a note (type "content") when the diff is too large or binary to send.
type toolContent struct {
	Type    string       `json:"type"`
	Path    string       `json:"path,omitempty"`
	OldText *string      `json:"oldText,omitempty"` // absent for a created file
	NewText *string      `json:"newText,omitempty"`
	Content *textContent `json:"content,omitempty"`
}

func toolContentOf(d *agent.Diff) []toolContent {
	if d == nil {
		return nil
	}
	if d.Note != "" {
		return []toolContent{{Type: "content", Content: &textContent{Type: "text", Text: d.Note}}}
	}
	return []toolContent{{Type: "diff", Path: d.Path, OldText: d.OldText, NewText: &d.NewText}}
}

// textContent is a chunk of text, as ACP's ContentBlock of type text.
type textContent struct {
	Type string `json:"type"` // "text"
	Text string `json:"text"`
}

// toolOutput is what a tool returned to the model.
type toolOutput struct {
	Output    string `json:"output"`
	SavedPath string `json:"savedPath,omitempty"`
	Omitted   int    `json:"omitted,omitempty"`
	Refused   bool   `json:"refused,omitempty"`
	// Verdict is a command's test verdict, its last line that says one ("FAIL example.com/x",
	// "3 passed, 1 failed"): a run that found failures reads as such, not as a broken tool.
	Verdict string `json:"verdict,omitempty"`
}

// verdictOf is a command's test verdict on one line, or "".
func verdictOf(kind tools.Kind, output string) string {
	if kind != tools.KindExecute {
		return ""
	}
	v, _ := contextwin.ExtractVerdict(output)
	return strings.Join(strings.Fields(v), " ")
}

// liveOutput is a running command's output so far, for display only: the final update's
// rawOutput replaces it, and the model never gets it.
type liveOutput struct {
	Tail      string `json:"tail"`      // the end of the output: at most 4 KiB and 40 lines
	Bytes     int64  `json:"bytes"`     // printed so far; more than tail holds when its start is left out
	ElapsedMs int64  `json:"elapsedMs"` // since the command started
	// Note: what a command that printed nothing for 3 s is likely doing.
	Note string `json:"note,omitempty"`
}

func liveOutputOf(l *agent.LiveOutput) *liveOutput {
	if l == nil {
		return nil
	}
	return &liveOutput{Tail: l.Tail, Bytes: l.Bytes, ElapsedMs: l.Elapsed.Milliseconds(), Note: l.Note}
}

// compactionUpdate reports a compaction starting, blocking the loop, or ending.
type compactionUpdate struct {
	State      string          `json:"state"` // a Compaction* name
	Trigger    string          `json:"trigger"`
	Note       string          `json:"note,omitempty"`
	Checkpoint *CheckpointInfo `json:"checkpoint,omitempty"`
}

// CheckpointInfo lists a checkpoint without its summary.
type CheckpointInfo struct {
	N            int    `json:"n"`
	Title        string `json:"title"`
	Trigger      string `json:"trigger"`
	Replaced     int    `json:"replaced"`
	TokensBefore int    `json:"tokensBefore"`
	TokensAfter  int    `json:"tokensAfter"`
	Time         string `json:"time,omitempty"`
	// Cleared is how many old tool results the checkpoint cleared (no summary); 0 for a
	// compaction.
	Cleared int `json:"cleared,omitempty"`
}

// figure is a turn's figures in turn_end.
type figure struct {
	Calls  int    `json:"calls"` // model calls since the session began
	Totals totals `json:"totals"`
}

// Command arguments and results.

// AskArgs are the arguments of reprise.ask.
type AskArgs struct {
	Text      string `json:"text"`
	SessionID string `json:"sessionId,omitempty"`
}

// SessionArgs are the arguments of reprise.cancel, reprise.context, reprise.checkpoints and
// reprise.resume.
type SessionArgs struct {
	SessionID string `json:"sessionId"`
}

// compactArgs: reprise.compact.
type compactArgs struct {
	SessionID string `json:"sessionId"`
	Focus     string `json:"focus,omitempty"`
}

// checkpointArgs: reprise.checkpoint.
type checkpointArgs struct {
	SessionID string `json:"sessionId"`
	N         int    `json:"n"`
}

// SessionResult answers reprise.ask, reprise.newSession and reprise.resume.
type SessionResult struct {
	SessionID string `json:"sessionId"`
}

// compactResult answers reprise.compact.
type compactResult struct {
	Checkpoint CheckpointInfo `json:"checkpoint"`
	Before     int            `json:"before"`
	After      int            `json:"after"`
}

// checkpointResult answers reprise.checkpoint: one checkpoint whole.
type checkpointResult struct {
	CheckpointInfo
	Summary  string `json:"summary"`
	Markdown string `json:"markdown"`
}

// SessionInfo is one entry of reprise.sessions.
type SessionInfo struct {
	SessionID    string  `json:"sessionId"`
	Title        string  `json:"title"`
	LastActivity string  `json:"lastActivity"`
	Turns        int     `json:"turns"` // user turns (prompts)
	Calls        int     `json:"calls"` // model calls: one turn with tool calls makes several
	Used         int     `json:"used"`
	Size         int     `json:"size"`
	Percent      float64 `json:"percent"`
	Running      bool    `json:"running"`
	Current      bool    `json:"current"`
	Saved        bool    `json:"saved,omitempty"` // on disk, not loaded: reprise.resume loads it
	Error        string  `json:"error,omitempty"` // its log could not be read
}

// RestoreArgs are the arguments of reprise.restore.
type RestoreArgs struct {
	SessionID string `json:"sessionId"`
	Turn      int    `json:"turn"`
	// Paths, when given, restores only these files (workspace-relative or absolute), each
	// refused alone when the user changed it since.
	Paths *[]string `json:"paths"`
	// Hunks, when given (in place of Paths), undoes only these hunks of reprise.changes from Turn
	// on, each refused alone when it is no longer in its file.
	Hunks []string `json:"hunks,omitempty"`
}

// restoreResult answers reprise.restore.
type restoreResult struct {
	Restored []string  `json:"restored"`
	Hunks    []string  `json:"hunks,omitempty"`   // with hunks: those undone
	Refused  []refusal `json:"refused,omitempty"` // with paths or hunks only
}

type refusal struct {
	Path   string `json:"path,omitempty"` // empty for a hunk id found in no file
	Hunk   string `json:"hunk,omitempty"`
	Reason string `json:"reason"`
}

// ChangesArgs are the arguments of reprise.changes.
type ChangesArgs struct {
	SessionID string `json:"sessionId"`
	Turn      *int   `json:"turn"` // absent: since the session began
}

// UndoFileArgs are the arguments of reprise.undoFile.
type UndoFileArgs struct {
	SessionID string `json:"sessionId"`
	Path      string `json:"path"` // workspace-relative or absolute
}

// KeepArgs are the arguments of reprise.keep.
type KeepArgs struct {
	SessionID string   `json:"sessionId"`
	Turn      int      `json:"turn"`
	Paths     []string `json:"paths"` // workspace-relative or absolute
	// Hunks, in place of Paths: hunk ids of reprise.changes from Turn on.
	Hunks []string `json:"hunks,omitempty"`
}

// HunkArgs are the arguments of reprise.undoHunk and reprise.keepHunk.
type HunkArgs struct {
	SessionID string `json:"sessionId"`
	Turn      int    `json:"turn"` // absent: 1, the changes since the session began
	Hunk      string `json:"hunk"`
	Path      string `json:"path,omitempty"` // the hunk's file, for the message
}

// keepResult answers reprise.keep.
type keepResult struct {
	Kept []string `json:"kept"`
}

// changesResult answers reprise.changes.
type changesResult struct {
	SessionID string       `json:"sessionId"`
	Turn      int          `json:"turn"`
	Files     []fileChange `json:"files"`
}

// fileChange is one file of reprise.changes.
type fileChange struct {
	Path        string `json:"path"`    // workspace-relative, slash-separated
	AbsPath     string `json:"absPath"` // for opening it
	Turn        int    `json:"turn"`    // the restore point's turn
	State       string `json:"state"`
	Added       int    `json:"added"`
	Removed     int    `json:"removed"`
	Diff        string `json:"diff,omitempty"`
	Binary      bool   `json:"binary,omitempty"`
	Note        string `json:"note,omitempty"`
	UserChanged bool   `json:"userChanged,omitempty"`
	// Hunks: a modified file's changes, each kept or undone on its own (reprise.changes only).
	Hunks []hunk `json:"hunks,omitempty"`
	// HunksUndone counts the hunks the user undid (no longer in the diff); HunksKept, in
	// reprise.history, those kept one by one.
	HunksUndone int `json:"hunksUndone,omitempty"`
	HunksKept   int `json:"hunksKept,omitempty"`
	// Review and Reason, in reprise.history only: what became of the file since its turn ended.
	Review string `json:"review,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// hunk is one change of a file in reprise.changes, numbered as a unified diff's header: a hunk
// that only adds has oldLines 0 and oldStart the line before it, one that only removes newLines 0.
type hunk struct {
	ID       string `json:"id"`
	OldStart int    `json:"oldStart"`
	OldLines int    `json:"oldLines"`
	NewStart int    `json:"newStart"`
	NewLines int    `json:"newLines"`
	Review   string `json:"review"` // pending or kept
}

// fileChangeOf is c on the wire, root being the workspace.
func fileChangeOf(root string, c agent.FileChange) fileChange {
	return fileChange{
		Path: c.Path, AbsPath: filepath.Join(root, filepath.FromSlash(c.Path)), Turn: c.Turn,
		State: string(c.State), Added: c.Added, Removed: c.Removed, Diff: c.Diff,
		Binary: c.Binary, Note: c.Note, UserChanged: c.UserChanged, Hunks: hunksWire(c.Hunks), HunksUndone: c.HunksUndone,
	}
}

func hunksWire(hs []agent.Hunk) []hunk {
	var out []hunk
	for _, h := range hs {
		out = append(out, hunk{ID: h.ID, OldStart: h.OldStart, OldLines: h.OldLines, NewStart: h.NewStart, NewLines: h.NewLines,
			Review: wire(reviewNames, map[bool]agent.ReviewState{true: agent.ReviewKept, false: agent.ReviewPending}[h.Kept])})
	}
	return out
}

// fileChangesOf is cs on the wire, never null.
func fileChangesOf(root string, cs []agent.FileChange) []fileChange {
	out := make([]fileChange, 0, len(cs))
	for _, c := range cs {
		out = append(out, fileChangeOf(root, c))
	}
	return out
}

// contextResult answers reprise.context: the /context view.
type contextResult struct {
	contextUsageParams
	Model string `json:"model"`
	// ServedModel is the model that answered the last call, when the API named another.
	ServedModel string           `json:"servedModel,omitempty"`
	Largest     []largeItem      `json:"largest"`
	LastPrompt  int              `json:"lastPrompt"`
	Turns       int              `json:"turns"` // user turns
	Calls       int              `json:"calls"` // model calls
	Rereads     int              `json:"rereads"`
	Checkpoints int              `json:"checkpoints"`
	State       contextwin.State `json:"state"`
	Status      string           `json:"status"`
	FixedTokens int              `json:"fixedTokens"`
	// MCP is the MCP tools' share by server (raw estimates: their sum is about the breakdown's
	// mcpTools, which the model's usage corrects); the catalogue counts as server "".
	MCP  []mcpShare `json:"mcp"`
	Text string     `json:"text"` // the same, rendered for a plain client

	// CompactionModel is the compactionModel setting when it is not model; CompactionTier is
	// "flex" when background summaries ask for it.
	CompactionModel string `json:"compactionModel,omitempty"`
	CompactionTier  string `json:"compactionTier,omitempty"`

	// Pins are the session's pins and PinnedTokens what they cost, counted in messages (no
	// breakdown category of their own: the categories sum to the window).
	Pins         []contextwin.PinInfo `json:"pins"`
	PinnedTokens int                  `json:"pinnedTokens"`
}

// mcpShare is what one MCP server's declared tools cost per request.
type mcpShare struct {
	Server   string `json:"server"`
	Tools    int    `json:"tools"`              // declared
	Deferred int    `json:"deferred,omitempty"` // past the budget, reached through the catalogue
	Tokens   int    `json:"tokens"`
}

// largeItem is one of the largest items in the messages.
type largeItem struct {
	contextwin.Item
	Stale bool `json:"stale,omitempty"` // the file changed on disk after the agent read it
}

func totalsOf(t contextwin.Totals) totals { return totalsUnknown(t, false, false) }

// totalsUnknown is totalsOf when the cost is unknown for another reason too, or the calls to
// come are to a local model (agent.Usage's CostUnknown and Local).
func totalsUnknown(t contextwin.Totals, unknown, local bool) totals {
	unknown = unknown || !t.CostKnown()
	out := totals{InputTokens: t.InputTokens, CachedTokens: t.CachedTokens, OutputTokens: t.OutputTokens, ThoughtTokens: t.ThoughtTokens,
		Cost:        money{Amount: t.Cost, Currency: "USD", Unknown: unknown, Local: t.Local > 0 || local, Text: t.CostWords(unknown, local)},
		ModelMillis: t.Time.Millis}
	if t.Misses.Total() > 0 {
		out.Misses = &missTotals{Calls: t.Misses.Calls, Text: t.Misses.Text(0)}
	}
	if s := t.Summaries; s.Calls > 0 {
		st := contextwin.Totals{Calls: s.Calls, Cost: s.Cost, Unpriced: s.Unpriced, Local: s.Local}
		out.Summaries = &summaryTotals{Calls: s.Calls, InputTokens: s.InputTokens, CachedTokens: s.CachedTokens, OutputTokens: s.OutputTokens, Flex: s.Flex,
			Cost: money{Amount: s.Cost, Currency: "USD", Unknown: s.Unpriced > 0, Local: s.Local > 0, Text: st.CostText()}, Text: s.Text()}
	}
	if s := t.Subagents; s.Runs > 0 || s.Calls > 0 {
		st := contextwin.Totals{Calls: s.Calls, Cost: s.Cost, Unpriced: s.Unpriced, Local: s.Local}
		out.Subagents = &subagentTotals{Runs: s.Runs, Calls: s.Calls, InputTokens: s.InputTokens, CachedTokens: s.CachedTokens, OutputTokens: s.OutputTokens,
			Cost: money{Amount: s.Cost, Currency: "USD", Unknown: s.Unpriced > 0, Local: s.Local > 0, Text: st.CostText()}, Text: s.Text()}
	}
	return out
}

func checkpointInfo(cp contextwin.Checkpoint) CheckpointInfo {
	info := CheckpointInfo{N: cp.N, Title: cp.Title, Trigger: wire(triggerNames, cp.Trigger), Replaced: cp.Replaced, TokensBefore: cp.TokensBefore, TokensAfter: cp.TokensAfter, Cleared: cp.Cleared}
	if !cp.Time.IsZero() {
		info.Time = cp.Time.UTC().Format("2006-01-02T15:04:05Z")
	}
	return info
}

func compactionUpdateOf(c *agent.CompactionEvent) *compactionUpdate {
	u := &compactionUpdate{State: wire(compactionNames, c.State), Trigger: wire(triggerNames, c.Trigger), Note: c.Note}
	if c.Checkpoint != nil {
		info := checkpointInfo(*c.Checkpoint)
		u.Checkpoint = &info
	}
	return u
}

// historyResult answers reprise.history: the conversation since the session began.
type historyResult struct {
	SessionID string               `json:"sessionId"`
	Entries   []historyEntry       `json:"entries"`
	Pins      []contextwin.PinInfo `json:"pins"`
}

// historyEntry is one step of the conversation (agent.TranscriptEntry with wire names). A tool
// entry carries what its tool_call and tool_call_update carried, a turn end what its turn_end
// did, so that an editor rebuilds the chat with the code that built it live.
type historyEntry struct {
	Turn       int    `json:"turn"`
	Kind       string `json:"kind"`
	Text       string `json:"text,omitempty"`
	ToolCallID string `json:"toolCallId,omitempty"`
	Title      string `json:"title,omitempty"`
	ToolKind   string `json:"toolKind,omitempty"`
	Status     string `json:"status,omitempty"`
	// RawInput, Output, SavedPath, Omitted, Refused and Content: a tool's, as tool_call's
	// rawInput, tool_call_update's rawOutput and content (an edit's diff).
	RawInput   map[string]any `json:"rawInput,omitempty"`
	Output     string         `json:"output,omitempty"`
	SavedPath  string         `json:"savedPath,omitempty"`
	Omitted    int            `json:"omitted,omitempty"`
	Refused    bool           `json:"refused,omitempty"`
	Content    []toolContent  `json:"content,omitempty"`
	Checkpoint int            `json:"checkpoint,omitempty"`
	// turn_end: as the update, plus each changed file's review state.
	StopReason string       `json:"stopReason,omitempty"`
	Error      string       `json:"error,omitempty"`
	Calls      int          `json:"calls,omitempty"`
	Changes    []fileChange `json:"changes,omitempty"`
	// Subagent: a task call's subagent as its last subagent update showed it.
	Subagent *subagentUpdate `json:"subagent,omitempty"`
	// Verdict: a command's test verdict, as rawOutput's.
	Verdict string `json:"verdict,omitempty"`
}

// historyOf is a transcript on the wire, root being the workspace.
func historyOf(root string, entries []agent.TranscriptEntry) []historyEntry {
	out := make([]historyEntry, 0, len(entries))
	for _, e := range entries {
		h := historyEntry{
			Turn: e.Turn, Kind: wire(entryNames, e.Kind), Text: e.Text, ToolCallID: e.ToolCallID, Title: e.Title,
			RawInput: e.Args, Output: e.Output, SavedPath: e.SavedPath, Omitted: e.Omitted, Refused: e.Refused,
			Content: toolContentOf(e.Diff), Checkpoint: e.Checkpoint, Error: e.Error, Calls: e.Calls,
		}
		if e.ToolKind != "" {
			h.ToolKind = wire(toolKindNames, e.ToolKind)
		}
		if e.Kind == agent.EntryTool && e.Status != agent.ToolInProgress {
			h.Verdict = verdictOf(e.ToolKind, e.Output)
		}
		if e.Status != "" {
			h.Status = wire(toolStatusNames, e.Status)
		}
		if sa := e.Subagent; sa != nil {
			h.Subagent = &subagentUpdate{ID: sa.ID, Description: sa.Description, Model: sa.Model, Status: sa.Status,
				Calls: sa.Calls, Totals: totalsOf(sa.Totals), Error: sa.Error, Saved: sa.Saved != ""}
		}
		if e.Kind == agent.EntryTurnEnd {
			h.StopReason = wire(stopNames, e.StopReason)
			h.Changes = make([]fileChange, 0, len(e.Changes))
			for _, c := range e.Changes {
				f := fileChangeOf(root, c.FileChange)
				f.Review, f.Reason, f.HunksKept = wire(reviewNames, c.Review), c.Reason, c.HunksKept
				h.Changes = append(h.Changes, f)
			}
		}
		out = append(out, h)
	}
	return out
}

// mcpResult answers reprise.mcp: the servers and what their tools cost in every request.
type mcpResult struct {
	Servers []mcpServerInfo `json:"servers"`
	// Tokens is the estimated cost of the MCP declarations sent with each request: the declared
	// tools, and the catalogue's two when some are deferred.
	Tokens int `json:"tokens"`
}

type mcpServerInfo struct {
	Name   string        `json:"name"`
	Source string        `json:"source"` // the file (or setting) that declared it
	Type   string        `json:"type"`   // stdio, http, sse
	State  string        `json:"state"`  // one of the MCPState names
	Error  string        `json:"error,omitempty"`
	Tools  []mcpToolInfo `json:"tools"`
	Tokens int           `json:"tokens"` // of its declared tools
}

type mcpToolInfo struct {
	Name        string `json:"name"` // as declared to the model: SERVER__TOOL
	Tool        string `json:"tool"` // on its server
	Description string `json:"description,omitempty"`
	Tokens      int    `json:"tokens"`
	// Deferred: past mcpToolBudget, not declared; the model finds it with mcp_find_tools.
	Deferred bool `json:"deferred,omitempty"`
}
