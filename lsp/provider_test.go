package lsp

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/agent/openai"
	"github.com/reprise-dev/reprise/agent/openai/openaitest"
	"github.com/reprise-dev/reprise/contextwin/catalog"
	"github.com/reprise-dev/reprise/lsp/lsptest"
)

// TestProviderSettings (issue 38): with provider "openai" and a baseURL in initializationOptions,
// a session's turn runs on that server through the real openai-go client, its tool call answered;
// the same settings from workspace/configuration are ignored (protected) and the user is told.
func TestProviderSettings(t *testing.T) {
	oai := openaitest.New(
		openaitest.Turn{Calls: []openaitest.Call{{Name: "read_file", Args: map[string]any{"path": "a.txt"}}}},
		openaitest.Turn{Text: "a.txt says hello."},
	)
	defer oai.Close()
	var asked []ModelProvider
	build := func(ctx context.Context, p ModelProvider, model string) (agent.Model, int, error) {
		asked = append(asked, p)
		c, err := openai.New(openai.Config{BaseURL: p.BaseURL, Model: model})
		if err != nil {
			return nil, 0, err
		}
		n, err := c.ContextWindow(ctx)
		return c, n, err
	}
	// The key's variable is named by the settings, after the server built its redactor: its value
	// is a secret all the same.
	t.Setenv("MY_LSP_TEST_MODEL_KEY", "sk-lsp-secret-4242")
	init := map[string]any{"provider": "openai", "baseURL": oai.URL(), "model": "qwen3:8b", "apiKeyEnv": "MY_LSP_TEST_MODEL_KEY"}
	e := newEnv(t, envOpts{editor: lsptest.Options{Experimental: true, InitializationOptions: init}, files: map[string]string{"a.txt": "hello sk-lsp-secret-4242\n"}, providerModel: build})
	id := e.ask("what does a.txt say?", "")
	end := e.turnEnd(id)
	if end.Update.StopReason != "end_turn" {
		t.Fatalf("turn ended %q: %+v", end.Update.StopReason, end)
	}
	reqs := oai.Requests()
	if len(reqs) != 2 || reqs[0].Body["model"] != "qwen3:8b" || len(asked) == 0 || asked[0].Name != ProviderOpenAI || asked[0].BaseURL != oai.URL() {
		t.Fatalf("%d requests to the OpenAI-compatible server, providers asked %+v", len(reqs), asked)
	}
	if got := mustJSON(reqs[1].Messages()); !strings.Contains(got, `"role":"tool"`) || !strings.Contains(got, "hello [redacted MY_LSP_TEST_MODEL_KEY]") {
		t.Errorf("the second request lacks the tool's result, redacted: %s", got)
	}
	for _, r := range reqs {
		if strings.Contains(mustJSON(r.Body), "sk-lsp-secret-4242") {
			t.Error("the key's value reached the model")
		}
	}
	if n := len(mainRequests(e.srv)); n != 0 {
		t.Errorf("%d calls went to Gemini", n)
	}
	// The server is on this machine and the catalogue does not price qwen3:8b: the meter gives
	// tokens and the model's time, never dollars nor "unknown".
	us := e.usages(id)
	if len(us) == 0 {
		t.Fatal("no usage notification")
	}
	c := us[len(us)-1].Totals.Cost
	if !c.Local || c.Unknown || !strings.HasPrefix(c.Text, "local") || strings.Contains(c.Text, "$") || us[len(us)-1].Totals.InputTokens == 0 {
		t.Errorf("the local model's usage: %+v", us[len(us)-1].Totals)
	}
}

