package agent

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/reprise-dev/reprise/agent/cmdpolicy"
	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/agent/sandbox"
	"github.com/reprise-dev/reprise/agent/secret"
	"github.com/reprise-dev/reprise/agent/tools"
	"github.com/reprise-dev/reprise/contextwin"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

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
	s.conv.opts, s.files.opts, s.memo.opts = &s.opts, &s.opts, &s.opts
	s.compactor.summaryCalls = summaryCalls{conv: &s.conv, bill: &s.bill, opts: &s.opts}
	s.files.readPaths = map[string]int{}
	s.loop.lastActivity = opts.Now()
	return s.init(), nil
}

// init finishes New and Resume.
func (s *Session) init() *Session {
	opts := s.opts
	s.bill.pricing = contextwin.Pricing{Catalog: s.opts.Catalog, Overrides: opts.Prices, Local: isLocal(opts.Model)}
	s.bill.asked, s.bill.now = opts.ModelName, opts.Now
	if opts.CompactionModel != nil && !s.opts.Catalog.Same(opts.CompactionModelName, opts.ModelName) {
		s.bill.compaction = opts.CompactionModelName
	}
	s.settings.policy = opts.ContextPolicy
	s.settings.env = s.newEnv()
	s.settings.sandbox = opts.Sandbox
	s.subagents = Subagents{opts: &s.opts, conv: &s.conv, bill: &s.bill, policy: s.policy, usage: s.usage, notify: make(chan struct{}, 1),
		env: func() (*tools.Env, *sandbox.Sandbox) {
			s.settings.mu.Lock()
			defer s.settings.mu.Unlock()
			return s.settings.env, s.settings.sandbox
		},
		newSession: newChild,
	}
	instructions := opts.Secrets.String(loadInstructions(opts.Workspace, opts.Logger))
	s.conv.head = buildHead(&s.opts, s.settings.env, instructions)
	s.conv.prompt = buildSystemPrompt(&s.opts, instructions, s.conv.head)
	s.conv.ledger.SetFixed(s.conv.prompt.estimate())
	if store, ok := opts.Model.(cacheStore); ok {
		view := cacheView{
			id: opts.ID, model: opts.ModelName, now: opts.Now, after: opts.After, logger: opts.Logger,
			policy: s.policy, idleSince: s.LastActivity, journal: s.opts.journal, bill: &s.bill, conv: &s.conv, between: opts.Between,
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
	env := &tools.Env{
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
		Memo:             &s.memo,
	}
	if s.opts.parent != nil {
		env.Only, env.Memo, env.External, env.MCPGrants = tools.SubagentTools, nil, nil, nil
	}
	return env
}

// newChild opens a subagent's session.
func newChild(o Options) (child, error) {
	c, err := New(o)
	if err != nil {
		return child{}, err
	}
	figures := func() (contextwin.Totals, int) {
		f := c.bill.figures()
		return f.totals, f.calls
	}
	return child{run: c.Run, figures: figures, history: c.conv.History, close: c.Close}, nil
}
