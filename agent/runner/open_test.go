package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/gemini"
	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/agent/mcp"
	"github.com/reprise-dev/reprise/agent/sandbox/sandboxtest"
	"github.com/reprise-dev/reprise/agent/tools"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

// fakeMCP records how it was started: with the request's context, before the session declared
// its tools.
type fakeMCP struct {
	startCtx context.Context
	declared bool
	closed   int
}

func (f *fakeMCP) Close() error                { f.closed++; return nil }
func (f *fakeMCP) Servers() []mcp.ServerStatus { return nil }
func (f *fakeMCP) CatalogTokens() int          { return 0 }

func (f *fakeMCP) Start(ctx context.Context) error { f.startCtx = ctx; return ctx.Err() }
func (f *fakeMCP) Declarations() []*genai.FunctionDeclaration {
	f.declared = f.startCtx != nil
	return nil
}
func (f *fakeMCP) Lookup(string, map[string]any) (tools.ExternalTool, bool) {
	return tools.ExternalTool{}, false
}
func (f *fakeMCP) Call(context.Context, string, map[string]any) (string, bool) { return "", true }

func newHost(t *testing.T, srv *geminitest.Server, home string) *Runner {
	return &Runner{StateHome: home, Models: func(ctx context.Context, name string) (agent.Model, int, error) {
		c, err := gemini.New(ctx, gemini.Config{APIKey: "k", BaseURL: srv.URL(), Model: name})
		if err != nil {
			return nil, 0, err
		}
		limit, err := c.InputTokenLimit(ctx)
		return c, limit, err
	}}
}

// TestHostOpensAndResumes: a session opened lazily is on disk only after its first turn; it
// resumes with the model it was saved with, whatever the spec says; the MCP servers are started
// with the request's context before the session declares them.
func TestHostOpensAndResumes(t *testing.T) {
	srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{{Parts: []geminitest.Part{{Text: "Hello."}}}}})
	defer srv.Close()
	home, ws := t.TempDir(), t.TempDir()
	h := newHost(t, srv, home)
	ext := &fakeMCP{}
	type key struct{}
	ctx := context.WithValue(t.Context(), key{}, "request")
	o, err := h.Open(ctx, Spec{Workspace: ws, Model: "gemini-4-argon", Thinking: "high", Lazy: true, External: ext})
	if err != nil {
		t.Fatal(err)
	}
	if ext.startCtx == nil || ext.startCtx.Value(key{}) != "request" || !ext.declared {
		t.Error("the MCP servers were not started with the request's context before the declarations")
	}
	dir := filepath.Join(journal.WorkspaceDir(home, ws), "sessions", o.ID())
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a lazy session is on disk before its first turn: %v", err)
	}
	for _, err := range o.Run(t.Context(), "hi") {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := h.Close(t.Context(), o.ID()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Errorf("the session is not saved after its turn: %v", err)
	}
	r, err := h.Resume(t.Context(), o.ID(), Spec{Workspace: ws, Model: "gemini-3.8-flash", Thinking: "high"})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background(), r.ID())
	if r.Model != "gemini-4-argon" || r.Context().Model != "gemini-4-argon" {
		t.Errorf("resumed on %s, want the saved gemini-4-argon", r.Model)
	}
}

// TestHostErrors: a model that cannot be built is a ModelError; an unknown session is
// journal.ErrNotFound; without a state home nothing is saved and nothing resumes.
func TestHostErrors(t *testing.T) {
	srv := geminitest.New(geminitest.Script{})
	defer srv.Close()
	h := newHost(t, srv, t.TempDir())
	h.Models = func(context.Context, string) (agent.Model, int, error) { return nil, 0, gemini.ErrNoAPIKey }
	var me ModelError
	if _, err := h.Open(t.Context(), Spec{Workspace: t.TempDir()}); !errors.As(err, &me) || !errors.Is(err, gemini.ErrNoAPIKey) {
		t.Errorf("no key: %v, want a ModelError", err)
	}
	h = newHost(t, srv, t.TempDir())
	if _, err := h.Resume(t.Context(), "20260101-000000-abcdef", Spec{Workspace: t.TempDir()}); !errors.Is(err, journal.ErrNotFound) {
		t.Errorf("unknown session: %v", err)
	}
	unsaved := newHost(t, srv, "")
	o, err := unsaved.Open(t.Context(), Spec{Workspace: t.TempDir()})
	if err != nil || o.Log != nil {
		t.Fatalf("unsaved: %v, log %v", err, o.Log)
	}
	unsaved.Close(t.Context(), o.ID())
	if _, err := unsaved.Resume(t.Context(), o.ID(), Spec{Workspace: t.TempDir()}); !errors.Is(err, ErrNotSaved) {
		t.Errorf("resume without a state home: %v", err)
	}
}
