package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"regexp"
	"text/tabwriter"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/openai"
	"github.com/reprise-dev/reprise/agent/secret"
	"github.com/reprise-dev/reprise/contextwin/catalog"
	"github.com/reprise-dev/reprise/lsp"
)

// Providers: Gemini, the default, with everything it has (caches, thought signatures, tiers);
// or any server speaking OpenAI's Chat Completions (OpenAI, Ollama, LM Studio, llama.cpp,
// vLLM, OpenRouter, LiteLLM), through agent/openai.
const (
	providerGemini = "gemini"
	providerOpenAI = "openai"
)

// defaultWindow is the context window assumed for an OpenAI-compatible model whose server does
// not say (OpenAI's own list does not): the budget stays under it anyway.
const defaultWindow = 128_000

// providerFlags are the model provider's flags, read from the user's command line only.
type providerFlags struct {
	provider, baseURL, keyEnv string
}

func (p *providerFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&p.provider, "provider", providerGemini, `"gemini", or "openai" for OpenAI and every OpenAI-compatible server (Ollama, LM Studio, llama.cpp, vLLM, OpenRouter)`)
	fs.StringVar(&p.baseURL, "base-url", "", "with --provider openai: the server's /v1 URL (default OpenAI's; Ollama: http://localhost:11434/v1)")
	fs.StringVar(&p.keyEnv, "api-key-env", "OPENAI_API_KEY", "with --provider openai: the environment variable holding the key (a local server needs none)")
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (p providerFlags) check() error {
	switch p.provider {
	case providerGemini:
		if p.baseURL != "" {
			return errors.New("--base-url is for --provider openai (Gemini's endpoint is GOOGLE_GEMINI_BASE_URL)")
		}
	case providerOpenAI:
		if p.baseURL != "" {
			if u, err := url.Parse(p.baseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return fmt.Errorf("--base-url %q: give the server's URL, e.g. http://localhost:11434/v1", p.baseURL)
			}
		}
		if !envName.MatchString(p.keyEnv) {
			return fmt.Errorf("--api-key-env %q is not an environment variable's name", p.keyEnv)
		}
		// Before any redactor is built from the environment: the key is a secret from the start.
		secret.AddVar(p.keyEnv)
	default:
		return fmt.Errorf("--provider %q: use gemini or openai", p.provider)
	}
	return nil
}

// openaiModel builds the OpenAI-compatible client and reads its context window: a server that
// cannot be reached ends the run here, before a session exists.
func openaiModel(ctx context.Context, p providerFlags, model string, getenv func(string) string, stderr io.Writer) (*openai.Client, int, error) {
	c, window, note, err := openaiClient(ctx, p, model, getenv)
	if note != "" {
		fmt.Fprintf(stderr, "reprise: note: %s\n", note)
	}
	return c, window, err
}

// providerModel is openaiModel for the editors' servers (serve): what it would print is logged.
func providerModel(ctx context.Context, p providerFlags, model string, getenv func(string) string, logger *slog.Logger) (agent.Model, int, error) {
	c, window, note, err := openaiClient(ctx, p, model, getenv)
	if err != nil {
		return nil, 0, err
	}
	if note != "" {
		logger.Warn(note)
	}
	return c, window, nil
}

// openaiClient builds the client and reads the window; note says how it was assumed, when it was.
func openaiClient(ctx context.Context, p providerFlags, model string, getenv func(string) string) (_ *openai.Client, window int, note string, _ error) {
	secret.AddVar(p.keyEnv)
	c, err := openai.New(openai.Config{BaseURL: p.baseURL, APIKey: getenv(p.keyEnv), KeyName: p.keyEnv, Model: model})
	if err != nil {
		return nil, 0, "", err
	}
	w, err := c.Window(ctx)
	switch {
	case err != nil:
		return nil, 0, "", fmt.Errorf("the server at %s cannot list its models (%v): check the base URL and that it runs", cmpOrString(p.baseURL, openai.DefaultBaseURL), err)
	case w.Tokens == 0:
		return c, defaultWindow, fmt.Sprintf("the server does not say %s's context window; assuming %d tokens", model, defaultWindow), nil
	}
	return c, w.Tokens, w.Note, nil
}

