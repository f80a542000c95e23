package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/reprise-dev/reprise/acp"
	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/gemini"
	"github.com/reprise-dev/reprise/agent/sandbox"
	"github.com/reprise-dev/reprise/agent/secret"
	"github.com/reprise-dev/reprise/contextwin"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// acpCmd runs Reprise as an Agent Client Protocol agent on stdin/stdout, for the editors that
// host ACP agents. The settings are flags: ACP has no settings channel.
func acpCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) error {
	policy := contextwin.DefaultPolicy()
	var allow listFlag
	fs := withUsage(flag.NewFlagSet("reprise acp", flag.ContinueOnError), "Usage: reprise acp [flags]")
	model := fs.String("model", catalog.Builtin().DefaultModel(), "Gemini model (reprise models lists them)")
	fs.IntVar(&policy.ContextBudget, "budget", policy.ContextBudget, "context budget in tokens (capped by the model's input limit)")
	fs.IntVar(&policy.KeepRecentTurns, "keep-recent", policy.KeepRecentTurns, "model calls, with their tool results, kept verbatim by a compaction")
	fs.Float64Var(&policy.CompactAt, "compact-at", policy.CompactAt, "start compacting when the prompt passes this fraction of the budget")
	fs.Float64Var(&policy.BlockAt, "block-at", policy.BlockAt, "wait for the compaction at this fraction of the budget")
	explicitCacheFlags(fs, &policy, true)
	fs.Var(&allow, "allow", "allow commands starting with PATTERN without asking (repeatable; * globs)")
	box := fs.String("sandbox", string(sandbox.WorkspaceWrite), `"workspace-write" or "off"`)
	network := fs.Bool("allow-network", false, "let sandboxed commands open network connections")
	var hide listFlag
	fs.Var(&hide, "hide-path", "a file or directory sandboxed commands may not read, besides the credential files (repeatable; ~/ is home)")
	var read listFlag
	fs.Var(&read, "read-path", "a file or directory under your home that sandboxed commands may read, besides the toolchains' (repeatable; ~/ is home)")
	pricesFile := fs.String("prices", "", "JSON file of prices per million tokens by model, over the model catalogue's")
	thinkingFlag := fs.String("thinking", catalog.Auto, thinkingUsage)
	compactionModel := fs.String("compaction-model", "", compactionModelUsage)
	var subagents subagentFlags
	subagents.register(fs)
	var provider providerFlags
	provider.register(fs)
	compactionTier := fs.String("compaction-tier", string(catalog.TierStandard), compactionTierUsage)
	verbose := fs.Bool("verbose", false, "log debug messages to stderr")
	maxTurn := fs.Int("max-turn-requests", agent.DefaultMaxTurnRequests, "model calls one turn may make before it stops")
	allowBroad := fs.Bool("allow-broad-workspace", false, "let a session's cwd be the file system's root, your home directory, a system directory or the temp directory")
	idleAfter := idleAfterFlag(fs)
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "reprise acp: unexpected argument %q (the settings are flags)\n", fs.Arg(0))
		return errUsage
	}
	if err := checkACPFlags(&policy, compactionModel, *compactionTier, *maxTurn, *model, *thinkingFlag, *idleAfter); err != nil {
		fmt.Fprintln(stderr, "reprise acp:", err)
		return errUsage
	}
	mode, err := sandbox.ParseMode(*box)
	sub, serr := subagents.settings()
	if err = cmp.Or(err, serr, provider.check()); err != nil {
		fmt.Fprintln(stderr, "reprise acp:", err)
		return errUsage
	}
	prices, err := loadPrices(*pricesFile)
	if err != nil {
		return err
	}
	logger := stderrLogger(stderr, *verbose)
	home, err := stateHome(getenv)
	if err != nil {
		return err
	}
	return acp.Serve(ctx, stdin, stdout, acp.Options{
		Version:             currentBuild().Version,
		NewModel:            modelFactory(provider, getenv, logger),
		Model:               *model,
		HasKey:              acpHasKey(provider, getenv, logger),
		StateHome:           home,
		ConfigHome:          configHome(getenv),
		ContextPolicy:       policy,
		Prices:              prices,
		Thinking:            *thinkingFlag,
		CompactionModel:     *compactionModel,
		Subagents:           sub,
		Observe:             observeSessions,
		ObserveEvents:       observeEvents,
		MaxTurnRequests:     *maxTurn,
		Allow:               allow,
		Sandbox:             sandbox.Config{Mode: mode, AllowNetwork: *network, HidePaths: hide, ReadPaths: read},
		Secrets:             secret.FromEnv(getenv, hide...),
		Logger:              logger,
		AllowBroadWorkspace: *allowBroad,
		IdleAfter:           *idleAfter,
	})
}

// checkACPFlags checks the flags of acp that have a range, in the words of the command line; it
// puts --compaction-tier in the policy.
func checkACPFlags(policy *contextwin.Policy, compactionModel *string, compactionTier string, maxTurn int, model, thinking string, idleAfter time.Duration) error {
	if err := compactionFlags(compactionModel, compactionTier, policy); err != nil {
		return err
	}
	if err := policy.Validate(); err != nil {
		return errors.New(policyError(err))
	}
	if maxTurn < 1 {
		return errors.New("--max-turn-requests must be at least 1")
	}
	if idleAfter < 0 {
		return errors.New("--idle-after must not be negative (0: never)")
	}
	if _, err := catalog.Builtin().Thinking(model, thinking); err != nil {
		return fmt.Errorf("--thinking: %w", err)
	}
	return nil
}

// stderrLogger logs warnings to stderr, and debug messages too when verbose.
func stderrLogger(stderr io.Writer, verbose bool) *slog.Logger {
	level := slog.LevelWarn
	if verbose {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
}

// acpHasKey tells whether the model's key is set, warning about a Gemini base URL that looks
// wrong; another provider's key is checked by its server (a local one needs none).
func acpHasKey(p providerFlags, getenv func(string) string, logger *slog.Logger) bool {
	if p.provider == providerOpenAI {
		return true
	}
	cfg := gemini.ConfigFromEnv(getenv)
	if w := gemini.CheckBaseURL(cfg.BaseURL); w != "" {
		logger.Warn(w)
	}
	return cfg.APIKey != "" || cfg.Vertex
}
