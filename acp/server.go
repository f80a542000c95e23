// Package acp runs Reprise as an Agent Client Protocol agent (`reprise acp`): editors that host
// ACP agents (Zed, JetBrains AI Assistant, CodeCompanion, agent-shell) drive the same agent loop,
// sessions, compaction and checkpoints as `reprise serve`, over ACP's JSON-RPC on stdio.
package acp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/agent/roots"
	"github.com/reprise-dev/reprise/agent/runner"
	"github.com/reprise-dev/reprise/agent/sandbox"
	"github.com/reprise-dev/reprise/agent/secret"
	"github.com/reprise-dev/reprise/contextwin"
)

// AuthMethodID is the one authentication method: the key in the agent's environment.
const AuthMethodID = "gemini-api-key"

// Options configure the agent.
type Options struct {
	Version string
	// NewModel builds the model client for a model name and returns its input token limit.
	NewModel func(ctx context.Context, model string) (agent.Model, int, error)
	Model    string
	// HasKey says whether a credential is in the environment; authenticate reports it.
	HasKey bool
	// StateHome is where sessions are saved, one directory per workspace (as serve and run).
	StateHome string
	// ConfigHome is the user's configuration directory (their mcp.json).
	ConfigHome    string
	ContextPolicy contextwin.Policy
	Prices        contextwin.PriceTable
	// Thinking is the --thinking setting: catalog.Auto or a level the model accepts.
	Thinking string
	// CompactionModel is the --compaction-model setting ("" = the session's model); the tier is
	// ContextPolicy's CompactionTier.
	CompactionModel string
	// Subagents are the task tool's settings (--subagents, --subagent-model…).
	Subagents agent.SubagentSettings
	Allow     []string
	Sandbox   sandbox.Config // its Workspace is set per session
	Secrets   *secret.Redactor
	Logger    *slog.Logger
	// MaxTurnRequests caps a turn's model calls (0: the agent's default).
	MaxTurnRequests int
	// Observe, when set, sees the options of every session opened (runner.Runner.Observe).
	Observe func(agent.Options)
	// ObserveEvents, when set, sees every event a session tells (runner.Runner.ObserveEvents).
	ObserveEvents func(id string, ev agent.Event)
	// IdleAfter closes a session idle this long (no prompt running) to free its memory and its
	// MCP servers; its next prompt reopens it (runner.Runner.IdleAfter). 0: never.
	IdleAfter time.Duration
	// AllowBroadWorkspace lets a session's cwd be a directory roots.Broad judges too broad (/, the
	// home directory, a system directory): the user said so when configuring the agent
	// (--allow-broad-workspace). Without it, session/new and session/load refuse such a cwd.
	AllowBroadWorkspace bool
}

// server is the ACP agent of one connection.
type server struct {
	opts   Options
	runner *runner.Runner // hosts the sessions
	conn   *sdk.AgentSideConnection
	wire   *wire // what conn writes to: holds a new session's updates until its response is out
	log    *slog.Logger
	ctx    context.Context // the connection's: cancelled when it ends

	mu     sync.Mutex
	client sdk.ClientCapabilities

	// sandboxNotice tells the user once per connection that commands cannot be (wholly)
	// sandboxed here, and so are all asked, or that they get no process limit here.
	sandboxNotice sync.Once
}

// sandboxNotice words what the session's sandbox cannot do here (confine, bound processes), said
// once per connection; "" if it is whole.
func sandboxNotice(box *sandbox.Sandbox) string {
	notice := ""
	if ok, why := box.Confined(); !ok && box.Mode() == sandbox.WorkspaceWrite {
		notice = "Commands cannot be sandboxed here (" + why + "): every command will be asked."
	} else if open := box.NetworkOpen(); open != "" {
		notice = strings.ToUpper(open[:1]) + open[1:] + "."
	}
	if none := box.NoProcessLimit(); none != "" {
		notice = strings.TrimSpace(notice + " " + strings.ToUpper(none[:1]) + none[1:] + ".")
	}
	return notice
}

