package main

import (
	"flag"
	"fmt"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// subagentFlags are run's and acp's flags of the task tool, the settings' subagents,
// subagentModel, subagentBudget, subagentParallel and subagentMaxCalls.
type subagentFlags struct {
	on                        bool
	model                     string
	budget, parallel, maxCall int
}

func (f *subagentFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&f.on, "subagents", true, "let the agent hand self-contained investigations to subagents (its task tool): a fresh context, read-only tools, only their report joins the conversation")
	fs.StringVar(&f.model, "subagent-model", "", "model subagents run on (default: the catalogue's choice, a cheaper current model)")
	fs.IntVar(&f.budget, "subagent-budget", 0, "a subagent's context budget in tokens (0: --budget)")
	fs.IntVar(&f.parallel, "subagent-parallel", agent.DefaultSubagentParallel, "subagents running at once")
	fs.IntVar(&f.maxCall, "subagent-max-calls", agent.DefaultSubagentMaxCalls, "model calls one subagent may make")
}

// settings checks the flags and returns them as the session's settings.
func (f *subagentFlags) settings() (agent.SubagentSettings, error) {
	s := agent.SubagentSettings{Off: !f.on, Budget: f.budget, Parallel: f.parallel, MaxCalls: f.maxCall}
	if f.model != "" {
		name, err := catalog.ParseModelName(f.model)
		if err != nil {
			return s, fmt.Errorf("--subagent-model: %w", err)
		}
		s.Model = name
	}
	switch {
	case f.budget != 0 && f.budget < 1000:
		return s, fmt.Errorf("--subagent-budget must be at least 1000 (0: --budget), got %d", f.budget)
	case f.parallel < 1 || f.parallel > agent.MaxSubagentParallel:
		return s, fmt.Errorf("--subagent-parallel must be between 1 and %d, got %d", agent.MaxSubagentParallel, f.parallel)
	case f.maxCall < 1 || f.maxCall > agent.DefaultMaxTurnRequests:
		return s, fmt.Errorf("--subagent-max-calls must be between 1 and %d, got %d", agent.DefaultMaxTurnRequests, f.maxCall)
	}
	return s, nil
}
