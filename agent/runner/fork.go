package runner

import (
	"context"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/journal"
)

// Fork saves a new session as session parent was at point at (journal.Store.Fork: the
// conversation as the model saw it right after a checkpoint, or just before a turn's message)
// and hosts it, opened like a resumed one with the spec specFor gives for its id (a front-end's
// approvals name the session). The parent, hosted or not, is not touched, and the files on disk
// neither: both sessions go on independently. The caller uses the fork until it calls Release. A
// point the parent does not have is a *journal.ForkError.
func (r *Runner) Fork(ctx context.Context, parent string, at journal.ForkPoint, specFor func(id string) Spec) (*Live, error) {
	id := agent.NewID(r.now())
	spec := specFor(id)
	st, err := r.Store(spec.Workspace)
	switch {
	case err != nil:
		return nil, err
	case st == nil:
		return nil, ErrNotSaved
	}
	if err := st.Fork(parent, at, journal.Meta{ID: id, Created: r.now()}); err != nil {
		return nil, err
	}
	return r.Resume(ctx, id, spec)
}
