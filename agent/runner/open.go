package runner

// Opening a session: the one place that builds agent.Options, opens a workspace's session store,
// creates or resumes the session log and starts the MCP servers, so that the front-ends cannot
// drift apart: the same settings give the same session.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/cmdpolicy"
	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/agent/mcp"
	"github.com/reprise-dev/reprise/agent/sandbox"
	"github.com/reprise-dev/reprise/agent/tools"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// Runner hosts the sessions of a process. Its exported fields are set once, before the first
// use; it is then safe for concurrent use.
type Runner struct {
	// StateHome is where sessions are saved ($REPRISE_HOME), one directory per workspace
	// (journal.WorkspaceDir). Empty: sessions are not saved, and large tool outputs go to a
	// temporary directory.
	StateHome string
	// Models builds the client of a model by name and returns its input token limit.
	Models func(ctx context.Context, name string) (agent.Model, int, error)
	// Now is the clock of session ids and metadata; nil is time.Now.
	Now func() time.Time
	// Observe, when set, sees the options of every session opened, before it starts: tests
	// compare what the front-ends ask for.
	Observe func(agent.Options)
	// MaxSessions caps the sessions open at once (each holds a log, its lock and its history):
	// at the cap, opening one closes the least recently used idle session, which stays saved and
	// reopens when used. 0: no cap.
	MaxSessions int
	// IdleAfter is how long a session may stay idle (no turn, no front-end using it) before
	// CloseIdle closes it to free its memory, its log's lock and its own MCP servers; it stays
	// saved and reopens when used. 0: never.
	IdleAfter time.Duration
	// Logger logs what the runner does on its own (a session closed at the cap or while idle, and
	// reopened); nil: nothing.
	Logger *slog.Logger
	// ObserveEvents, when set, sees every event a hosted session tells its front-end (a turn's, a
	// verb's, and those between turns) before the front-end renders it: tests compare what the
	// front-ends are told.
	ObserveEvents func(id string, ev agent.Event)
	// Events, when set, gets what happens to a hosted session outside its turns: its usage once
	// it opens or resumes, and after Reconfigure or FilesChanged. A front-end renders them as it
	// renders a turn's; it never reads the usage back itself after an operation.
	Events func(id string, ev agent.Event)

	storesMu sync.Mutex // guards stores
	stores   map[string]*journal.Store

	live liveSet
	// settingsMu orders Reconfigure and the reopening of a parked session, so that a reopened
	// session never ends with older settings than the others.
	settingsMu sync.Mutex
}

// Spec is one session as a front-end asks for it: the user's settings, checked. Its Config
// goes to the session as it is; the rest is what the runner builds from (a model client, a
// command policy, a sandbox, MCP servers).
type Spec struct {
	agent.Config
	// ID is a new session's id when the front-end needs it before the session exists (to
	// address its notices); empty: the runner makes one.
	ID        string
	Workspace string // absolute
	Model     string // a resumed session keeps the model it was saved with
	Thinking  string // catalog.Auto ("" too) or a level, checked against the model
	// Allow is the command allowlist; Yes allows every command the policy does not refuse
	// outright (--yes).
	Allow     []string
	Yes       bool
	Sandbox   sandbox.Config // its Workspace is the spec's
	MCPGrants []string       // MCP tools allowed without asking (--allow-mcp)
	// External are the MCP servers, started by the runner with the request's context before the
	// session declares their tools. Nil: none.
	External External
	// OwnExternal closes External with the session (ACP: the servers a client passes are the
	// session's); false: the front-end shares it between sessions and closes it.
	OwnExternal bool
	// NewExternal, with OwnExternal, builds the same servers anew, not started: a closed manager
	// does not start again, and the runner closes an idle session to reopen it when used. Nil: a
	// session with servers of its own is not closed while idle.
	NewExternal func() External
	// Lazy writes the session to disk with its first turn, not when it is opened: an editor
	// that opens sessions it never uses leaves no directories behind.
	Lazy bool

	// CompactionModel is the model compaction summaries are asked of (the compactionModel
	// setting); "" or the session's model: the session's. Its tier is ContextPolicy's
	// CompactionTier.
	CompactionModel string

	// commands is a reopened session's command policy, with the patterns "Always allow" and
	// Reconfigure added to it; nil: one is built from the spec.
	commands *cmdpolicy.Policy
}

// External is an MCP manager: tools the session declares once they are started, and what they
// cost in every request for the context views.
type External interface {
	tools.External
	Start(ctx context.Context) error
	Close() error
	Servers() []mcp.ServerStatus
	CatalogTokens() int
}

// ModelError is a failure to build the model client (no key, a retired model): the front-ends
// give it its own code or wording.
type ModelError struct{ Err error }

