package runner

import (
	"context"
	"fmt"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// subagentModel builds the client subagents run on into opts: the subagentModel setting, else
// the catalogue's choice (a cheaper current model, at the thinking its provider advises for
// agentic use). The session's own model needs no client of its own. A model the user named that
// the API does not serve fails the session, as compactionModel does; the catalogue's choice
// failing leaves subagents on the session's model, with a warning in the log.
func (r *Runner) subagentModel(ctx context.Context, id, model string, spec Spec, opts *agent.Options) error {
	if spec.Subagents.Off {
		return nil
	}
	cat := spec.Catalog
	if cat == nil {
		cat = catalog.Builtin()
	}
	name, thinking := spec.Subagents.Model, catalog.Auto
	chosen := name != ""
	if !chosen {
		name, thinking = cat.SubagentModel()
	}
	if cat.Same(name, model) {
		return nil
	}
	client, limit, err := r.Models(ctx, name)
	if err != nil {
		if chosen {
			return ModelError{fmt.Errorf("subagentModel %s: %w", name, err)}
		}
		if spec.Logger != nil {
			spec.Logger.Warn("subagents run on the session's model: the catalogue's subagent model is not available", "session", id, "model", name, "error", err)
		}
		return nil
	}
	choice, err := cat.Thinking(name, thinking)
	if err != nil {
		choice, _ = cat.Thinking(name, catalog.Auto)
	}
	opts.SubagentModel, opts.SubagentModelName, opts.SubagentInputLimit, opts.SubagentThinking = client, name, limit, choice
	return nil
}

// subagentLogs saves a session's subagents in its store, each a session of its own whose meta
// names its parent.
func subagentLogs(st *journal.Store) func(journal.Meta) (agent.SubagentLog, error) {
	return func(m journal.Meta) (agent.SubagentLog, error) { return st.Create(m) }
}
