package acp

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/fsnotify/fsnotify"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/gemini"
	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/agent/mcp/mcptest"
	"github.com/reprise-dev/reprise/agent/sandbox"
	"github.com/reprise-dev/reprise/agent/sandbox/sandboxtest"
	"github.com/reprise-dev/reprise/contextwin"
)

func TestMain(m *testing.M) {
	mcptest.Serve()              // the MCP server of TestACPMCP, when started as one
	os.Exit(sandboxtest.Main(m)) // the test binary is the sandbox's supervisor for the commands it runs
}

// client is an ACP client that records updates and answers permission requests in order.
type client struct {
	mu      sync.Mutex
	updates []sdk.SessionNotification
	answers []string // option ids; empty: reject
	asked   []sdk.RequestPermissionRequest
	notify  chan struct{}
	buffers map[string]string // path → unsaved text, for fs/read_text_file; nil: not offered
	written map[string]string // what fs/write_text_file got
	ext     []extNote         // the agent's extension notifications
}

// extNote is an extension notification the agent sent.
type extNote struct {
	method string
	params json.RawMessage
}

// HandleExtensionMethod records the agent's extension notifications (_reprise/pinsUpdate).
func (c *client) HandleExtensionMethod(_ context.Context, method string, params json.RawMessage) (any, error) {
	c.mu.Lock()
	c.ext = append(c.ext, extNote{method, params})
	c.mu.Unlock()
	return nil, nil
}

// extNotes are the extension notifications of method, in order.
func (c *client) extNotes(method string) []json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []json.RawMessage
	for _, n := range c.ext {
		if n.method == method {
			out = append(out, n.params)
		}
	}
	return out
}

func (c *client) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	c.mu.Lock()
	c.updates = append(c.updates, n)
	c.mu.Unlock()
	select {
	case c.notify <- struct{}{}:
	default:
	}
	return nil
}

func (c *client) RequestPermission(_ context.Context, p sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.asked = append(c.asked, p)
	select {
	case c.notify <- struct{}{}:
	default:
	}
	if len(c.answers) == 0 {
		return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Cancelled: &sdk.RequestPermissionOutcomeCancelled{}}}, nil
	}
	a := c.answers[0]
	c.answers = c.answers[1:]
	return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Selected: &sdk.RequestPermissionOutcomeSelected{OptionId: sdk.PermissionOptionId(a)}}}, nil
}

func (c *client) ReadTextFile(_ context.Context, p sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if text, ok := c.buffers[p.Path]; ok {
		return sdk.ReadTextFileResponse{Content: text}, nil
	}
	b, err := os.ReadFile(p.Path)
	if err != nil {
		return sdk.ReadTextFileResponse{}, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	return sdk.ReadTextFileResponse{Content: string(b)}, nil
}
func (c *client) WriteTextFile(_ context.Context, p sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.written == nil {
		c.written = map[string]string{}
	}
	c.written[p.Path] = p.Content
	return sdk.WriteTextFileResponse{}, nil
}
func (c *client) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, sdk.NewMethodNotFound(sdk.ClientMethodTerminalCreate)
}
func (c *client) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, nil
}
func (c *client) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, nil
}
func (c *client) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, nil
}
func (c *client) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, nil
}

func (c *client) all() []sdk.SessionNotification {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]sdk.SessionNotification(nil), c.updates...)
}

// waitFor waits until an update satisfies f. Every update (and permission request) leaves a
// token in c.notify after it is recorded, so a check that fails is followed by a wake-up.
func (c *client) waitFor(t *testing.T, what string, f func(sdk.SessionUpdate) bool) sdk.SessionUpdate {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		for _, n := range c.all() {
			if f(n.Update) {
				return n.Update
			}
		}
		select {
		case <-c.notify:
		case <-deadline:
			t.Fatalf("no update %s; the last ones: %s", what, c.last(5))
		}
	}
}

// last describes the last n updates, for a failure to name what was seen.
func (c *client) last(n int) string {
	all := c.all()
	var b strings.Builder
	for _, u := range all[max(0, len(all)-n):] {
		j, _ := json.Marshal(u.Update)
		b.Write(j)
		b.WriteString("\n")
	}
	return b.String()
}

// policy keeps one turn verbatim, so that /compact has turns to summarise.
func policy() contextwin.Policy {
	p := contextwin.DefaultPolicy()
	p.KeepRecentTurns = 1
	return p
}