func (e ModelError) Error() string { return e.Err.Error() }
func (e ModelError) Unwrap() error { return e.Err }

// ErrNotSaved says that a session cannot be resumed: sessions are not saved.
var ErrNotSaved = errors.New("sessions are not saved (no state home)")

func (r *Runner) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Store is the session store of a workspace, opened once per host; nil without a state home.
func (r *Runner) Store(workspace string) (*journal.Store, error) {
	if r.StateHome == "" {
		return nil, nil
	}
	dir := journal.WorkspaceDir(r.StateHome, workspace)
	r.storesMu.Lock()
	defer r.storesMu.Unlock()
	if st, ok := r.stores[dir]; ok {
		return st, nil
	}
	st, err := journal.OpenStore(dir)
	if err != nil {
		return nil, err
	}
	if r.stores == nil {
		r.stores = map[string]*journal.Store{}
	}
	r.stores[dir] = st
	return st, nil
}

// create opens a new session, not yet hosted.
func (r *Runner) create(ctx context.Context, spec Spec) (*Live, error) {
	st, err := r.Store(spec.Workspace)
	if err != nil {
		return nil, err
	}
	id := spec.ID
	if id == "" {
		id = agent.NewID(r.now())
	}
	l, opts, err := r.prepare(ctx, id, spec.Model, spec)
	if err != nil {
		return nil, err
	}
	l.Created = r.now()
	if st != nil {
		meta := journal.Meta{ID: id, Workspace: spec.Workspace, Model: l.Model, Created: l.Created}
		create := st.Create
		if spec.Lazy {
			create = st.New
		}
		if l.Log, err = create(meta); err != nil {
			return nil, errors.Join(err, l.closeExternal())
		}
		opts.StateDir, opts.Journal, opts.Blobs = st.Dir(id), l.Log, l.Log
		opts.OpenSubagent = subagentLogs(st)
	}
	r.observe(opts)
	if l.Session, err = agent.New(opts); err != nil {
		return nil, errors.Join(fmt.Errorf("new session: %w", err), l.close())
	}
	return l, nil
}

// load reopens a saved session (one a crash left too) with its own model, not yet hosted.
func (r *Runner) load(ctx context.Context, id string, spec Spec) (*Live, error) {
	st, err := r.Store(spec.Workspace)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return nil, ErrNotSaved
	}
	log, snap, err := st.Resume(id)
	if err != nil {
		return nil, err
	}
	model := snap.Meta.Model
	if model == "" {
		model = spec.Model
	}
	l, opts, err := r.prepare(ctx, id, model, spec)
	if err != nil {
		return nil, errors.Join(err, log.Close())
	}
	l.Log, l.Warnings, l.Created, l.title = log, snap.Warnings, snap.Meta.Created, snap.Title
	opts.StateDir, opts.Journal, opts.Blobs = st.Dir(id), log, log
	opts.OpenSubagent = subagentLogs(st)
	r.observe(opts)
	if l.Session, err = agent.Resume(opts, snap); err != nil {
		return nil, errors.Join(err, l.close())
	}
	// A crash leaves the session's explicit caches billing storage until their TTL ends. One list
	// call finds them, when the log says the session had some or it may make them.
	if len(snap.Caches) > 0 || l.Session.Context().Policy.ExplicitCache {
		deleted, err := l.ExplicitCache().DropLeft(ctx)
		logCaches(spec.Logger, "explicit caches a crash left deleted", id, deleted, err)
	}
	return l, nil
}

// SweepCaches deletes the explicit caches that sessions of spec's workspace left alive (a crash
// ends a session without deleting its cache) and that no process has open now, besides those
// open says this one has; a server calls it when it starts. Caches whose display names name no
// session of this workspace are left alone. It returns the names deleted.
func (r *Runner) SweepCaches(ctx context.Context, spec Spec, open func(id string) bool) ([]string, error) {
	st, err := r.Store(spec.Workspace)
	if st == nil || err != nil {
		return nil, err
	}
	client, _, err := r.Models(ctx, cmp.Or(spec.Model, catalog.Builtin().DefaultModel()))
	if err != nil {
		return nil, ModelError{err}
	}
	deleted, err := agent.DeleteLeftCaches(ctx, client, func(id, _ string) bool {
		return !open(id) && st.Idle(id)
	})
	logCaches(spec.Logger, "explicit caches that ended sessions left deleted", "", deleted, err)
	return deleted, err
}

