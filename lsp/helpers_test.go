package lsp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/gemini"
	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/contextwin/catalog"
	"github.com/reprise-dev/reprise/lsp/lsptest"
)

// env is one server under test: a workspace, the fake model and the fake editor.
type env struct {
	t    *testing.T
	ws   string
	home string // the state home: sessions are saved under it
	srv  *geminitest.Server
	ed   *lsptest.Editor
	ctx  context.Context
}

type envOpts struct {
	files   map[string]string
	editor  lsptest.Options
	watch   bool
	noInit  bool
	retries gemini.Config // delays for the model client
	// newModel replaces the fake model's factory.
	newModel func(ctx context.Context, model string) (agent.Model, int, error)
	// providerModel is Options.NewProviderModel (nil: none).
	providerModel func(ctx context.Context, p ModelProvider, model string) (agent.Model, int, error)
	// providerLister is Options.ListProviderModels (nil: none).
	providerLister func(ctx context.Context, p ModelProvider) ([]catalog.Listed, error)
	limits         limits
	// server is called with the server before it reads its first message.
	server func(*server)
	// configHome is Options.ConfigHome ("" = none).
	configHome string
	// userSettings is Options.UserSettings ("" = none).
	userSettings string
	// routes answer a model with another (geminitest.Script.Routes).
	routes map[string]geminitest.Route
	// root is the workspace the editor sends ("" = the test's workspace directory).
	root string
	// models are what the fake lists (geminitest.Script.Models; nil: the catalogue's).
	models []string
	// listModels replaces the lister of reprise.models (default: the fake's list, cached).
	listModels func(ctx context.Context, refresh bool) ([]catalog.Listed, time.Time, bool, error)
	// ws and home, when set, are the workspace and the state home of an earlier env (restart).
	ws, home string
}

// newEnv starts the real server over a pipe against a scripted model.
func newEnv(t *testing.T, o envOpts, turns ...geminitest.Turn) *env {
	t.Helper()
	ws := cmp.Or(o.ws, t.TempDir())
	for name, content := range o.files {
		p := filepath.Join(ws, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := geminitest.New(geminitest.Script{Turns: turns, Routes: o.routes, Models: o.models})
	t.Cleanup(srv.Close)
	home := cmp.Or(o.home, t.TempDir())
	factory := fakeModel(srv.URL(), o.retries)
	if o.newModel != nil {
		factory = o.newModel
	}
	lister := o.listModels
	if lister == nil {
		cache := t.TempDir()
		lister = func(ctx context.Context, refresh bool) ([]catalog.Listed, time.Time, bool, error) {
			l, cached, err := gemini.ListModelsCached(ctx, gemini.Config{APIKey: "test-key", BaseURL: srv.URL(), CacheDir: cache}, time.Now(), refresh)
			return l.Models, l.Fetched, cached, err
		}
	}
	serve := func(ctx context.Context, rwc io.ReadWriteCloser) error {
		return Serve(ctx, rwc, Options{
			Version:            "test",
			NewModel:           factory,
			ListModels:         lister,
			NewProviderModel:   o.providerModel,
			ListProviderModels: o.providerLister,
			StateHome:          home,
			ConfigHome:         o.configHome,
			UserSettings:       o.userSettings,
			Logger:             slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug})),
			NoWatch:            !o.watch,
			limits:             o.limits,

			testServer: o.server,
		})
	}
	o.editor.Root = ws
	if o.root != "" {
		o.editor.Root = o.root
	}
	ed := lsptest.Pipe(t, serve, o.editor)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	t.Cleanup(cancel)
	e := &env{t: t, ws: ws, home: home, srv: srv, ed: ed, ctx: ctx}
	if !o.noInit {
		if _, err := ed.Initialize(ctx); err != nil {
			t.Fatalf("initialize: %v", err)
		}
	}
	return e
}