type env struct {
	t     *testing.T
	ws    string
	home  string
	model *geminitest.Server
	c     *client
	conn  *sdk.ClientSideConnection
	stop  func()
}

// models builds model clients of the scripted model.
func models(model *geminitest.Server) func(context.Context, string) (agent.Model, int, error) {
	return func(ctx context.Context, name string) (agent.Model, int, error) {
		c, err := gemini.New(ctx, gemini.Config{APIKey: "k", BaseURL: model.URL(), Model: name, BaseDelay: time.Millisecond, MaxDelay: 10 * time.Millisecond})
		if err != nil {
			return nil, 0, err
		}
		limit, _ := c.InputTokenLimit(ctx)
		return c, limit, nil
	}
}

// start runs the agent on pipes against the scripted model, with a client connected.
func start(t *testing.T, model *geminitest.Server, ws, home string, hasKey bool) *env {
	t.Helper()
	return startModel(t, model, ws, home, hasKey, "gemini-3.8-flash")
}

// startModel is start with the model a session asks for, and the options changed by set.
func startModel(t *testing.T, model *geminitest.Server, ws, home string, hasKey bool, name string, set ...func(*Options)) *env {
	t.Helper()
	agentIn, clientOut := io.Pipe()
	clientIn, agentOut := io.Pipe()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		opts := Options{
			Version: "test", Model: name, HasKey: hasKey, StateHome: home,
			ContextPolicy: policy(),
			Logger:        slog.New(slog.DiscardHandler),
			NewModel:      models(model),
		}
		for _, f := range set {
			f(&opts)
		}
		_ = Serve(ctx, agentIn, agentOut, opts)
		agentOut.Close()
	}()
	c := &client{notify: make(chan struct{}, 1)}
	conn := sdk.NewClientSideConnection(c, clientOut, clientIn)
	conn.SetLogger(slog.New(slog.DiscardHandler))
	e := &env{t: t, ws: ws, home: home, model: model, c: c, conn: conn}
	e.stop = func() {
		cancel()
		clientOut.Close()
		<-done
	}
	t.Cleanup(e.stop)
	return e
}

// open initializes the connection with caps and starts a session in e.ws with servers.
func (e *env) open(caps sdk.ClientCapabilities, servers ...sdk.McpServer) sdk.SessionId {
	e.t.Helper()
	ctx := e.t.Context()
	if _, err := e.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber, ClientCapabilities: caps}); err != nil {
		e.t.Fatal(err)
	}
	sess, err := e.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: e.ws, McpServers: append([]sdk.McpServer{}, servers...)})
	if err != nil {
		e.t.Fatal(err)
	}
	return sess.SessionId
}

// sleeper is a session whose model first runs a command that says it started (it creates the
// file "started") and sleeps 30 s, allowed once, and then answers then. The returned channel is
// closed once the command runs.
func sleeper(t *testing.T, then string) (*env, sdk.SessionId, <-chan struct{}) {
	ws := t.TempDir()
	model := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{call("run_command", map[string]any{"command": "touch started && sleep 30"}), text(then)}})
	t.Cleanup(model.Close)
	e := start(t, model, ws, t.TempDir(), true)
	id := e.open(sdk.ClientCapabilities{})
	e.c.answers = []string{optionAllowOnce}
	return e, id, created(t, filepath.Join(ws, "started"))
}

// created returns a channel closed when path is created: the test waits on the file system's
// event, not on a timer.
func created(t *testing.T, path string) <-chan struct{} {
	t.Helper()
	w, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Add(filepath.Dir(path)); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	stopped := make(chan struct{})
	// The watcher's goroutine ends when the watcher is closed, at the test's end, and is waited for.
	go func() {
		defer close(stopped)
		closed := false
		for ev := range w.Events {
			if !closed && ev.Name == path && ev.Has(fsnotify.Create) {
				close(done)
				closed = true
			}
		}
	}()
	t.Cleanup(func() {
		w.Close()
		<-stopped
	})
	return done
}

// await waits for ch, or fails saying what did not happen.
func await(t *testing.T, what string, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: never happened", what)
	}
}

func text(s string) geminitest.Turn {
	return geminitest.Turn{Parts: []geminitest.Part{{Text: s}}}
}

