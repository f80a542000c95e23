// Package host opens, resumes and closes sessions for the three front-ends: the LSP server, the
// ACP server and the CLI. It is the one place that builds agent.Options, opens a workspace's
// session store, creates or resumes the session log and starts the MCP servers, so that the
// front-ends, thin adapters over it, cannot drift apart: the same settings give the same session.
package host

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
	"github.com/reprise-dev/reprise/agent/sandbox"
	"github.com/reprise-dev/reprise/agent/secret"
	"github.com/reprise-dev/reprise/agent/tools"
	"github.com/reprise-dev/reprise/contextwin"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// Host opens sessions. Its fields are set once, before the first use; it is then safe for
// concurrent use.
type Host struct {
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

	mu     sync.Mutex // guards stores
	stores map[string]*journal.Store
}

// Spec is one session as a front-end asks for it: the user's settings, checked.
type Spec struct {
	// ID is a new session's id when the front-end needs it before the session exists (to
	// address its notices); empty: the host makes one.
	ID            string
	Workspace     string // absolute
	Model         string // a resumed session keeps the model it was saved with
	Thinking      string // catalog.Auto ("" too) or a level, checked against the model
	ContextPolicy contextwin.Policy
	Prices        contextwin.PriceTable
	Catalog       *catalog.Catalog // nil: the built-in one
	// Allow is the command allowlist; Yes allows every command the policy does not refuse
	// outright (--yes).
	Allow           []string
	Yes             bool
	Sandbox         sandbox.Config // its Workspace is the spec's
	Secrets         *secret.Redactor
	Approver        tools.Approver
	MCPGrants       []string // MCP tools allowed without asking (--allow-mcp)
	Stream          bool
	MaxTurnRequests int // 0: agent's default
	Overlay         func(rel string) (string, bool)
	Guard           func(rel string) error
	Logger          *slog.Logger
	// External are the MCP servers, started by the host with the request's context before the
	// session declares their tools. Nil: none.
	External External
	// Lazy writes the session to disk with its first turn, not when it is opened: an editor
	// that opens sessions it never uses leaves no directories behind.
	Lazy bool

	// CompactionModel is the model compaction summaries are asked of (the compactionModel
	// setting); "" or the session's model: the session's. Its tier is ContextPolicy's
	// CompactionTier.
	CompactionModel string
}

// External is an MCP manager: tools the session declares once they are started.
type External interface {
	tools.External
	Start(ctx context.Context) error
}

// Open is a session opened by the host, with what its front-end keeps beside it.
type Open struct {
	*agent.Session
	Log      *journal.Log      // nil when not saved
	Sandbox  *sandbox.Sandbox  // the commands' sandbox, for the front-end's notices
	Commands *cmdpolicy.Policy // the command policy: "Always allow" adds to it
	Model    string            // the model name the session runs
	Created  time.Time
	Title    string   // a resumed session's, from its log
	Warnings []string // what a damaged log lost, on resume
}

// ModelError is a failure to build the model client (no key, a retired model): the front-ends
// give it its own code or wording.
type ModelError struct{ Err error }

func (e ModelError) Error() string { return e.Err.Error() }
func (e ModelError) Unwrap() error { return e.Err }

// ErrNotSaved says that a session cannot be resumed: sessions are not saved.
var ErrNotSaved = errors.New("sessions are not saved (no state home)")

func (h *Host) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

// Store is the session store of a workspace, opened once per host; nil without a state home.
func (h *Host) Store(workspace string) (*journal.Store, error) {
	if h.StateHome == "" {
		return nil, nil
	}
	dir := journal.WorkspaceDir(h.StateHome, workspace)
	h.mu.Lock()
	defer h.mu.Unlock()
	if st, ok := h.stores[dir]; ok {
		return st, nil
	}
	st, err := journal.OpenStore(dir)
	if err != nil {
		return nil, err
	}
	if h.stores == nil {
		h.stores = map[string]*journal.Store{}
	}
	h.stores[dir] = st
	return st, nil
}

// New opens a new session.
func (h *Host) New(ctx context.Context, spec Spec) (*Open, error) {
	st, err := h.Store(spec.Workspace)
	if err != nil {
		return nil, err
	}
	id := spec.ID
	if id == "" {
		id = agent.NewID(h.now())
	}
	o, opts, err := h.prepare(ctx, id, spec.Model, spec)
	if err != nil {
		return nil, err
	}
	o.Created = h.now()
	if st != nil {
		meta := journal.Meta{ID: id, Workspace: spec.Workspace, Model: o.Model, Created: o.Created}
		create := st.Create
		if spec.Lazy {
			create = st.New
		}
		if o.Log, err = create(meta); err != nil {
			return nil, err
		}
		opts.StateDir, opts.Journal, opts.Blobs = st.Dir(id), o.Log, o.Log
	}
	h.observe(opts)
	if o.Session, err = agent.New(opts); err != nil {
		return nil, errors.Join(fmt.Errorf("new session: %w", err), o.closeLog())
	}
	return o, nil
}

