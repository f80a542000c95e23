package lsp

import (
	"context"
	"errors"
	"time"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/runner"
)

// sweepCaches deletes, in the background, the explicit caches that sessions of this workspace left
// alive when they ended without deleting them (a crash) and that no process has open, when the
// settings known at start turn explicit caching on: one list call, for the users of the feature.
// Resuming a session deletes its own in any case.
func (s *server) sweepCaches() {
	c := s.cfg.get()
	if !c.policy.ExplicitCache || s.sessions.store == nil {
		return
	}
	s.spawn(func() { // ends with the sweep: bounded by a minute and by the connection
		ctx, cancel := context.WithTimeout(s.ctx, time.Minute)
		defer cancel()
		deleted, err := s.sessions.runner.SweepCaches(ctx, runner.Spec{Workspace: s.root, Model: c.model, Config: agent.Config{Logger: s.log}}, s.sessions.isOpen)
		if me := (runner.ModelError{}); errors.As(err, &me) {
			s.log.Debug("explicit caches not swept: no model client", "error", err)
		}
		if s.onSweep != nil {
			s.onSweep(deleted, err)
		}
	})
}
