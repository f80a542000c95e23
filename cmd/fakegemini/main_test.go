package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/contextwin/catalog"

	"github.com/reprise-dev/reprise/agent/gemini"
	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/agent/openai"
)

const script = `{
  "inputTokenLimit": 30000,
  "models": ["qwen3:8b", "gpt-5.4-mini"],
  "cache": {"minTokens": 1},
  "turns": [
    {"chunks": 3, "parts": [{"text": "streamed reply"}]},
    {"parts": [{"text": "unary reply"}]}
  ]
}`

// TestFakeGemini builds the command and drives it as the editors' tests do: spawn, read the URL
// from the first line, talk to it with the real genai client, stop it.
func TestFakeGemini(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool to build the command with")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "fakegemini")
	if out, err := exec.CommandContext(t.Context(), goTool, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	scriptPath := filepath.Join(dir, "script.json")
	if err := os.WriteFile(scriptPath, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}

	t.Run("serves until stdin closes", func(t *testing.T) {
		logPath := filepath.Join(t.TempDir(), "requests.jsonl")
		cmd := exec.CommandContext(t.Context(), bin, "--script", scriptPath, "--log", logPath)
		stdin, url := start(t, cmd)

		c, err := genai.NewClient(t.Context(), &genai.ClientConfig{
			APIKey: "any", Backend: genai.BackendGeminiAPI, HTTPOptions: genai.HTTPOptions{BaseURL: url, APIVersion: catalog.Builtin().API.Version},
		})
		if err != nil {
			t.Fatal(err)
		}
		noContinuation := &genai.GenerateContentConfig{AutomaticContinuation: genai.Ptr(false)}
		contents := genai.Text("hello")
		var streamed strings.Builder
		for resp, err := range c.Models.GenerateContentStream(t.Context(), "gemini-3.8-flash", contents, noContinuation) {
			if err != nil {
				t.Fatalf("stream: %v", err)
			}
			streamed.WriteString(resp.Text())
		}
		resp, err := c.Models.GenerateContent(t.Context(), "gemini-3.8-flash", contents, noContinuation)
		if err != nil {
			t.Fatalf("generate: %v", err)
		}
		m, err := c.Models.Get(t.Context(), "gemini-3.8-flash", nil)
		if err != nil {
			t.Fatalf("get model: %v", err)
		}
		got := []any{streamed.String(), resp.Text(), m.InputTokenLimit}
		if diff := cmp.Diff(got, []any{"streamed reply", "unary reply", int32(30000)}); diff != "" {
			t.Errorf("replies (-got +want):\n%s", diff)
		}

		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Fatalf("exit after stdin closed: %v\nstderr:\n%s", err, cmd.Stderr)
		}
		data, err := os.ReadFile(logPath)
		if err != nil {
			t.Fatalf("request log: %v", err)
		}
		var paths []string
		var usage []*geminitest.Usage
		for line := range strings.Lines(string(data)) {
			var e logEntry
			if err := json.Unmarshal([]byte(line), &e); err != nil {
				t.Fatalf("log line %q: %v", line, err)
			}
			paths = append(paths, e.Path)
			usage = append(usage, e.Usage)
			if !e.HasAPIKey || strings.Contains(line, `"any"`) {
				t.Errorf("log line %s: want hasApiKey and no key", line)
			}
		}
		want := []string{
			"/v1beta/models/gemini-3.8-flash:streamGenerateContent",
			"/v1beta/models/gemini-3.8-flash:generateContent",
			"/v1beta/models/gemini-3.8-flash",
		}
		if diff := cmp.Diff(paths, want); diff != "" {
			t.Errorf("logged paths (-got +want):\n%s", diff)
		}
		// "hello" is 5 characters: 2 tokens, of which the 4 characters of a whole token were
		// sent before, cached with the script's minimum of 1.
		wantUsage := []*geminitest.Usage{{Prompt: 2, Candidates: 4, ServiceTier: "standard"}, {Prompt: 2, Cached: 1, Candidates: 3, ServiceTier: "standard"}, nil}
		if diff := cmp.Diff(usage, wantUsage); diff != "" {
			t.Errorf("logged usage (-got +want):\n%s", diff)
		}
	})

	t.Run("serves the script as an OpenAI-compatible server", func(t *testing.T) {
		cmd := exec.CommandContext(t.Context(), bin, "--script", scriptPath, "--api", "openai")
		stdin, url := start(t, cmd)
		if !strings.HasSuffix(url, "/v1") {
			t.Errorf("base URL %q, want …/v1", url)
		}
		c, err := openai.New(openai.Config{BaseURL: url, Model: "qwen3:8b"})
		if err != nil {
			t.Fatal(err)
		}
		var text strings.Builder
		for ch, err := range c.Generate(t.Context(), &gemini.Request{Contents: genai.Text("hello"), Stream: true}) {
			if err != nil {
				t.Fatal(err)
			}
			text.WriteString(ch.Text)
		}
		models, err := c.Models(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		w, err := c.Window(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		got := []any{text.String(), models, w.Tokens}
		if diff := cmp.Diff(got, []any{"streamed reply", []string{"qwen3:8b", "gpt-5.4-mini"}, 30000}); diff != "" {
			t.Errorf("(-got +want):\n%s", diff)
		}
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Fatalf("exit after stdin closed: %v\nstderr:\n%s", err, cmd.Stderr)
		}
	})

	t.Run("stops on SIGTERM", func(t *testing.T) {
		cmd := exec.CommandContext(t.Context(), bin, "--script", scriptPath)
		start(t, cmd)
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			t.Errorf("exit after SIGTERM: %v", err)
		}
	})

	t.Run("bad invocations", func(t *testing.T) {
		bad := filepath.Join(t.TempDir(), "bad.json")
		if err := os.WriteFile(bad, []byte(`{"turns":[{"chunks":-1}]}`), 0o644); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			args   []string
			status int
			stderr string
		}{
			{nil, 2, "usage: fakegemini --script FILE"},
			{[]string{"--script", bad}, 1, "negative chunks"},
			{[]string{"--script", scriptPath, "--addr", "256.0.0.1:0"}, 1, "listen on 256.0.0.1:0"},
			{[]string{"--script", scriptPath, "--api", "anthropic"}, 2, "--api gemini|openai"},
		}
		for _, tt := range tests {
			var stderr bytes.Buffer
			cmd := exec.CommandContext(t.Context(), bin, tt.args...)
			cmd.Stderr = &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != tt.status || !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("fakegemini %v: %v, stderr %q; want status %d and %q", tt.args, err, stderr.String(), tt.status, tt.stderr)
			}
		}
	})
}

// start runs cmd with stdin on a pipe and returns that pipe and the base URL from the first line
// of stdout. Reading the line waits for the server to be up, without polling.
func start(t *testing.T, cmd *exec.Cmd) (stdin interface{ Close() error }, url string) {
	t.Helper()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = new(bytes.Buffer)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("first line: %v\nstderr:\n%s", err, cmd.Stderr)
	}
	url = strings.TrimSpace(line)
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("first line = %q, want http://127.0.0.1:PORT", line)
	}
	return in, url
}