// Serve runs the agent on in and out until the client disconnects or ctx ends.
func Serve(ctx context.Context, in io.Reader, out io.Writer, opts Options) error {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Secrets == nil {
		opts.Secrets = secret.FromEnv(os.Getenv)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r := &runner.Runner{StateHome: opts.StateHome, Models: opts.NewModel, Now: timeNow, Observe: opts.Observe, Logger: opts.Logger,
		ObserveEvents: opts.ObserveEvents, IdleAfter: opts.IdleAfter}
	s := &server{opts: opts, runner: r, log: opts.Logger, ctx: ctx, wire: newWire(out)}
	r.Events = func(id string, ev agent.Event) { s.verbEvents(s.ctx, id)(ev) }
	// The connection reads as soon as it is made: hold its input until s.conn is set, so that no
	// handler runs before it.
	ready := make(chan struct{})
	s.conn = sdk.NewAgentSideConnection(s, s.wire, gatedReader{r: in, ready: ready})
	s.conn.SetLogger(opts.Logger)
	close(ready)
	idle, stopIdle := context.WithCancel(ctx)
	watching := make(chan struct{})
	go func() { // ends with stopIdle, before the sessions are closed
		defer close(watching)
		r.WatchIdle(idle)
	}()
	select {
	case <-s.conn.Done():
	case <-ctx.Done():
	}
	stopIdle()
	<-watching
	r.CancelAll()
	r.CloseAll()
	return nil
}

// gatedReader reads from r once ready is closed.
type gatedReader struct {
	r     io.Reader
	ready <-chan struct{}
}

func (g gatedReader) Read(p []byte) (int, error) {
	<-g.ready
	return g.r.Read(p)
}

// Initialize answers the capabilities: sessions can be loaded, prompts take text and embedded
// context, MCP servers given by the client run over stdio and HTTP.
func (s *server) Initialize(_ context.Context, p sdk.InitializeRequest) (sdk.InitializeResponse, error) {
	s.mu.Lock()
	s.client = p.ClientCapabilities
	s.mu.Unlock()
	desc := "Set GEMINI_API_KEY (or GOOGLE_API_KEY) in the environment the editor starts `reprise acp` with."
	return sdk.InitializeResponse{
		ProtocolVersion: sdk.ProtocolVersionNumber,
		AgentCapabilities: sdk.AgentCapabilities{
			LoadSession:        true,
			PromptCapabilities: sdk.PromptCapabilities{EmbeddedContext: true},
			McpCapabilities:    sdk.McpCapabilities{Http: true},
		},
		AgentInfo:   &sdk.Implementation{Name: "reprise", Version: s.opts.Version},
		AuthMethods: []sdk.AuthMethod{{Agent: &sdk.AuthMethodAgent{Id: AuthMethodID, Name: "Gemini API key", Description: &desc}}},
	}, nil
}

// Authenticate checks that a key is there: Reprise never takes it over the protocol, so that it
// stays out of the editor's logs.
func (s *server) Authenticate(_ context.Context, p sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	if string(p.MethodId) != AuthMethodID {
		return sdk.AuthenticateResponse{}, sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("unknown method %q; the one method is %q", p.MethodId, AuthMethodID)})
	}
	if !s.opts.HasKey {
		return sdk.AuthenticateResponse{}, sdk.NewAuthRequired(map[string]any{"error": "no Gemini API key: set GEMINI_API_KEY (or GOOGLE_API_KEY) in the environment the editor starts `reprise acp` with"})
	}
	return sdk.AuthenticateResponse{}, nil
}

// session returns an open session, or the error an unknown one gets.
func (s *server) session(id sdk.SessionId) (*runner.Live, error) {
	l := s.runner.Lookup(string(id))
	if l == nil {
		return nil, unknownSession(id)
	}
	return l, nil
}