func call(name string, args map[string]any) geminitest.Turn {
	return geminitest.Turn{Parts: []geminitest.Part{{FunctionCall: &geminitest.FunctionCall{Name: name, Args: args}}}}
}

func prompt(id sdk.SessionId, s string) sdk.PromptRequest {
	return sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock(s)}}
}

func messageText(ns []sdk.SessionNotification, from int) string {
	var b strings.Builder
	for _, n := range ns[from:] {
		if m := n.Update.AgentMessageChunk; m != nil && m.Content.Text != nil {
			b.WriteString(m.Content.Text.Text)
		}
	}
	return b.String()
}

func TestACPSession(t *testing.T) {
	ws := t.TempDir()
	// Long enough that a compaction of the read saves more than its summary costs.
	os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("remember the milk\n"+strings.Repeat("- water the plants, check the bike tyres, sort the mail\n", 60)), 0o644)
	model := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{
		call("read_file", map[string]any{"path": "notes.txt"}),
		text("The notes say to remember the milk."),
		call("run_command", map[string]any{"command": "echo allowed > out.txt"}),
		text("Done."),
		call("run_command", map[string]any{"command": "echo refused > no.txt"}),
		text("It was refused."),
		{Match: contextwin.SummaryMarker, Parts: []geminitest.Part{{Text: "**Objective:**\nRead the notes\n\n**Done:** read notes.txt.\n\n**Remaining work:**\n- buy the milk\n- check the bike"}}},
	}})
	t.Cleanup(model.Close)
	home := t.TempDir()
	e := start(t, model, ws, home, true)
	ctx := t.Context()

	init, err := e.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber})
	if err != nil {
		t.Fatal(err)
	}
	if !init.AgentCapabilities.LoadSession || len(init.AuthMethods) != 1 || init.AuthMethods[0].Agent == nil || init.AuthMethods[0].Agent.Id != AuthMethodID {
		t.Errorf("initialize = %+v", init)
	}
	if _, err := e.conn.Authenticate(ctx, sdk.AuthenticateRequest{MethodId: AuthMethodID}); err != nil {
		t.Errorf("authenticate with a key: %v", err)
	}
	sess, err := e.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: ws, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	cmds := e.c.waitFor(t, "available_commands_update", func(u sdk.SessionUpdate) bool { return u.AvailableCommandsUpdate != nil })
	if len(cmds.AvailableCommandsUpdate.AvailableCommands) != len(commands) || len(commands) != 7 {
		t.Errorf("commands = %+v", cmds.AvailableCommandsUpdate.AvailableCommands)
	}

	// A turn with a read: the tool call with its kind and location, the answer, the usage.
	res, err := e.conn.Prompt(ctx, prompt(sess.SessionId, "What does notes.txt say?"))
	if err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	tc := e.c.waitFor(t, "tool_call", func(u sdk.SessionUpdate) bool { return u.ToolCall != nil })
	if tc.ToolCall.Kind != sdk.ToolKindRead || len(tc.ToolCall.Locations) != 1 || tc.ToolCall.Locations[0].Path != filepath.Join(ws, "notes.txt") {
		t.Errorf("tool_call = %+v", tc.ToolCall)
	}
	e.c.waitFor(t, "tool_call_update completed", func(u sdk.SessionUpdate) bool {
		return u.ToolCallUpdate != nil && u.ToolCallUpdate.Status != nil && *u.ToolCallUpdate.Status == sdk.ToolCallStatusCompleted
	})
	if got := messageText(e.c.all(), 0); !strings.Contains(got, "The notes say to remember the milk.") {
		t.Errorf("message = %q", got)
	}
	u := e.c.waitFor(t, "usage_update", func(u sdk.SessionUpdate) bool { return u.UsageUpdate != nil && u.UsageUpdate.Used > 0 })
	if u.UsageUpdate.Size <= 0 || u.UsageUpdate.Cost == nil || u.UsageUpdate.Cost.Currency != "USD" {
		t.Errorf("usage_update = %+v", u.UsageUpdate)
	}

	// Permission, both ways.
	e.c.answers = []string{optionAllowOnce}
	if res, err := e.conn.Prompt(ctx, prompt(sess.SessionId, "write it")); err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(ws, "out.txt")); err != nil {
		t.Errorf("the allowed command did not run: %v", err)
	}
	if len(e.c.asked) != 1 || len(e.c.asked[0].Options) != 3 || e.c.asked[0].Options[2].Kind != sdk.PermissionOptionKindRejectOnce {
		t.Errorf("permission requests = %+v", e.c.asked)
	}
	e.c.answers = []string{optionReject}
	if _, err := e.conn.Prompt(ctx, prompt(sess.SessionId, "write another")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(ws, "no.txt")); err == nil {
		t.Error("the rejected command ran")
	}

	// /compact lowers the usage; /checkpoints and /context answer.
	before := e.c.all()
	used := 0
	for _, n := range before {
		if n.Update.UsageUpdate != nil {
			used = n.Update.UsageUpdate.Used
		}
	}
	from := len(before)
	if res, err := e.conn.Prompt(ctx, prompt(sess.SessionId, "/compact the notes")); err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("/compact: %+v %v", res, err)
	}
	after := e.c.all()[from:]
	var compactStarted, compactDone bool
	lowered := 0
	for _, n := range after {
		if n.Update.ToolCall != nil && strings.HasPrefix(n.Update.ToolCall.Title, "Compacting the context") {
			compactStarted = true
		}
		if up := n.Update.ToolCallUpdate; up != nil && up.Status != nil && *up.Status == sdk.ToolCallStatusCompleted && strings.HasPrefix(string(up.ToolCallId), "compaction") {
			compactDone = true
		}
		if n.Update.UsageUpdate != nil {
			lowered = n.Update.UsageUpdate.Used
		}
	}
	var plan []sdk.PlanEntry
	for _, n := range after {
		if n.Update.Plan != nil {
			plan = n.Update.Plan.Entries
		}
	}
	if len(plan) != 2 || plan[0].Content != "buy the milk" {
		t.Errorf("plan after /compact = %+v", plan)
	}
	if !compactStarted || !compactDone || lowered == 0 || lowered >= used {
		t.Errorf("/compact: started %v, done %v, usage %d → %d", compactStarted, compactDone, used, lowered)
	}
	from = len(e.c.all())
	e.conn.Prompt(ctx, prompt(sess.SessionId, "/checkpoints"))
	if got := messageText(e.c.all(), from); !strings.Contains(got, "Checkpoint 1: Read the notes") {
		t.Errorf("/checkpoints = %q", got)
	}
	from = len(e.c.all())
	e.conn.Prompt(ctx, prompt(sess.SessionId, "/context"))
	// Three prompts, each a tool call and an answer: two model calls a turn. Slash commands are
	// no turns.
	if got := messageText(e.c.all(), from); !strings.Contains(got, "| System prompt |") || !strings.Contains(got, "| Messages |") ||
		!strings.Contains(got, "Session: 3 turn(s) · 6 model call(s) · ") {
		t.Errorf("/context = %q", got)
	}

	// Bad input: errors, and the agent stays up.
	if _, err := e.conn.Prompt(ctx, prompt("nope", "hi")); err == nil || !strings.Contains(err.Error(), "unknown session") {
		t.Errorf("prompt on an unknown session: %v", err)
	}
	if _, err := e.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: "relative/dir", McpServers: []sdk.McpServer{}}); err == nil {
		t.Error("a relative cwd was accepted")
	}
	// A session id is a path under the store: one that climbs out is refused before any file.
	for _, bad := range []string{"../../etc", "a/b", ".."} {
		if _, err := e.conn.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: sdk.SessionId(bad), Cwd: ws, McpServers: []sdk.McpServer{}}); err == nil || !strings.Contains(err.Error(), "invalid sessionId") {
			t.Errorf("load %q: %v", bad, err)
		}
	}

	// A second agent on the same state home loads the session and replays it.
	e.stop()
	e2 := start(t, model, ws, home, true)
	if _, err := e2.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	if _, err := e2.conn.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: sess.SessionId, Cwd: ws, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	var user, answer bool
	for _, n := range e2.c.all() {
		if m := n.Update.UserMessageChunk; m != nil && m.Content.Text != nil && m.Content.Text.Text == "What does notes.txt say?" {
			user = true
		}
		if m := n.Update.AgentMessageChunk; m != nil && m.Content.Text != nil && strings.Contains(m.Content.Text.Text, "remember the milk") {
			answer = true
		}
	}
	if !user || !answer {
		t.Errorf("replay: user message %v, answer %v", user, answer)
	}
}