// restart shuts the server down as an editor does and starts another on the same workspace and
// state home, with o's options: what the user sees after a reload.
func (e *env) restart(o envOpts, turns ...geminitest.Turn) *env {
	e.t.Helper()
	if err := e.ed.Shutdown(e.ctx); err != nil {
		e.t.Fatalf("shutdown: %v", err)
	}
	if code, err := e.ed.Wait(e.ctx); code != 0 || err != nil {
		e.t.Fatalf("the first server ended with %d, %v", code, err)
	}
	o.ws, o.home = e.ws, e.home
	return newEnv(e.t, o, turns...)
}

func fakeModel(url string, c gemini.Config) func(ctx context.Context, model string) (agent.Model, int, error) {
	return func(ctx context.Context, model string) (agent.Model, int, error) {
		c := c // each call its own: two may run at once
		c.APIKey, c.BaseURL, c.Model = "test-key", url, model
		if c.BaseDelay == 0 {
			c.BaseDelay, c.MaxDelay = time.Millisecond, 10*time.Millisecond
		}
		client, err := gemini.New(ctx, c)
		if err != nil {
			return nil, 0, err
		}
		limit, _ := client.InputTokenLimit(ctx)
		return client, limit, nil
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// ask sends reprise.ask and returns the session id.
func (e *env) ask(text, sessionID string) string {
	e.t.Helper()
	var res SessionResult
	if err := e.ed.Execute(e.ctx, CommandAsk, AskArgs{Text: text, SessionID: sessionID}, &res); err != nil {
		e.t.Fatalf("reprise.ask: %v", err)
	}
	if res.SessionID == "" {
		e.t.Fatal("reprise.ask returned no session id")
	}
	return res.SessionID
}

// turnEnd waits for the session's next turn_end and decodes it.
func (e *env) turnEnd(id string) sessionUpdateParams {
	e.t.Helper()
	raw, err := e.ed.AwaitTurnEnd(e.ctx, id)
	if err != nil {
		e.t.Fatal(err)
	}
	var p sessionUpdateParams
	if err := json.Unmarshal(raw, &p); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// updates returns the session's sessionUpdate notifications of a kind.
func (e *env) updates(id, kind string) []update {
	var out []update
	for _, raw := range e.ed.Notifications(MethodSessionUpdate) {
		var p sessionUpdateParams
		if json.Unmarshal(raw, &p) == nil && p.SessionID == id && (kind == "" || p.Update.SessionUpdate == kind) {
			out = append(out, p.Update)
		}
	}
	return out
}

func (e *env) usages(id string) []contextUsageParams {
	var out []contextUsageParams
	for _, raw := range e.ed.Notifications(MethodContextUsage) {
		var p contextUsageParams
		if json.Unmarshal(raw, &p) == nil && p.SessionID == id {
			out = append(out, p)
		}
	}
	return out
}

// rpcError extracts a JSON-RPC error's code and message.
func rpcError(t *testing.T, err error) (int, string) {
	t.Helper()
	var re *jsonrpc2.Error
	if !errors.As(err, &re) {
		t.Fatalf("want a JSON-RPC error, got %T %v", err, err)
	}
	return int(re.Code), re.Message
}

func call(name string, args map[string]any) geminitest.Turn {
	return geminitest.Turn{Parts: []geminitest.Part{{FunctionCall: &geminitest.FunctionCall{Name: name, Args: args}}}}
}

func text(s string) geminitest.Turn {
	return geminitest.Turn{Parts: []geminitest.Part{{Text: s}}, Chunks: 2}
}

func withUsage(t geminitest.Turn, prompt int) geminitest.Turn {
	t.Usage = &geminitest.Usage{Prompt: prompt, Candidates: 10}
	return t
}

// requestText returns every text and function response of a model request, flattened.
func requestText(r geminitest.Request) string {
	var b strings.Builder
	for _, c := range r.Contents {
		for _, p := range c.Parts {
			b.WriteString(p.Text)
			if p.FunctionResponse != nil {
				out, _ := json.Marshal(p.FunctionResponse.Response)
				b.Write(out)
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}