// Resume reopens a saved session (one a crash left too) with its own model.
func (h *Host) Resume(ctx context.Context, id string, spec Spec) (*Open, error) {
	st, err := h.Store(spec.Workspace)
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
	o, opts, err := h.prepare(ctx, id, model, spec)
	if err != nil {
		return nil, errors.Join(err, log.Close())
	}
	o.Log, o.Warnings, o.Created, o.Title = log, snap.Warnings, snap.Meta.Created, snap.Title
	opts.StateDir, opts.Journal, opts.Blobs = st.Dir(id), log, log
	h.observe(opts)
	if o.Session, err = agent.Resume(opts, snap); err != nil {
		return nil, errors.Join(err, o.closeLog())
	}
	// A crash leaves the session's explicit caches billing storage until their TTL ends. One list
	// call finds them, when the log says the session had some or it may make them.
	if len(snap.Caches) > 0 || o.Session.Context().Policy.ExplicitCache {
		deleted, err := o.Session.DropLeftCaches(ctx)
		logCaches(spec.Logger, "explicit caches a crash left deleted", id, deleted, err)
	}
	return o, nil
}

// SweepCaches deletes the explicit caches that sessions of spec's workspace left alive (a crash
// ends a session without deleting its cache) and that no process has open now, besides those
// open says this one has; a server calls it when it starts. Caches whose display names name no
// session of this workspace are left alone. It returns the names deleted.
func (h *Host) SweepCaches(ctx context.Context, spec Spec, open func(id string) bool) ([]string, error) {
	st, err := h.Store(spec.Workspace)
	if st == nil || err != nil {
		return nil, err
	}
	client, _, err := h.Models(ctx, cmp.Or(spec.Model, catalog.Builtin().DefaultModel()))
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
func (h *Host) prepare(ctx context.Context, id, model string, spec Spec) (*Open, agent.Options, error) {
	client, limit, err := h.Models(ctx, model)
	if err != nil {
		return nil, agent.Options{}, ModelError{err}
	}
	if spec.External != nil {
		if err := spec.External.Start(ctx); err != nil {
			return nil, agent.Options{}, err
		}
	}
	o := &Open{Model: model, Commands: commandPolicy(spec)}
	opts := Options(id, model, spec)
	opts.Model, opts.InputTokenLimit, opts.Commands = client, limit, o.Commands
	o.Sandbox = opts.Sandbox
	if err := spec.checkThinking(model, &opts); err != nil && spec.Logger != nil {
		// A resumed session's model may not take the level set since: its default.
		spec.Logger.Warn("thinking setting not applied", "session", id, "error", err)
	}
	if err := h.compactionModel(ctx, id, model, spec, &opts); err != nil {
		return nil, agent.Options{}, err
	}
	return o, opts, nil
}

// compactionModel builds the client of the compactionModel setting into opts, when it names
// another model than the session's: a model the API does not serve fails the session as the
// session's own would. Its thinking is the setting resolved for it, or its default when it does
// not take that level: a summary is no reason to refuse a session.
func (h *Host) compactionModel(ctx context.Context, id, model string, spec Spec, opts *agent.Options) error {
	cat := spec.Catalog
	if cat == nil {
		cat = catalog.Builtin()
	}
	name := spec.CompactionModel
	if name == "" || cat.Same(name, model) {
		return nil
	}
	client, _, err := h.Models(ctx, name)
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
		ID:              id,
		Workspace:       spec.Workspace,
		ModelName:       model,
		ContextPolicy:   spec.ContextPolicy,
		Prices:          spec.Prices,
		Catalog:         spec.Catalog,
		Approver:        spec.Approver,
		Sandbox:         sandbox.New(sb),
		Secrets:         spec.Secrets,
		StateDir:        filepath.Join(os.TempDir(), "reprise-"+id),
		Stream:          spec.Stream,
		MaxTurnRequests: spec.MaxTurnRequests,
		Overlay:         spec.Overlay,
		Guard:           spec.Guard,
		Logger:          spec.Logger,
		MCPGrants:       tools.NewMCPGrants(spec.MCPGrants),
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

func (h *Host) observe(opts agent.Options) {
	if h.Observe != nil {
		h.Observe(opts)
	}
}

// Close stops the session's background work and closes its log; an error means the log's last
// records may be lost. The MCP servers are the front-end's: several sessions may share them.
func (o *Open) Close() error {
	if o.Session != nil {
		o.Session.Close() // deletes its explicit cache too
	}
	return o.closeLog()
}

func (o *Open) closeLog() error {
	if o.Log == nil {
		return nil
	}
	return o.Log.Close()
}
