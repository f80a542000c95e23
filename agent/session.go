// Package agent runs the coding agent's loop over a workspace: it calls the model, dispatches tool
// calls, keeps the context window in budget (truncation, background compaction, session cap) and
// reports everything as a stream of events that a CLI or an editor server consumes.
package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"google.golang.org/genai"

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
}

// DefaultMaxTurnRequests bounds the model calls of one user turn: long tasks routinely take a
// hundred or more, and what protects against an agent going in circles is the loop guard, not
// this cap.
const DefaultMaxTurnRequests = 200

// ErrBusy is returned when a turn is asked of a session that is already running one.
var ErrBusy = errors.New("a turn is already running in this session")

// Session is one conversation with the agent. Run may be called again for follow-up requests;
// Context and Compact may be called at any time, from any goroutine.
//
// Its state is split by concern, each part behind its own lock:
//   - settings: the context policy and the tools' environment, which SetPolicy and SetSandbox change;
//   - conv: what the next request sends and how it came to be (history, ledger, transcript,
//     checkpoints, undo frames);
//   - files: what the harness holds of the workspace (changes, restore points, reads, staleness,
//     the last test verdict);
//   - bill: what the calls cost, the warnings about models and prices, the caps;
//   - compactor: the compaction running in the background and when to start the next;
//   - loop: whether a turn runs, and when the session was last active.
//
// Lock order: compactor.mu may be held while conv.mu is taken, never the other way round. Starting
// a compaction snapshots the history and installing one swaps it; holding compactor.mu across both
// keeps a second compaction from starting on a history that is about to change. No other lock is
// ever held while another is taken: what one part needs of another is read into locals first.
type Session struct {
	// opts are the options New completed; never written after New (the policy and sandbox in
	// force are in settings).
	opts      Options
	settings  settings
	conv      Conversation
	files     Tracker
	bill      billing
	compactor compactor
	loop      turnLoop
	caching   *ExplicitCache // explicit caching in front of the model; nil when the model has none
}

// settings are what may change in a session's options while it lives (SetPolicy, SetSandbox).
type settings struct {
	mu     sync.Mutex // guards policy and env
	policy contextwin.Policy
	// env is replaced, never changed in place: a copy handed out stays as it was.
	env *tools.Env
}

// policy returns the context policy in force.
func (s *Session) policy() contextwin.Policy {
	s.settings.mu.Lock()
	defer s.settings.mu.Unlock()
	return s.settings.policy
}

// toolsEnv returns a copy of the tools' environment in force.
func (st *settings) toolsEnv() *tools.Env {
	st.mu.Lock()
	defer st.mu.Unlock()
	env := *st.env
	return &env
}