// use returns an open session in use by the caller, who releases it: one the runner closed while
// idle is reopened. The error is the one an unknown session gets, or why it could not reopen.
func (s *server) use(ctx context.Context, id sdk.SessionId) (*runner.Live, error) {
	l, err := s.runner.Use(ctx, string(id))
	switch {
	case errors.Is(err, runner.ErrNotOpen):
		return nil, unknownSession(id)
	case err != nil:
		return nil, runnerError(err)
	}
	return l, nil
}

func unknownSession(id sdk.SessionId) error {
	return sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("unknown session %q: create it with session/new or load it with session/load", id)})
}

// workspace checks a session's cwd: an absolute directory, and not one too broad to be a
// workspace unless the user allowed that. ACP has no question to put before a session exists
// (session/request_permission belongs to a session's tool call), so the answer is the flag the
// user starts the agent with.
func (s *server) workspace(cwd string) (string, error) {
	ws, err := absDir(cwd)
	if err != nil {
		return "", err
	}
	if why := roots.Broad(ws, roots.Home()); why != "" && !s.opts.AllowBroadWorkspace {
		return "", sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf(
			"cwd %s is %s: the agent reads, searches and changes files anywhere in its workspace, and its commands may write there. "+
				"Open a project folder, or add --allow-broad-workspace to the command that starts `reprise acp`", ws, why)})
	}
	return ws, nil
}

// absDir checks a session's cwd: an absolute directory.
func absDir(cwd string) (string, error) {
	if !filepath.IsAbs(cwd) {
		return "", sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("cwd must be an absolute path, got %q", cwd)})
	}
	st, err := os.Stat(cwd)
	if err != nil || !st.IsDir() {
		return "", sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("cwd %s is not a directory", cwd)})
	}
	return filepath.Clean(cwd), nil
}

// spec is what every session of this connection gets, with the MCP servers the client passes
// (started by the runner, closed with the session).
func (s *server) spec(id, ws string, given []sdk.McpServer) (runner.Spec, error) {
	spec := runner.Spec{
		Config: agent.Config{
			ContextPolicy: s.opts.ContextPolicy, Prices: s.opts.Prices, Secrets: s.opts.Secrets,
			Approver: approver{srv: s, sessionID: id}, Stream: true, MaxTurnRequests: s.opts.MaxTurnRequests,
			Logger: s.log, Overlay: s.overlay(id, ws), Subagents: s.opts.Subagents,
		},
		ID: id, Workspace: ws, Model: s.opts.Model, Thinking: s.opts.Thinking, CompactionModel: s.opts.CompactionModel,
		Allow: s.opts.Allow, Sandbox: s.opts.Sandbox,
	}
	servers, err := s.mcpServers(given)
	if err != nil || len(servers) == 0 {
		return spec, err
	}
	spec.External, spec.OwnExternal = s.manager(id, ws, servers), true
	spec.NewExternal = func() runner.External { return s.manager(id, ws, servers) }
	return spec, nil
}

