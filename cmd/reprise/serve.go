package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/gemini"
	"github.com/reprise-dev/reprise/agent/runner"
	"github.com/reprise-dev/reprise/contextwin/catalog"
	"github.com/reprise-dev/reprise/lsp"
)

// stdio joins stdin and stdout into the server's stream. Closing it closes stdin, which ends a
// blocked read.
type stdio struct {
	io.Reader
	io.Writer
	in io.Closer
}

func (s stdio) Close() error { return s.in.Close() }

// serveCmd runs the editor backend on stdin/stdout. --stdio is accepted and ignored:
// vscode-languageclient appends it.
func serveCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := withUsage(flag.NewFlagSet("reprise serve", flag.ContinueOnError), "Usage: reprise serve [--stdio] [--verbose] [--idle-after DURATION]")
	fs.Bool("stdio", true, "talk JSON-RPC over stdin/stdout (the only transport)")
	verbose := fs.Bool("verbose", false, "log debug messages to stderr")
	idleAfter := idleAfterFlag(fs)
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		return err
	}
	if *idleAfter < 0 {
		fmt.Fprintln(stderr, "reprise serve: --idle-after must not be negative (0: never)")
		return errUsage
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	home, err := stateHome(getenv)
	if err != nil {
		return err
	}
	var warnings []string
	if w := gemini.CheckBaseURL(gemini.ConfigFromEnv(getenv).BaseURL); w != "" {
		logger.Warn(w)
		warnings = append(warnings, w)
	}
	closer, _ := stdin.(io.Closer)
	if closer == nil {
		closer = io.NopCloser(nil)
	}
	err = lsp.Serve(ctx, stdio{Reader: stdin, Writer: stdout, in: closer}, lsp.Options{
		Version:  currentBuild().Version,
		NewModel: geminiFactory(getenv, logger),
		NewProviderModel: func(ctx context.Context, p lsp.ModelProvider, model string) (agent.Model, int, error) {
			flags := providerFlags{provider: p.Name, baseURL: p.BaseURL, keyEnv: cmp.Or(p.KeyEnv, "OPENAI_API_KEY")}
			return providerModel(ctx, flags, model, getenv, logger)
		},
		ListModels:         modelLister(getenv),
		ListProviderModels: providerLister(getenv),
		Observe:            observeSessions,
		ObserveEvents:      observeEvents,
		StateHome:          home,
		ConfigHome:         configHome(getenv),
		UserSettings:       userSettingsFile(getenv),
		Logger:             logger,
		DefaultModel:       catalog.Builtin().DefaultModel(),
		Warnings:           warnings,
		IdleAfter:          *idleAfter,
	})
	if errors.Is(err, lsp.ErrExitWithoutShutdown) {
		return errExit1
	}
	return err
}

// idleAfterFlag is --idle-after, the same for serve and acp: a flag, not an editor setting,
// because it bounds what the server holds, as its limits do (docs/decisions.md, "Idle sessions").
func idleAfterFlag(fs *flag.FlagSet) *time.Duration {
	return fs.Duration("idle-after", runner.DefaultIdleAfter,
		"close a session idle this long (no turn, not used) to free its memory and MCP servers; it reopens when used (0: never)")
}

// userSettingsFile is the user settings file the server reads at initialize: $REPRISE_CONFIG,
// else settings.json in the config directory (~/.config/reprise/settings.json by default on
// Linux). Never a file of the workspace: it holds the settings a project must not set.
func userSettingsFile(getenv func(string) string) string {
	if f := getenv("REPRISE_CONFIG"); f != "" {
		return f
	}
	if dir := configHome(getenv); dir != "" {
		return filepath.Join(dir, "settings.json")
	}
	return ""
}

// modelLister reads the API's list of models for the editors' pickers, through the same cache
// on disk as `reprise models`.
func modelLister(getenv func(string) string) func(ctx context.Context, refresh bool) ([]catalog.Listed, time.Time, bool, error) {
	return func(ctx context.Context, refresh bool) ([]catalog.Listed, time.Time, bool, error) {
		l, cached, err := gemini.ListModelsCached(ctx, gemini.ConfigFromEnv(getenv), timeNow(), refresh)
		return l.Models, l.Fetched, cached, err
	}
}

// observeSessions sees the options of every session any command opens: tests compare what the
// front-ends ask for from the same settings. Nil outside tests.
var observeSessions func(agent.Options)

// observeEvents sees every event any command's sessions tell their front-end: tests compare
// what the front-ends are told.
var observeEvents func(id string, ev agent.Event)

// errExit1 makes the process exit 1 without printing anything more.
var errExit1 = errors.New("exit 1")

// geminiFactory builds Gemini clients from the environment, one per model name. It logs to the
// server's logger, whose text handler quotes what the endpoint answered.
func geminiFactory(getenv func(string) string, logger *slog.Logger) func(ctx context.Context, model string) (agent.Model, int, error) {
	return func(ctx context.Context, model string) (agent.Model, int, error) {
		cfg := gemini.ConfigFromEnv(getenv)
		cfg.Model = model
		c, err := gemini.New(ctx, cfg)
		if err != nil {
			return nil, 0, err
		}
		limit, err := c.InputTokenLimit(ctx)
		if gemini.IsModelNotFound(err) { // a retired model: no session can use it
			return nil, 0, err
		}
		if err != nil {
			logger.Warn(fmt.Sprintf("%v; assuming %d tokens", err, limit))
		}
		return c, limit, nil
	}
}
