package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/gemini"
	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/contextwin"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// cachingSpec is a session over ws whose implicit hits all miss, so that it puts its prefix in an
// explicit cache: eight files of 4,000 characters, a cache minimum of 512 tokens.
func cachingSpec(t *testing.T, ws string) Spec {
	t.Helper()
	for i := range 8 {
		content := strings.Repeat(fmt.Sprintf("file %d holds a line of text\n", i), 140)
		if err := os.WriteFile(filepath.Join(ws, fmt.Sprintf("f%d.txt", i)), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cat, err := catalog.Builtin().Overlay(map[string]json.RawMessage{"gemini-3.8-flash": json.RawMessage(`{"cacheMinTokens": 512}`)})
	if err != nil {
		t.Fatal(err)
	}
	p := contextwin.DefaultPolicy()
	p.ContextBudget, p.ExplicitCache = 200_000, true
	return Spec{Workspace: ws, Model: "gemini-3.8-flash", Config: agent.Config{ContextPolicy: p, Catalog: cat}}
}

// readingTurns read the eight files of cachingSpec, then answer.
func readingTurns() []geminitest.Turn {
	var turns []geminitest.Turn
	for i := range 8 {
		turns = append(turns, geminitest.Turn{Parts: []geminitest.Part{{FunctionCall: &geminitest.FunctionCall{Name: "read_file", Args: map[string]any{"path": fmt.Sprintf("f%d.txt", i)}}}}})
	}
	return append(turns, geminitest.Turn{Parts: []geminitest.Part{{Text: "read"}}})
}

// crashedSession runs a session that makes an explicit cache, then ends as a crash would: its log
// closed (its lock freed), its cache not deleted, in another process (a runner of its own). It
// returns the session's id.
func crashedSession(t *testing.T, h *Runner, srv *geminitest.Server, spec Spec) string {
	t.Helper()
	srv.Append(readingTurns()...)
	other := &Runner{StateHome: h.StateHome, Models: h.Models}
	o, err := other.Open(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range o.Run(t.Context(), "read the eight files") {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := o.Log.Close(); err != nil {
		t.Fatal(err)
	}
	return o.ID()
}

// liveCaches are the display names of the caches alive on the fake, through the real client.
func liveCaches(t *testing.T, srv *geminitest.Server) []string {
	t.Helper()
	c, err := gemini.New(t.Context(), gemini.Config{APIKey: "k", BaseURL: srv.URL(), Model: "gemini-3.8-flash"})
	if err != nil {
		t.Fatal(err)
	}
	caches, err := c.Caches(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, cc := range caches {
		out = append(out, cc.DisplayName)
	}
	slices.Sort(out)
	return out
}

// othersCaches makes the caches that are not this workspace's to delete: another tool's, and one
// named after a session of another workspace.
func othersCaches(t *testing.T, srv *geminitest.Server) []string {
	t.Helper()
	c, err := gemini.New(t.Context(), gemini.Config{APIKey: "k", BaseURL: srv.URL(), Model: "gemini-3.8-flash"})
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"another tool's cache", agent.CacheDisplayName("20261130-101010-abcdef")}
	big := []*genai.Content{genai.NewContentFromText(strings.Repeat("shared context ", 400), genai.RoleUser)}
	for _, n := range names {
		if _, err := c.CreateCache(t.Context(), gemini.CacheSpec{Contents: big, TTL: 10 * time.Minute, DisplayName: n}); err != nil {
			t.Fatal(err)
		}
	}
	return names
}

// TestResumeDeletesTheCachesACrashLeft: a session that crashed with an explicit cache alive gets
// it deleted when it is resumed, through the real genai client; other tools' caches and other
// sessions' stay.
func TestResumeDeletesTheCachesACrashLeft(t *testing.T) {
	srv := geminitest.New(geminitest.Script{Cache: geminitest.Cache{MissRate: 1, MinTokens: 512}})
	defer srv.Close()
	h := newHost(t, srv, t.TempDir())
	spec := cachingSpec(t, t.TempDir())
	others := othersCaches(t, srv)
	id := crashedSession(t, h, srv, spec)
	if got := liveCaches(t, srv); !slices.Contains(got, agent.CacheDisplayName(id)) {
		t.Fatalf("the crashed session left no cache alive: %q", got)
	}
	o, err := h.Resume(context.WithoutCancel(t.Context()), id, spec)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background(), o.ID())
	want := slices.Sorted(slices.Values(others))
	if got := liveCaches(t, srv); !slices.Equal(got, want) {
		t.Errorf("caches alive after the resume: %q, want only %q", got, want)
	}
}

// TestSweepDeletesWhatEndedSessionsLeft: at a server's start, the caches of this workspace's
// sessions that no process has open are deleted; an open session's cache, another tool's and
// another workspace's session's stay.
func TestSweepDeletesWhatEndedSessionsLeft(t *testing.T) {
	srv := geminitest.New(geminitest.Script{Cache: geminitest.Cache{MissRate: 1, MinTokens: 512}})
	defer srv.Close()
	h := newHost(t, srv, t.TempDir())
	spec := cachingSpec(t, t.TempDir())
	others := othersCaches(t, srv)
	crashed := crashedSession(t, h, srv, spec)
	srv.Append(readingTurns()...)
	open, err := h.Open(t.Context(), spec) // open in this process: its log holds its lock
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background(), open.ID())
	for _, err := range open.Run(t.Context(), "read the eight files") {
		if err != nil {
			t.Fatal(err)
		}
	}
	deleted, err := h.SweepCaches(t.Context(), spec, func(string) bool { return false })
	if err != nil || len(deleted) != 1 {
		t.Errorf("deleted %q (%v), want the crashed session's cache", deleted, err)
	}
	want := slices.Sorted(slices.Values(append(others, agent.CacheDisplayName(open.ID()))))
	if got := liveCaches(t, srv); !slices.Equal(got, want) {
		t.Errorf("caches alive after the sweep: %q, want %q (not %s's)", got, want, crashed)
	}
}