// runnerError words what the runner could not do as ACP errors.
func runnerError(err error) error {
	var me runner.ModelError
	switch {
	case errors.As(err, &me):
		return sdk.NewInternalError(map[string]any{"error": fmt.Sprintf("model unavailable: %v", me.Err)})
	case errors.Is(err, journal.ErrNotFound):
		return sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	return err
}

// NewSession starts a session in cwd, saved like serve's, and advertises the slash commands.
func (s *server) NewSession(ctx context.Context, p sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	ws, err := s.workspace(p.Cwd)
	if err != nil {
		return sdk.NewSessionResponse{}, err
	}
	id := agent.NewID(timeNow())
	spec, err := s.spec(id, ws, p.McpServers)
	if err != nil {
		closeMCP(spec)
		return sdk.NewSessionResponse{}, err
	}
	// The client learns the id from the response: what the session says before waits for it.
	s.wire.expect(id)
	l, err := s.runner.Open(ctx, spec) // closes the MCP servers if it fails
	if err != nil {
		s.wire.forget(id)
		return sdk.NewSessionResponse{}, runnerError(err)
	}
	defer s.runner.Release(l) // held until it is set up: it may be closed while idle after
	s.afterSetup(id, l)
	return sdk.NewSessionResponse{SessionId: sdk.SessionId(id)}, nil
}

// LoadSession reopens a saved session (one a crash or a kill left too) and replays its
// conversation as updates before answering, as ACP asks: the client knows the id it loads, so
// the updates that follow a setup come before the response too.
func (s *server) LoadSession(ctx context.Context, p sdk.LoadSessionRequest) (sdk.LoadSessionResponse, error) {
	ws, err := s.workspace(p.Cwd)
	if err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	id := string(p.SessionId)
	if err := journal.CheckID(id); err != nil {
		return sdk.LoadSessionResponse{}, sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("invalid sessionId: %v", err)})
	}
	if _, err := s.session(p.SessionId); err == nil {
		return sdk.LoadSessionResponse{}, sdk.NewInvalidRequest(map[string]any{"error": fmt.Sprintf("session %s is already open", id)})
	}
	spec, err := s.spec(id, ws, p.McpServers)
	if err != nil {
		closeMCP(spec)
		return sdk.LoadSessionResponse{}, err
	}
	l, err := s.runner.Resume(ctx, id, spec) // closes the MCP servers if it fails
	switch {
	case errors.Is(err, journal.ErrNotFound):
		return sdk.LoadSessionResponse{}, sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("no saved session %q for %s", id, ws)})
	case err != nil:
		var me runner.ModelError
		if errors.As(err, &me) {
			return sdk.LoadSessionResponse{}, runnerError(err)
		}
		return sdk.LoadSessionResponse{}, sdk.NewInvalidRequest(map[string]any{"error": err.Error()})
	}
	defer s.runner.Release(l)
	s.replay(ctx, id, l.Transcript())
	// The plan as the agent left it: a client shows the last plan update it got.
	if plan := l.Memo().Plan(); len(plan) > 0 {
		s.send(ctx, id, sdk.UpdatePlan(planEntries(plan)...))
	}
	s.afterSetup(id, l)
	return sdk.LoadSessionResponse{}, nil
}

// closeMCP closes the MCP servers of a spec the runner never got.
func closeMCP(spec runner.Spec) {
	if spec.External != nil {
		_ = spec.External.Close()
	}
}

// Cancel is handled by the connection, which cancels the prompt's context; a turn then ends
// with cancelled.
func (s *server) Cancel(context.Context, sdk.CancelNotification) error { return nil }

// CloseSession closes an open session; it stays saved, and session/load reopens it.
func (s *server) CloseSession(ctx context.Context, p sdk.CloseSessionRequest) (sdk.CloseSessionResponse, error) {
	// Closing cancels the running prompt, as ACP asks, and waits for it to end.
	err := s.runner.Close(ctx, string(p.SessionId))
	if errors.Is(err, runner.ErrNotOpen) {
		_, err := s.session(p.SessionId)
		return sdk.CloseSessionResponse{}, err
	}
	if err != nil {
		s.log.Warn("session log not closed cleanly: its last records may be lost", "session", p.SessionId, "error", err)
	}
	return sdk.CloseSessionResponse{}, nil
}

func (s *server) ListSessions(context.Context, sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	return sdk.ListSessionsResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionList)
}

func (s *server) ResumeSession(context.Context, sdk.ResumeSessionRequest) (sdk.ResumeSessionResponse, error) {
	return sdk.ResumeSessionResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionResume)
}

func (s *server) SetSessionConfigOption(context.Context, sdk.SetSessionConfigOptionRequest) (sdk.SetSessionConfigOptionResponse, error) {
	return sdk.SetSessionConfigOptionResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionSetConfigOption)
}

func (s *server) SetSessionMode(context.Context, sdk.SetSessionModeRequest) (sdk.SetSessionModeResponse, error) {
	return sdk.SetSessionModeResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionSetMode)
}
