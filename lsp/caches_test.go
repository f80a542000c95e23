package lsp

import (
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/gemini"
	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/lsp/lsptest"
)

// TestStartSweepsLeftCaches: a server started with explicit caching on deletes the explicit
// caches that a session of its workspace left when it ended without deleting them (a crash),
// through the real genai client, and leaves alone those of other tools and of sessions it does
// not have.
func TestStartSweepsLeftCaches(t *testing.T) {
	type sweep struct {
		deleted []string
		err     error
	}
	swept := make(chan sweep, 1)
	e := newEnv(t, envOpts{noInit: true, editor: lsptest.Options{InitializationOptions: map[string]any{"explicitCache": true}},
		server: func(s *server) { s.onSweep = func(d []string, err error) { swept <- sweep{d, err} } }})
	st, err := journal.OpenStore(journal.WorkspaceDir(e.home, e.ws))
	if err != nil {
		t.Fatal(err)
	}
	crashed := agent.NewID(time.Now())
	log, err := st.Create(journal.Meta{ID: crashed, Workspace: e.ws, Created: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	log.Close() // what a crash leaves: the log, its lock free
	client, err := gemini.New(e.ctx, gemini.Config{APIKey: "k", BaseURL: e.srv.URL(), Model: "gemini-3.8-flash"})
	if err != nil {
		t.Fatal(err)
	}
	prefix := []*genai.Content{genai.NewContentFromText(strings.Repeat("a stable prefix ", 1500), genai.RoleUser)}
	var left string
	for _, name := range []string{agent.CacheDisplayName(crashed), agent.CacheDisplayName("20261130-101010-abcdef"), "another tool's cache"} {
		c, err := client.CreateCache(e.ctx, gemini.CacheSpec{Contents: prefix, TTL: 10 * time.Minute, DisplayName: name})
		if err != nil {
			t.Fatal(err)
		}
		if name == agent.CacheDisplayName(crashed) {
			left = c.Name
		}
	}
	if _, err := e.ed.Initialize(e.ctx); err != nil {
		t.Fatal(err)
	}
	var got sweep
	select {
	case got = <-swept:
	case <-e.ctx.Done():
		t.Fatal("no sweep at start")
	}
	if got.err != nil || !slices.Equal(got.deleted, []string{left}) {
		t.Errorf("swept %q (%v), want only %s, the crashed session's", got.deleted, got.err, left)
	}
	alive, err := client.Caches(e.ctx, "")
	if err != nil || len(alive) != 2 {
		t.Errorf("%d caches alive after the sweep (%v), want the 2 that are not this workspace's", len(alive), err)
	}
}