// New starts a session. It reads the workspace's custom instructions once; Reload re-reads them.
func New(opts Options) (*Session, error) {
	if opts.Workspace == "" || opts.Model == nil {
		return nil, errors.New("new session: a workspace and a model are required")
	}
	if !filepath.IsAbs(opts.Workspace) {
		return nil, fmt.Errorf("new session: workspace %q is not absolute", opts.Workspace)
	}
	if opts.ContextPolicy == (contextwin.Policy{}) {
		opts.ContextPolicy = contextwin.DefaultPolicy()
	}
	if err := opts.ContextPolicy.Validate(); err != nil {
		return nil, fmt.Errorf("new session: %w", err)
	}
	if opts.Catalog == nil {
		opts.Catalog = catalog.Builtin()
	}
	if opts.Commands == nil {
		opts.Commands = cmdpolicy.New(nil, nil)
	}
	if opts.Secrets == nil {
		opts.Secrets = secret.FromEnv(os.Getenv)
	}
	if opts.Sandbox == nil {
		opts.Sandbox = sandbox.New(sandbox.Config{Workspace: opts.Workspace})
	}
	if opts.MaxTurnRequests == 0 {
		opts.MaxTurnRequests = DefaultMaxTurnRequests
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.ID == "" {
		opts.ID = NewID(opts.Now())
	}
	if opts.InputTokenLimit <= 0 {
		opts.InputTokenLimit = contextwin.DefaultInputTokenLimit
	}
	s := &Session{opts: opts}
	s.conv.opts, s.files.opts = &s.opts, &s.opts
	s.compactor.conv, s.compactor.bill, s.compactor.opts = &s.conv, &s.bill, &s.opts
	s.files.readPaths = map[string]int{}
	s.loop.lastActivity = opts.Now()
	return s.init(), nil
}

// init finishes New and Resume.
func (s *Session) init() *Session {
	opts := s.opts
	s.bill.pricing = contextwin.Pricing{Catalog: s.opts.Catalog, Overrides: opts.Prices}
	s.bill.asked, s.bill.now = opts.ModelName, opts.Now
	if opts.CompactionModel != nil && !s.opts.Catalog.Same(opts.CompactionModelName, opts.ModelName) {
		s.bill.compaction = opts.CompactionModelName
	}
	s.settings.policy = opts.ContextPolicy
	s.settings.env = s.newEnv()
	s.conv.prompt = buildSystemPrompt(opts.Workspace, opts.Secrets.String(loadInstructions(opts.Workspace, opts.Logger)), opts.External)
	s.conv.ledger.SetFixed(s.conv.prompt.estimate())
	if store, ok := opts.Model.(cacheStore); ok {
		view := cacheView{
			id: opts.ID, model: opts.ModelName, now: opts.Now, after: opts.After, logger: opts.Logger,
			policy: s.policy, idleSince: s.LastActivity, journal: s.opts.journal, bill: &s.bill, conv: &s.conv,
		}
		s.caching = &ExplicitCache{inner: opts.Model, store: store, s: view}
		s.opts.Model = s.caching
	}
	return s
}

func (s *Session) newEnv() *tools.Env {
	p := s.opts.ContextPolicy
	var temps string
	if s.opts.StateDir != "" {
		temps = filepath.Join(s.opts.StateDir, journal.TempsDir)
	}
	// The session's own grants when none are given, so that "Always allow" holds for its rest.
	grants := s.opts.MCPGrants
	if grants == nil {
		grants = tools.NewMCPGrants(nil)
	}
	return &tools.Env{
		Workspace:        s.opts.Workspace,
		Overlay:          s.opts.Overlay,
		Guard:            s.opts.Guard,
		BeforeChange:     s.recordChange,
		Commands:         s.opts.Commands,
		Approver:         s.opts.Approver,
		Sandbox:          s.opts.Sandbox.ForSession(s.opts.ID),
		Secrets:          s.opts.Secrets,
		SpillDir:         filepath.Join(s.opts.StateDir, "tool-outputs"),
		Temps:            tools.NewTemps(temps),
		MaxOutputChars:   p.ToolOutputMaxChars,
		LargeOutputBytes: p.LargeOutputThresholdBytes,
		External:         s.opts.External,
		MCPGrants:        grants,
		WriteGrants:      &tools.WriteGrants{},
	}
}

// Conversation is what the session sends the model and how it came to be: its history, pins
// and checkpoints.
func (s *Session) Conversation() *Conversation { return &s.conv }

// Files is what the harness holds of the workspace: the files the agent changed and read, those
// changed on disk since, the last test verdict.
func (s *Session) Files() *Tracker { return &s.files }

// ExplicitCache is the explicit cache in front of the session's model; nil when the model has
// none (its methods take a nil receiver).
func (s *Session) ExplicitCache() *ExplicitCache { return s.caching }

// ID identifies the session.
func (s *Session) ID() string { return s.opts.ID }

// Turns is the number of user turns since the session began: the last turn's number.
func (c *Conversation) Turns() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.turns
}

// Window is the effective context budget.
func (s *Session) Window() int { return s.opts.window(s.policy()) }

// window is the effective context budget under policy p.
func (o *Options) window(p contextwin.Policy) int { return p.Window(o.InputTokenLimit) }

// SetPolicy applies new context settings from the next model call on.
func (s *Session) SetPolicy(p contextwin.Policy) error {
	if err := p.Validate(); err != nil {
		return err
	}
	st := &s.settings
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.policy != p { // journaled under the lock: the last record is the policy in force
		s.opts.journal(journal.Record{Kind: journal.KindSettings, Policy: &p})
	}
	st.policy = p
	env := *st.env
	env.MaxOutputChars = p.ToolOutputMaxChars
	env.LargeOutputBytes = p.LargeOutputThresholdBytes
	st.env = &env
	return nil
}

// SetSandbox confines the commands of the next calls under sb (a changed sandbox setting).
func (s *Session) SetSandbox(sb *sandbox.Sandbox) {
	st := &s.settings
	st.mu.Lock()
	defer st.mu.Unlock()
	env := *st.env
	env.Sandbox = sb.ForSession(s.opts.ID)
	st.env = &env
}

// ReloadInstructions re-reads the custom-instructions files (AGENTS.md …), e.g. when one changed.
func (c *Conversation) ReloadInstructions() {
	prompt := buildSystemPrompt(c.opts.Workspace, c.opts.Secrets.String(loadInstructions(c.opts.Workspace, c.opts.Logger)), c.opts.External)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.prompt = prompt
	c.ledger.SetFixed(prompt.estimate())
}

// History returns a copy of the live history, as the next call will send it.
func (c *Conversation) History() []*genai.Content {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.history)
}

// Checkpoints returns the compactions so far, oldest first.
func (c *Conversation) Checkpoints() []contextwin.Checkpoint {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.checkpoints)
}

// LastActivity is when the session last started or ended a turn (its creation time before that).
func (s *Session) LastActivity() time.Time {
	s.loop.mu.Lock()
	defer s.loop.mu.Unlock()
	return s.loop.lastActivity
}

// NewID makes a session id that sorts by creation time and does not collide.
func NewID(t time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return t.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}