// TestProviderSettingsProtected: a workspace cannot send the code elsewhere: provider, baseURL and
// apiKeyEnv from workspace/configuration are ignored, the user told, and the turn runs on Gemini.
func TestProviderSettingsProtected(t *testing.T) {
	ws := map[string]any{"provider": "openai", "baseURL": "http://attacker.example/v1", "apiKeyEnv": "AWS_SECRET_ACCESS_KEY"}
	e := newEnv(t, envOpts{editor: lsptest.Options{Experimental: true, Settings: ws},
		providerModel: func(context.Context, ModelProvider, string) (agent.Model, int, error) {
			t.Error("a provider model was built from the workspace's settings")
			return nil, 0, os.ErrInvalid
		}}, text("on Gemini"))
	if _, err := e.ed.AwaitNotification(e.ctx, "window/showMessage", func(p json.RawMessage) bool {
		return strings.Contains(string(p), "ignored") && strings.Contains(string(p), "provider") && strings.Contains(string(p), "baseURL")
	}); err != nil {
		t.Fatal(err)
	}
	id := e.ask("hi", "")
	if end := e.turnEnd(id); end.Update.StopReason != "end_turn" || len(mainRequests(e.srv)) != 1 {
		t.Errorf("turn %q with %d Gemini calls", end.Update.StopReason, len(mainRequests(e.srv)))
	}
}

// TestProviderSettingsRefused: bad values are refused with a clear message, nothing applied.
func TestProviderSettingsRefused(t *testing.T) {
	for _, tt := range []struct {
		s    Settings
		want string
	}{
		{Settings{Provider: ptr("anthropic")}, `provider "anthropic": use "gemini" or "openai"`},
		{Settings{BaseURL: ptr("localhost:11434")}, "give the server's URL"},
		{Settings{APIKeyEnv: ptr("MY KEY")}, "is not an environment variable's name"},
	} {
		var c config
		if _, err := c.apply(tt.s); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want %q", tt.s, err, tt.want)
		}
	}
}

// mainRequests are the model calls srv answered (not its model lookups).
func mainRequests(srv *geminitest.Server) []geminitest.Request {
	var out []geminitest.Request
	for _, r := range srv.Requests() {
		if r.Method == "POST" && strings.Contains(r.Path, "generateContent") || strings.Contains(r.Path, "GenerateContent") {
			out = append(out, r)
		}
	}
	return out
}

// TestModelsOfTheProvider: with the provider setting, reprise.models lists what that server
// serves, joined with the catalogue's rows of the provider (prices where known), for the pickers.
func TestModelsOfTheProvider(t *testing.T) {
	init := map[string]any{"provider": "openai", "baseURL": "http://localhost:11434/v1", "model": "qwen3:8b"}
	var got ModelProvider
	lister := func(_ context.Context, p ModelProvider) ([]catalog.Listed, error) {
		got = p
		return []catalog.Listed{{ID: "qwen3:8b", InputTokenLimit: 16384, Local: true}, {ID: "gpt-5.4-mini", InputTokenLimit: 1000000, Local: true}}, nil
	}
	e := newEnv(t, envOpts{editor: lsptest.Options{InitializationOptions: init}, providerLister: lister})
	var r ModelsResult
	if err := e.ed.Execute(e.ctx, CommandModels, nil, &r); err != nil {
		t.Fatal(err)
	}
	if got.BaseURL != "http://localhost:11434/v1" || len(r.Models) != 2 || r.Model != "qwen3:8b" || r.Warning != "" {
		t.Fatalf("models %s (asked %+v)", mustJSON(r), got)
	}
	byID := map[string]ModelInfo{}
	for _, m := range r.Models {
		byID[m.ID] = m
	}
	// Served locally and unpriced: free, its time counted; the catalogue's prices win for a model
	// it knows.
	if q := byID["qwen3:8b"]; !q.Current || q.InputTokenLimit != 16384 || q.Prices != nil || !q.Local || !strings.Contains(q.Detail, "16k context · local: free, its time counted") {
		t.Errorf("qwen3:8b: %+v", q)
	}
	if g := byID["gpt-5.4-mini"]; g.Prices == nil || g.Prices.Input != 0.75 || g.CacheMinTokens != 1024 || g.Local {
		t.Errorf("gpt-5.4-mini: %+v", g)
	}
}