// logCaches logs what a sweep deleted, or why it could not; session is "" for a sweep of all.
func logCaches(l *slog.Logger, msg, session string, deleted []string, err error) {
	if l == nil {
		return
	}
	if session != "" {
		l = l.With("session", session)
	}
	switch {
	case err != nil:
		l.Warn("explicit caches left by ended sessions not all deleted: they expire with their TTL", "error", err)
	case len(deleted) > 0:
		l.Info(msg, "caches", deleted)
	}
}

// prepare builds the model client, starts the MCP servers and builds the options of session id.
func (r *Runner) prepare(ctx context.Context, id, model string, spec Spec) (*Live, agent.Options, error) {
	l := &Live{
		Model: model, Commands: spec.commands, Workspace: spec.Workspace,
		External: spec.External, ownExternal: spec.OwnExternal, r: r, spec: spec,
	}
	if l.Commands == nil {
		l.Commands = commandPolicy(spec)
	}
	client, limit, err := r.Models(ctx, model)
	if err != nil {
		return nil, agent.Options{}, errors.Join(ModelError{err}, l.closeExternal())
	}
	if spec.External != nil {
		if err := spec.External.Start(ctx); err != nil {
			return nil, agent.Options{}, errors.Join(err, l.closeExternal())
		}
	}
	opts := Options(id, model, spec)
	opts.Model, opts.InputTokenLimit, opts.Commands = client, limit, l.Commands
	opts.Between = func(ev agent.Event) { r.tellID(id, ev) }
	l.Sandbox = opts.Sandbox
	if err := spec.checkThinking(model, &opts); err != nil && spec.Logger != nil {
		// A resumed session's model may not take the level set since: its default.
		spec.Logger.Warn("thinking setting not applied", "session", id, "error", err)
	}
	if err := r.compactionModel(ctx, id, model, spec, &opts); err != nil {
		return nil, agent.Options{}, errors.Join(err, l.closeExternal())
	}
	if err := r.subagentModel(ctx, id, model, spec, &opts); err != nil {
		return nil, agent.Options{}, errors.Join(err, l.closeExternal())
	}
	return l, opts, nil
}

// compactionModel builds the client of the compactionModel setting into opts, when it names
// another model than the session's: a model the API does not serve fails the session as the
// session's own would. Its thinking is the setting resolved for it, or its default when it does
// not take that level: a summary is no reason to refuse a session.
func (r *Runner) compactionModel(ctx context.Context, id, model string, spec Spec, opts *agent.Options) error {
	cat := spec.Catalog
	if cat == nil {
		cat = catalog.Builtin()
	}
	name := spec.CompactionModel
	if name == "" || cat.Same(name, model) {
		return nil
	}
	client, _, err := r.Models(ctx, name)
	if err != nil {
		return ModelError{fmt.Errorf("compactionModel %s: %w", name, err)}
	}
	opts.CompactionModel, opts.CompactionModelName = client, name
	choice, err := cat.Thinking(name, cmp.Or(spec.Thinking, catalog.Auto))
	if err != nil && spec.Logger != nil {
		spec.Logger.Warn("thinking setting not applied to the compaction model: its default", "session", id, "model", name, "error", err)
	}
	opts.CompactionThinking = choice
	return nil
}

// Options are the agent options of a session of model, everything but the model client, its
// limit and the log: the one place where a front-end's settings become a session's options.
func Options(id, model string, spec Spec) agent.Options {
	sb := spec.Sandbox
	sb.Workspace = spec.Workspace
	opts := agent.Options{
		Config:    spec.Config,
		ID:        id,
		Workspace: spec.Workspace,
		ModelName: model,
		Sandbox:   sandbox.New(sb),
		StateDir:  filepath.Join(os.TempDir(), "reprise-"+id),
		MCPGrants: tools.NewMCPGrants(spec.MCPGrants),
	}
	if spec.External != nil {
		opts.External = spec.External
	}
	return opts
}

// checkThinking resolves the thinking setting for model into opts.
func (spec Spec) checkThinking(model string, opts *agent.Options) error {
	cat := spec.Catalog
	if cat == nil {
		cat = catalog.Builtin()
	}
	setting := spec.Thinking
	if setting == "" {
		setting = catalog.Auto
	}
	choice, err := cat.Thinking(model, setting)
	if err != nil {
		return err
	}
	opts.Thinking = choice
	return nil
}

// commandPolicy is the session's command policy: the allowlist, the paths hidden from commands,
// and --yes.
func commandPolicy(spec Spec) *cmdpolicy.Policy {
	p := cmdpolicy.New(spec.Allow, nil)
	p.HidePaths = append([]string(nil), spec.Sandbox.HidePaths...)
	p.AllowAll = spec.Yes
	return p
}

func (r *Runner) observe(opts agent.Options) {
	if r.Observe != nil {
		r.Observe(opts)
	}
}