func TestACPAuthenticateWithoutKey(t *testing.T) {
	model := geminitest.New(geminitest.Script{})
	t.Cleanup(model.Close)
	e := start(t, model, t.TempDir(), t.TempDir(), false)
	_, err := e.conn.Authenticate(t.Context(), sdk.AuthenticateRequest{MethodId: AuthMethodID})
	if err == nil || !strings.Contains(err.Error(), "GEMINI_API_KEY") {
		t.Errorf("authenticate without a key: %v", err)
	}
}

// TestACPCancel: session/cancel mid-turn ends the prompt with cancelled.
func TestACPCancel(t *testing.T) {
	e, id, running := sleeper(t, "never")
	ctx := t.Context()
	type result struct {
		res sdk.PromptResponse
		err error
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		res, err := e.conn.Prompt(ctx, prompt(id, "sleep"))
		done <- result{res, err}
	}()
	await(t, "the command started", running)
	if err := e.conn.Cancel(ctx, sdk.CancelNotification{SessionId: id}); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || r.res.StopReason != sdk.StopReasonCancelled {
		t.Fatalf("prompt = %+v, %v; want cancelled", r.res, r.err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the cancel took %v", d)
	}
	// The command's tool call ends failed, not left running.
	e.c.waitFor(t, "the cancelled tool call closed", func(u sdk.SessionUpdate) bool {
		return u.ToolCallUpdate != nil && u.ToolCallUpdate.Status != nil && *u.ToolCallUpdate.Status == sdk.ToolCallStatusFailed
	})
}

// TestACPClientFiles: with fs offered, read_file sees the editor's unsaved buffer, and an edit,
// written to disk by the file tools, is pushed to the editor's buffer too.
func TestACPClientFiles(t *testing.T) {
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("on disk\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "b.txt"), []byte("one\ntwo\n"), 0o644)
	model := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{
		call("read_file", map[string]any{"path": "a.txt"}),
		call("edit_file", map[string]any{"path": "b.txt", "old": "two", "new": "TWO"}),
		text("ok"),
	}})
	t.Cleanup(model.Close)
	e := start(t, model, ws, t.TempDir(), true)
	e.c.buffers = map[string]string{filepath.Join(ws, "a.txt"): "unsaved in the editor\n"}
	id := e.open(sdk.ClientCapabilities{Fs: sdk.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}})
	if _, err := e.conn.Prompt(t.Context(), prompt(id, "read and edit")); err != nil {
		t.Fatal(err)
	}
	var read string
	var diff *sdk.ToolCallContentDiff
	for _, n := range e.c.all() {
		if up := n.Update.ToolCallUpdate; up != nil {
			if out, ok := up.RawOutput.(map[string]any); ok && read == "" {
				read, _ = out["output"].(string)
			}
			for _, c := range up.Content {
				if c.Diff != nil {
					diff = c.Diff
				}
			}
		}
	}
	if !strings.Contains(read, "unsaved in the editor") {
		t.Errorf("read_file = %q: want the editor's buffer", read)
	}
	if diff == nil || diff.Path != filepath.Join(ws, "b.txt") || diff.NewText != "one\nTWO\n" || diff.OldText == nil || *diff.OldText != "one\ntwo\n" {
		t.Errorf("the edit's diff = %+v", diff)
	}
	e.c.mu.Lock()
	pushed := e.c.written[filepath.Join(ws, "b.txt")]
	e.c.mu.Unlock()
	if pushed != "one\nTWO\n" {
		t.Errorf("fs/write_text_file got %q", pushed)
	}
}

