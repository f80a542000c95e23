package lsp

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"regexp"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/secret"
)

// The model's provider: Gemini, the default, or a server speaking OpenAI's Chat Completions
// (OpenAI, Ollama, LM Studio, llama.cpp, vLLM, OpenRouter). Protected settings (protected.go): a
// base URL from a workspace would send the code elsewhere, and a key variable named by it would
// spend another account.

// Provider names.
const (
	ProviderGemini = "gemini"
	ProviderOpenAI = "openai"
)

// ModelProvider is where sessions' models are asked for, when it is not Gemini.
type ModelProvider struct {
	Name    string // ProviderOpenAI
	BaseURL string // "" is OpenAI's own
	KeyEnv  string // the variable holding the key; "" is OPENAI_API_KEY
}

var envVarName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// applyProvider applies the provider settings.
func applyProvider(n *config, s Settings) error {
	if s.Provider != nil {
		switch *s.Provider {
		case "", ProviderGemini:
			n.provider.Name = ""
		case ProviderOpenAI:
			n.provider.Name = ProviderOpenAI
		default:
			return fmt.Errorf("provider %q: use %q or %q", *s.Provider, ProviderGemini, ProviderOpenAI)
		}
	}
	if s.BaseURL != nil {
		if *s.BaseURL != "" {
			u, err := url.Parse(*s.BaseURL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return fmt.Errorf("baseURL %q: give the server's URL, e.g. http://localhost:11434/v1", *s.BaseURL)
			}
		}
		n.provider.BaseURL = *s.BaseURL
	}
	if s.APIKeyEnv != nil {
		if *s.APIKeyEnv != "" && !envVarName.MatchString(*s.APIKeyEnv) {
			return fmt.Errorf("apiKeyEnv %q is not an environment variable's name", *s.APIKeyEnv)
		}
		n.provider.KeyEnv = *s.APIKeyEnv
		// Before the next session's redactor is built: that variable's value is a secret.
		secret.AddVar(n.provider.KeyEnv)
	}
	return nil
}

// model builds (or reuses) the client of a model on the provider in force: Gemini's clients by
// name, another provider's by provider and name. A provider change applies to the sessions
// opened after it.
func (ss *sessionSet) model(ctx context.Context, name string) (agent.Model, int, error) {
	p := ss.srv.cfg.get().provider
	if p.Name == "" {
		return ss.models.get(ctx, name)
	}
	if ss.srv.opts.NewProviderModel == nil {
		return nil, 0, fmt.Errorf("provider %s is not available in this build", p.Name)
	}
	return ss.providerModels.get(ctx, providerKey(p, name))
}

// providerKey names a client of the provider cache; the key holds all the build needs.
func providerKey(p ModelProvider, name string) string {
	return p.Name + "\x00" + p.BaseURL + "\x00" + p.KeyEnv + "\x00" + name
}

// buildProviderModel builds the client a providerKey names.
func (s *server) buildProviderModel(ctx context.Context, key string) (agent.Model, int, error) {
	var p ModelProvider
	var name string
	parts := splitKey(key)
	p.Name, p.BaseURL, p.KeyEnv, name = parts[0], parts[1], parts[2], parts[3]
	return s.opts.NewProviderModel(ctx, p, name)
}

func splitKey(key string) [4]string {
	var out [4]string
	i := 0
	start := 0
	for j := 0; j < len(key) && i < 3; j++ {
		if key[j] == 0 {
			out[i] = key[start:j]
			i++
			start = j + 1
		}
	}
	out[3] = key[start:]
	return out
}

// secretsFor is the server's redactor, with the value of the provider's key variable when the
// settings name one: it was not known when the redactor was built.
func (s *server) secretsFor(c config) *secret.Redactor {
	if c.provider.KeyEnv == "" {
		return s.secrets
	}
	return s.secrets.With(c.provider.KeyEnv, os.Getenv(c.provider.KeyEnv))
}
