package lsp

import (
	"strings"
	"testing"
	"time"

	"github.com/reprise-dev/reprise/contextwin"
	"github.com/reprise-dev/reprise/lsp/lsptest"
)

// TestMaxTurnRequestsSetting: the per-turn cap on model calls is a setting; below 1 it is refused
// with its name and the settings in force stay.
func TestMaxTurnRequestsSetting(t *testing.T) {
	c := config{policy: contextwin.DefaultPolicy()}
	n120, zero := 120, 0
	n, err := c.apply(Settings{MaxTurnRequests: &n120})
	if err != nil || n.maxTurnRequests != 120 {
		t.Fatalf("apply: %v, %d", err, n.maxTurnRequests)
	}
	kept, err := n.apply(Settings{MaxTurnRequests: &zero})
	if err == nil || !strings.Contains(err.Error(), "maxTurnRequests") || kept.maxTurnRequests != 120 {
		t.Errorf("0: %v, kept %d", err, kept.maxTurnRequests)
	}
}

// TestStalePullNeverUndoesAPush: the editor made its answer to a pull, then the user changed a
// setting and the editor pushed it before that answer arrived. The stale answer is dropped: the
// settings in force never go back, even for a moment, to what the user just changed away from.
func TestStalePullNeverUndoesAPush(t *testing.T) {
	pulls := make(chan chan struct{}, 4)
	editor := lsptest.Options{Experimental: true, Settings: map[string]any{"contextBudget": 12000},
		BeforeReply: func(method string) {
			if method != "workspace/configuration" {
				return
			}
			release := make(chan struct{})
			pulls <- release
			select {
			case <-release:
			case <-t.Context().Done():
			}
		}}
	var srv *server
	e := newEnv(t, envOpts{editor: editor, server: func(s *server) { srv = s }})
	next := func(what string) chan struct{} {
		select {
		case r := <-pulls:
			return r
		case <-e.ctx.Done():
			t.Fatalf("no %s", what)
			return nil
		}
	}
	budget := func() int { return srv.cfg.get().policy.ContextBudget }

	first := next("first pull") // its answer, 12000, is made and held
	e.ed.SetSettings(map[string]any{"contextBudget": 20000})
	if err := e.ed.Notify(e.ctx, "workspace/didChangeConfiguration",
		map[string]any{"settings": map[string]any{ConfigSection: map[string]any{"contextBudget": 20000}}}); err != nil {
		t.Fatal(err)
	}
	for budget() != 20000 {
		if e.ctx.Err() != nil {
			t.Fatalf("the push never applied: budget %d", budget())
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(first)
	// The pull asked for by the push starts once the first has been handled.
	second := next("pull after the push")
	if got := budget(); got != 20000 {
		t.Errorf("after the stale answer, budget %d; want the pushed 20000", got)
	}
	close(second)
}

// TestCacheHeadSetting: the head is on by default; cacheHead false leaves it out, and a setting
// left out keeps its value.
func TestCacheHeadSetting(t *testing.T) {
	c := config{policy: contextwin.DefaultPolicy()}
	if c.policy.PlainHead {
		t.Fatal("the head is off by default")
	}
	settings, err := parseSettings([]byte(`{"cacheHead": false}`))
	if err != nil {
		t.Fatal(err)
	}
	n, err := c.apply(settings)
	if err != nil || !n.policy.PlainHead {
		t.Fatalf("apply: %v, %+v", err, n.policy)
	}
	if n, _ = n.apply(Settings{}); !n.policy.PlainHead {
		t.Errorf("a setting left out turned the head back on")
	}
}

// TestExplicitCacheSettings: explicitCache and explicitCacheIdle are settings of the context
// policy, off by default; a setting left out keeps its value.
func TestExplicitCacheSettings(t *testing.T) {
	c := config{policy: contextwin.DefaultPolicy()}
	if c.policy.ExplicitCache || c.policy.ExplicitCacheIdle {
		t.Fatal("explicit caching is on by default")
	}
	settings, err := parseSettings([]byte(`{"explicitCache": true, "explicitCacheIdle": true}`))
	if err != nil {
		t.Fatal(err)
	}
	n, err := c.apply(settings)
	if err != nil || !n.policy.ExplicitCache || !n.policy.ExplicitCacheIdle {
		t.Fatalf("apply: %v, %+v", err, n.policy)
	}
	off := false
	if n, _ = n.apply(Settings{ExplicitCacheIdle: &off}); !n.policy.ExplicitCache || n.policy.ExplicitCacheIdle {
		t.Errorf("explicitCacheIdle off: %+v", n.policy)
	}
}