// TestACPPromptReplaces: a prompt sent while another runs replaces it, as ACP clients expect:
// the first ends cancelled, the second runs.
func TestACPPromptReplaces(t *testing.T) {
	e, id, running := sleeper(t, "second answer")
	ctx := t.Context()
	first := make(chan sdk.StopReason, 1)
	go func() {
		res, _ := e.conn.Prompt(ctx, prompt(id, "sleep"))
		first <- res.StopReason
	}()
	await(t, "the first prompt's command started", running)
	res, err := e.conn.Prompt(ctx, prompt(id, "something else"))
	if err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("second prompt = %+v, %v", res, err)
	}
	if r := <-first; r != sdk.StopReasonCancelled {
		t.Errorf("first prompt ended %q, want cancelled", r)
	}
}

// TestACPMCP: the MCP servers a client passes run, their values taken as the client resolved
// them; their tool calls are asked through session/request_permission; one that cannot start is
// reported once the client knows the session.
func TestACPMCP(t *testing.T) {
	ws := t.TempDir()
	model := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{call("docs__leak", map[string]any{}), text("ok")}})
	t.Cleanup(model.Close)
	e := start(t, model, ws, t.TempDir(), true)
	ctx := t.Context()
	servers := []sdk.McpServer{
		{Stdio: &sdk.McpServerStdio{Name: "docs", Command: os.Args[0], Args: []string{},
			Env: []sdk.EnvVariable{{Name: mcptest.Env, Value: "stdio"}, {Name: mcptest.LeakEnv, Value: "${not-expanded}"}}}},
		{Stdio: &sdk.McpServerStdio{Name: "broken", Command: filepath.Join(ws, "no-such-server"), Args: []string{}, Env: []sdk.EnvVariable{}}},
	}
	id := e.open(sdk.ClientCapabilities{}, servers...)
	e.c.waitFor(t, "the broken server reported", func(u sdk.SessionUpdate) bool {
		m := u.AgentMessageChunk
		return m != nil && m.Content.Text != nil && strings.Contains(m.Content.Text.Text, `MCP server "broken" did not start`)
	})
	e.c.answers = []string{optionAllowOnce}
	if _, err := e.conn.Prompt(ctx, prompt(id, "leak")); err != nil {
		t.Fatal(err)
	}
	if len(e.c.asked) != 1 || !strings.Contains(*e.c.asked[0].ToolCall.Title, "MCP tool docs__leak") {
		t.Errorf("permission requests = %+v", e.c.asked)
	}
	up := e.c.waitFor(t, "the tool's result", func(u sdk.SessionUpdate) bool {
		return u.ToolCallUpdate != nil && u.ToolCallUpdate.Status != nil && *u.ToolCallUpdate.Status == sdk.ToolCallStatusCompleted
	})
	if out, _ := up.ToolCallUpdate.RawOutput.(map[string]any); out["output"] != "the token is ${not-expanded}" {
		t.Errorf("result = %v", up.ToolCallUpdate.RawOutput)
	}
}