func cmpOrString(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// namedModel is a model client that knows the model it asks for.
type namedModel interface {
	agent.Model
	Model() string
}

// maxListedWindows bounds the models whose window reprise models asks for, one request each.
const maxListedWindows = 50

// endpointModel is a row of reprise models --provider openai.
type endpointModel struct {
	ID     string `json:"id"`
	Window int    `json:"window,omitempty"` // 0: the server does not say
	// Prices are the catalogue's, per million input / cached input / output tokens, when it
	// knows the model.
	Prices *catalog.Rates `json:"prices,omitempty"`
	// Local: the server is on the user's machine or network and the catalogue has no price for
	// the model: it bills nothing, and Reprise counts its time.
	Local bool `json:"local,omitempty"`
}

// endpointModels lists what an OpenAI-compatible server serves, with each model's context window
// where the server says it.
func endpointModels(ctx context.Context, p providerFlags, getenv func(string) string, stdout io.Writer, asJSON bool) error {
	where := cmpOrString(p.baseURL, openai.DefaultBaseURL)
	rows, err := listEndpoint(ctx, p, getenv)
	if err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	if len(rows) == 0 {
		fmt.Fprintf(stdout, "The server at %s lists no model.\n", where)
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "model\tcontext window\t$ per M input / cached / output")
	for _, r := range rows {
		w, p := "not said", "unknown (not in the catalogue)"
		if r.Window > 0 {
			w = fmt.Sprintf("%d tokens", r.Window)
		}
		if r.Local {
			p = "free (local: its time is counted)"
		}
		if r.Prices != nil {
			p = fmt.Sprintf("%.2f / %.3f / %.2f", r.Prices.Input, r.Prices.CachedInput, r.Prices.Output)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.ID, w, p)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Served by %s; run one with reprise run --provider openai --base-url %s --model ID.\n", where, where)
	return nil
}

// modelFactory builds the models of a front-end whose provider is fixed by its flags (acp): the
// Gemini factory, or one of the OpenAI-compatible server.
func modelFactory(p providerFlags, getenv func(string) string, logger *slog.Logger) func(ctx context.Context, model string) (agent.Model, int, error) {
	if p.provider != providerOpenAI {
		return geminiFactory(getenv, logger)
	}
	return func(ctx context.Context, model string) (agent.Model, int, error) {
		return providerModel(ctx, p, model, getenv, logger)
	}
}

// listEndpoint lists what an OpenAI-compatible server serves, with each model's window where the
// server says it and the catalogue's prices where it knows the model.
func listEndpoint(ctx context.Context, p providerFlags, getenv func(string) string) ([]endpointModel, error) {
	secret.AddVar(p.keyEnv)
	c, err := openai.New(openai.Config{BaseURL: p.baseURL, APIKey: getenv(p.keyEnv), KeyName: p.keyEnv, Model: "-"})
	if err != nil {
		return nil, err
	}
	ids, err := c.Models(ctx)
	if err != nil {
		return nil, fmt.Errorf("the server at %s cannot list its models (%v): check the base URL, %s and that it runs", cmpOrString(p.baseURL, openai.DefaultBaseURL), err, p.keyEnv)
	}
	rows := make([]endpointModel, 0, len(ids))
	for i, id := range ids {
		row := endpointModel{ID: id}
		if m, ok := catalog.Builtin().Lookup(id); ok && m.Provider == providerOpenAI {
			if r, ok := m.RatesAt(timeNow(), 0); ok {
				row.Prices = &r
			}
		}
		row.Local = row.Prices == nil && c.Local()
		if i < maxListedWindows {
			if m, err := openai.New(openai.Config{BaseURL: p.baseURL, APIKey: getenv(p.keyEnv), Model: id}); err == nil {
				row.Window, _ = m.ContextWindow(ctx)
			}
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// providerLister is lsp's ListProviderModels: listEndpoint's rows as the catalogue joins them.
func providerLister(getenv func(string) string) func(ctx context.Context, p lsp.ModelProvider) ([]catalog.Listed, error) {
	return func(ctx context.Context, p lsp.ModelProvider) ([]catalog.Listed, error) {
		rows, err := listEndpoint(ctx, providerFlags{provider: p.Name, baseURL: p.BaseURL, keyEnv: cmp.Or(p.KeyEnv, "OPENAI_API_KEY")}, getenv)
		if err != nil {
			return nil, err
		}
		out := make([]catalog.Listed, 0, len(rows))
		for _, r := range rows {
			out = append(out, catalog.Listed{ID: r.ID, InputTokenLimit: r.Window, Local: r.Local})
		}
		return out, nil
	}
}
