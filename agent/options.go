package agent

import (
	"context"
	"iter"
	"log/slog"
	"time"

	"github.com/reprise-dev/reprise/agent/cmdpolicy"
	"github.com/reprise-dev/reprise/agent/gemini"
	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/agent/sandbox"
	"github.com/reprise-dev/reprise/agent/secret"
	"github.com/reprise-dev/reprise/agent/tools"
	"github.com/reprise-dev/reprise/contextwin"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// Model is what the loop needs from a model: one streamed or unary call.
type Model interface {
	Generate(ctx context.Context, req *gemini.Request) iter.Seq2[gemini.Chunk, error]
}

// Config is what a front-end gives a session as it is: the public half of Options, which
// runner.Spec carries unchanged. A new setting that needs no building (no client, no policy
// compiled from it) is added here and in the front-ends' settings readers, nowhere else.
type Config struct {
	// ContextPolicy is the context window policy (budget, compaction thresholds, caps); the zero
	// value is contextwin.DefaultPolicy().
	ContextPolicy contextwin.Policy
	// Catalog is the model catalogue, the user's models setting applied; nil = catalog.Builtin().
	Catalog *catalog.Catalog
	// Prices override the catalogue's (the --prices file, the prices setting); nil = none.
	Prices   contextwin.PriceTable
	Approver tools.Approver // nil = refuse what the policy does not allow
	// Secrets are redacted from everything that reaches the model or the journal; nil = the
	// credentials of the process environment (secret.FromEnv(os.Getenv)).
	Secrets         *secret.Redactor
	Stream          bool
	MaxTurnRequests int // model calls per user turn; 0 = DefaultMaxTurnRequests
	// Overlay and Guard connect the tools to an editor's unsaved buffers (see tools.Env).
	Overlay func(rel string) (string, bool)
	Guard   func(rel string) error
	Logger  *slog.Logger
	// Subagents are the task tool's settings; the zero value declares it with the defaults.
	Subagents SubagentSettings
}

// Options configure a session: the front-end's Config, and what the runner builds from the
// rest of its settings. Workspace and Model are required.
type Options struct {
	Config
	ID              string
	Workspace       string // absolute
	Model           Model
	ModelName       string
	InputTokenLimit int // the model's; 0 = contextwin.DefaultInputTokenLimit
	// Thinking is sent with every request: a level, a budget (2.5 models) or, zero, nothing (the
	// model's default). Catalog.Thinking resolves the user's setting into it.
	Thinking catalog.ThinkingChoice
	// CompactionModel, when set, is the model compaction summaries are asked of (the
	// compactionModel setting): CompactionModelName is its name, CompactionThinking what its
	// requests send. Nil, or the session's own model: summaries go to Model, where they reuse
	// its cached prefix.
	CompactionModel     Model
	CompactionModelName string
	CompactionThinking  catalog.ThinkingChoice

	Commands *cmdpolicy.Policy // nil = cmdpolicy.New(nil, nil)
	// Sandbox confines the commands; nil = the default sandbox for Workspace.
	Sandbox  *sandbox.Sandbox
	StateDir string // the session's directory; large outputs go to StateDir/tool-outputs
	Now      func() time.Time
	// After is the timer of the background work that waits (keeping an explicit cache alive while
	// idle); nil = time.After. Tests give one on a simulated clock.
	After func(time.Duration) <-chan time.Time
	// Journal and Blobs save the session (a journal.Log); nil keeps it in memory only.
	Journal Journal
	Blobs   Blobs
	// External holds the tools of the user's MCP servers, declared after the built-in ones and
	// counted apart in the breakdown (MCP tools); nil = none.
	External tools.External
	// MCPGrants are the MCP tools that run without asking; nil = every one is asked.
	MCPGrants *tools.MCPGrants
	// Between is told what happens to the session outside its turns: a background compaction
	// that outlived its turn landing (its compaction and usage events), a note of the explicit
	// cache kept alive while idle (a warning). Called from the session's own goroutines, no lock
	// held. Nil: such a compaction lands at the next turn's first call, which tells it, and the
	// notes wait for the next call.
	Between func(Event)

	// SubagentModel is the model subagents run on (the subagentModel setting, built by the
	// runner), SubagentModelName its name, SubagentInputLimit its input limit and
	// SubagentThinking what its requests send. Nil: the session's own model.
	SubagentModel      Model
	SubagentModelName  string
	SubagentInputLimit int
	SubagentThinking   catalog.ThinkingChoice
	// OpenSubagent saves a subagent as a session of its own (its transcript, the result names
	// where); nil: subagents are kept in memory only.
	OpenSubagent func(journal.Meta) (SubagentLog, error)

	// parent is set on a subagent's own session: what it needs of the session that runs it.
	parent *parentLink
}

// SubagentLog is a subagent's saved session (a journal.Log).
type SubagentLog interface {
	Journal
	Blobs
	Dir() string
	Close() error
}

// DefaultMaxTurnRequests bounds the model calls of one user turn: long tasks routinely take a
// hundred or more, and what protects against an agent going in circles is the loop guard, not
// this cap.
const DefaultMaxTurnRequests = 200

// Journal saves what happens to a session (journal.Log implements it). Without one, nothing is
// saved and restore points are not kept.
type Journal interface {
	Append(r journal.Record) error
	Sync() error
}

// Blobs keeps restore points' file contents, and the texts of the edits an editor was shown
// (journal.Log implements it).
type Blobs interface {
	SaveBlob(turn int, rel string, data []byte) (string, error)
	SaveText(data []byte) (string, error)
	ReadBlob(name string) ([]byte, error)
}

// journal appends a record; a failure to save is logged, never fatal to the turn.
func (o *Options) journal(r journal.Record) {
	if o.Journal == nil {
		return
	}
	if r.Time.IsZero() {
		r.Time = o.Now()
	}
	if err := o.Journal.Append(r); err != nil {
		o.Logger.Warn("session not saved", "session", o.ID, "error", err)
	}
}

func (o *Options) sync() {
	if o.Journal == nil {
		return
	}
	if err := o.Journal.Sync(); err != nil {
		o.Logger.Warn("session not synced", "session", o.ID, "error", err)
	}
}

// window is the effective context budget under policy p.
func (o *Options) window(p contextwin.Policy) int { return p.Window(o.InputTokenLimit) }

// SubagentSettings are the task tool's settings: subagents, subagentModel, subagentBudget,
// subagentParallel and subagentMaxCalls.
type SubagentSettings struct {
	Off bool // no task tool
	// Model is the model subagents run on; "" is the catalogue's choice (Catalog.SubagentModel).
	Model string
	// Budget is a subagent's context budget; 0 is the session's contextBudget.
	Budget int
	// Parallel bounds the subagents running at once; 0 is DefaultSubagentParallel.
	Parallel int
	// MaxCalls bounds a subagent's model calls; 0 is DefaultSubagentMaxCalls.
	MaxCalls int
}

// Defaults of the subagent settings.
const (
	DefaultSubagentParallel = 3
	// DefaultSubagentMaxCalls is enough for a broad investigation (dozens of reads and searches)
	// and stops one going in circles long before the parent's own turn limit.
	DefaultSubagentMaxCalls = 40
	MaxSubagentParallel     = 8
)

// parentLink is what a subagent's session needs of the session that runs it.
type parentLink struct {
	overCap func() bool // the parent reached a cap: the child stops too
}