// TestACPSandboxNotice: where commands cannot be sandboxed, the client's user is told once per
// connection, not once per session, and commands are then asked.
func TestACPSandboxNotice(t *testing.T) {
	t.Setenv(sandbox.UnavailableEnv, "simulated: no Landlock")
	model := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{call("run_command", map[string]any{"command": "go vet ./..."}), text("done")}})
	t.Cleanup(model.Close)
	e := start(t, model, t.TempDir(), t.TempDir(), true)
	id := e.open(sdk.ClientCapabilities{})
	e.c.waitFor(t, "the sandbox notice", func(u sdk.SessionUpdate) bool {
		return u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil &&
			strings.Contains(u.AgentMessageChunk.Content.Text.Text, "cannot be sandboxed here")
	})
	if _, err := e.conn.Prompt(t.Context(), prompt(id, "vet it")); err != nil {
		t.Fatal(err)
	}
	e.c.mu.Lock()
	asked := len(e.c.asked)
	e.c.mu.Unlock()
	if asked != 1 {
		t.Errorf("the allowlisted go vet was asked %d times, want once: nothing is sandboxed", asked)
	}
	second, err := e.conn.NewSession(t.Context(), sdk.NewSessionRequest{Cwd: e.ws, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	// The notice would come before the session's commands: once they are there, it did not.
	deadline := time.After(20 * time.Second)
	for {
		var notices, seen int
		for _, n := range e.c.all() {
			if m := n.Update.AgentMessageChunk; m != nil && m.Content.Text != nil && strings.Contains(m.Content.Text.Text, "cannot be sandboxed here") {
				notices++
			}
			if n.SessionId == second.SessionId && n.Update.AvailableCommandsUpdate != nil {
				seen++
			}
		}
		if seen > 0 {
			if notices != 1 {
				t.Errorf("the notice was sent %d times, want once per connection", notices)
			}
			return
		}
		select {
		case <-e.c.notify:
		case <-deadline:
			t.Fatal("the second session's commands never came")
		}
	}
}
