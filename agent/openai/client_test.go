package openai

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent/gemini"
	"github.com/reprise-dev/reprise/agent/openai/openaitest"
)

func client(t *testing.T, srv *openaitest.Server) *Client {
	t.Helper()
	c, err := New(Config{BaseURL: srv.URL(), APIKey: "sk-test-secret", Model: "fake-model", BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// collect runs Generate to its end.
func collect(t *testing.T, c *Client, req *gemini.Request) (text, thought string, retries []*gemini.Retry, done *gemini.Response, err error) {
	t.Helper()
	for ch, e := range c.Generate(context.Background(), req) {
		if e != nil {
			return text, thought, retries, nil, e
		}
		text += ch.Text
		thought += ch.Thought
		if ch.Retry != nil {
			retries = append(retries, ch.Retry)
			if ch.Retry.Discard {
				text, thought = "", ""
			}
		}
		if ch.Done != nil {
			done = ch.Done
		}
	}
	return
}

var readDecl = &genai.FunctionDeclaration{Name: "read_file", Description: "Read a file.",
	ParametersJsonSchema: map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}, "required": []any{"path"}}}

// TestStreamedReplyWithToolCalls: text and reasoning deltas arrive in order, two tool calls whose
// arguments were streamed in pieces are merged, and the usage keeps the cached and reasoning
// shares apart.
func TestStreamedReplyWithToolCalls(t *testing.T) {
	srv := openaitest.New(openaitest.Turn{Text: "Reading both.", Reasoning: "Two files.", Chunks: 4,
		Calls: []openaitest.Call{{ID: "call_a", Name: "read_file", Args: map[string]any{"path": "a.go"}}, {ID: "call_b", Name: "read_file", Args: map[string]any{"path": "b.go"}}},
		Usage: &openaitest.Usage{Prompt: 5000, Cached: 4096, Completion: 40, Reasoning: 12}})
	defer srv.Close()
	req := &gemini.Request{System: "You are an agent.", Tools: []*genai.FunctionDeclaration{readDecl}, Stream: true,
		Contents: []*genai.Content{genai.NewContentFromText("read a and b", genai.RoleUser)}}
	text, thought, _, done, err := collect(t, client(t, srv), req)
	if err != nil {
		t.Fatal(err)
	}
	if text != "Reading both." || thought != "Two files." {
		t.Errorf("text %q, thought %q", text, thought)
	}
	var calls []*genai.FunctionCall
	for _, p := range done.Content.Parts {
		if p.FunctionCall != nil {
			calls = append(calls, p.FunctionCall)
		}
	}
	if len(calls) != 2 || calls[0].ID != "call_a" || calls[1].Args["path"] != "b.go" {
		t.Fatalf("calls %+v", calls)
	}
	if u := done.Usage; u.Wait <= 0 || u.Gen <= 0 {
		t.Errorf("the streamed call's time was not measured: %+v", u)
	}
	done.Usage.Wait, done.Usage.Gen = 0, 0
	if done.Usage != (gemini.Usage{Prompt: 5000, Cached: 4096, Candidates: 40, Thoughts: 12, Total: 5052}) {
		t.Errorf("usage %+v", done.Usage)
	}
	r := srv.Requests()[0]
	ms := r.Messages()
	if len(ms) != 2 || ms[0]["role"] != "system" || ms[1]["role"] != "user" {
		t.Errorf("messages %v", ms)
	}
	if so, _ := r.Body["stream_options"].(map[string]any); so["include_usage"] != true {
		t.Errorf("stream_options %v: the usage would not come", r.Body["stream_options"])
	}
	tools, _ := r.Body["tools"].([]any)
	if len(tools) != 1 || !strings.Contains(mustJSON(tools[0]), `"name":"read_file"`) || !strings.Contains(mustJSON(tools[0]), `"required":["path"]`) {
		t.Errorf("tools %s", mustJSON(tools))
	}
}

// TestHistoryAsMessages: a history with calls and their results goes out as assistant tool calls
// and tool messages answering them by id, ids made up in order for calls that had none (a
// session begun on Gemini); thoughts are not sent back; NoFunctionCalls is tool_choice none.
func TestHistoryAsMessages(t *testing.T) {
	srv := openaitest.New(openaitest.Turn{Text: "ok"})
	defer srv.Close()
	contents := []*genai.Content{
		genai.NewContentFromText("read a", genai.RoleUser),
		{Role: genai.RoleModel, Parts: []*genai.Part{{Text: "thinking…", Thought: true}, {FunctionCall: &genai.FunctionCall{Name: "read_file", Args: map[string]any{"path": "a"}}}, {FunctionCall: &genai.FunctionCall{Name: "read_file", Args: map[string]any{"path": "b"}}}}},
		{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{Name: "read_file", Response: map[string]any{"output": "A"}}}, {FunctionResponse: &genai.FunctionResponse{Name: "read_file", Response: map[string]any{"output": "B"}}}, {Text: "note: a.go changed"}}},
	}
	if _, _, _, _, err := collect(t, client(t, srv), &gemini.Request{Contents: contents, Tools: []*genai.FunctionDeclaration{readDecl}, NoFunctionCalls: true}); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	got := mustJSON(r.Messages())
	for _, want := range []string{
		`{"content":"read a","role":"user"}`,
		`"tool_calls":[{"function":{"arguments":"{\"path\":\"a\"}","name":"read_file"},"id":"call_1","type":"function"},{"function":{"arguments":"{\"path\":\"b\"}","name":"read_file"},"id":"call_2","type":"function"}]`,
		`{"content":"{\"output\":\"A\"}","role":"tool","tool_call_id":"call_1"}`,
		`{"content":"{\"output\":\"B\"}","role":"tool","tool_call_id":"call_2"}`,
		`{"content":"note: a.go changed","role":"user"}`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("messages lack %s:\n%s", want, got)
		}
	}
	if strings.Contains(got, "thinking…") {
		t.Error("a thought was sent back")
	}
	if r.Body["tool_choice"] != "none" {
		t.Errorf("tool_choice %v", r.Body["tool_choice"])
	}
}

// TestErrorsInPlainWords: what fails is retried when it may pass, with the chunks the loop shows;
// what cannot pass says what to do, and never shows the key.
func TestErrorsInPlainWords(t *testing.T) {
	t.Run("429 then success", func(t *testing.T) {
		srv := openaitest.New(openaitest.Turn{Status: 429, Message: "Rate limit reached"}, openaitest.Turn{Text: "done"})
		defer srv.Close()
		text, _, retries, done, err := collect(t, client(t, srv), &gemini.Request{Stream: true, Contents: []*genai.Content{genai.NewContentFromText("hi", genai.RoleUser)}})
		if err != nil || text != "done" || done == nil || len(retries) != 1 || retries[0].Attempt != 2 {
			t.Errorf("text %q, retries %v, err %v", text, retries, err)
		}
	})
	t.Run("a cut stream is tried again, its text discarded", func(t *testing.T) {
		srv := openaitest.New(openaitest.Turn{Text: "partial answer", Cut: true}, openaitest.Turn{Text: "whole answer"})
		defer srv.Close()
		text, _, retries, _, err := collect(t, client(t, srv), &gemini.Request{Stream: true, Contents: []*genai.Content{genai.NewContentFromText("hi", genai.RoleUser)}})
		if err != nil || text != "whole answer" || len(retries) != 1 || !retries[0].Discard {
			t.Errorf("text %q, retries %+v, err %v", text, retries, err)
		}
	})
	for _, tt := range []struct {
		name  string
		turns []openaitest.Turn
		want  string
	}{
		{"401", []openaitest.Turn{{Status: 401, Message: "Incorrect API key provided: sk-test-secret"}}, "refused the API key (401"},
		{"400", []openaitest.Turn{{Status: 400, Message: "bad field"}}, "rejected the request (400"},
		{"no tools", []openaitest.Turn{{Status: 400, Message: "registry.ollama.ai/library/gemma:2b does not support tools"}}, "this model cannot call tools"},
		{"404", []openaitest.Turn{{Status: 404, Message: "model not found"}}, "does not serve this model"},
		{"500 five times", []openaitest.Turn{{Status: 500, Message: "boom"}, {Status: 500, Message: "boom"}, {Status: 500, Message: "boom"}, {Status: 500, Message: "boom"}, {Status: 500, Message: "boom"}}, "failed (500 server_error, 5 attempts): boom; try again"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := openaitest.New(tt.turns...)
			defer srv.Close()
			_, _, _, _, err := collect(t, client(t, srv), &gemini.Request{Stream: true, Contents: []*genai.Content{genai.NewContentFromText("hi", genai.RoleUser)}})
			var ge *gemini.Error
			if !errors.As(err, &ge) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want a *gemini.Error saying %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "sk-test-secret") {
				t.Errorf("the key is in the message: %v", err)
			}
		})
	}
	t.Run("nothing listens", func(t *testing.T) {
		c, _ := New(Config{BaseURL: "http://127.0.0.1:1/v1", Model: "m", MaxAttempts: 2, BaseDelay: time.Millisecond})
		_, _, _, _, err := collect(t, c, &gemini.Request{Contents: []*genai.Content{genai.NewContentFromText("hi", genai.RoleUser)}})
		if err == nil || !strings.Contains(err.Error(), "the server at 127.0.0.1:1 cannot be reached after 2 attempts") {
			t.Errorf("error %v", err)
		}
	})
}

// TestUnaryReply: a request without streaming gets the same response.
func TestUnaryReply(t *testing.T) {
	srv := openaitest.New(openaitest.Turn{Text: "whole", Reasoning: "why", Calls: []openaitest.Call{{Name: "read_file", Args: map[string]any{"path": "x"}}}, Usage: &openaitest.Usage{Prompt: 100, Completion: 5}})
	defer srv.Close()
	text, thought, _, done, err := collect(t, client(t, srv), &gemini.Request{Contents: []*genai.Content{genai.NewContentFromText("hi", genai.RoleUser)}})
	if err != nil || text != "whole" || thought != "why" || len(done.Content.Parts) != 2 || done.Usage.Prompt != 100 {
		t.Errorf("text %q thought %q done %+v err %v", text, thought, done, err)
	}
}

// TestContextWindow: on Ollama, the Modelfile's num_ctx, else the loaded model's context, else
// Ollama's default with a note, never more than the model's maximum; elsewhere, /v1/models' field
// or nothing. The models are listed.
func TestContextWindow(t *testing.T) {
	srv := openaitest.New()
	defer srv.Close()
	srv.Models = []string{"qwen3:8b", "fake-model"}
	c := client(t, srv)
	for _, tt := range []struct {
		max, numCtx, loaded int
		notOllama           bool
		want                int
		note                string
	}{
		{max: 40960, numCtx: 16384, want: 16384},
		{max: 8192, numCtx: 16384, want: 8192},
		{max: 40960, loaded: 32768, want: 32768},
		{max: 40960, want: 4096, note: "OLLAMA_CONTEXT_LENGTH"},
		{max: 2048, want: 2048, note: "OLLAMA_CONTEXT_LENGTH"},
		{notOllama: true, want: 0},
	} {
		srv.ContextLength, srv.NumCtx, srv.Loaded, srv.NotOllama = tt.max, tt.numCtx, tt.loaded, tt.notOllama
		w, err := c.Window(context.Background())
		if err != nil || w.Tokens != tt.want || (tt.note == "") != (w.Note == "") || !strings.Contains(w.Note, tt.note) {
			t.Errorf("%+v: window %+v, %v", tt, w, err)
		}
	}
	if ms, err := c.Models(context.Background()); err != nil || strings.Join(ms, ",") != "qwen3:8b,fake-model" {
		t.Errorf("models %v, %v", ms, err)
	}
}

// TestTiming: a streamed reply's time is split at its first token, the prompt's part before and
// the output's after, at least what the server took for each; a unary one has its whole time
// before.
func TestTiming(t *testing.T) {
	srv := openaitest.New(openaitest.Turn{Text: "one two three", Usage: &openaitest.Usage{Prompt: 3000, Completion: 40}},
		openaitest.Turn{Text: "four", Usage: &openaitest.Usage{Prompt: 3000, Completion: 40}})
	defer srv.Close()
	srv.Pace = &openaitest.Pace{Prompt: 20_000, Output: 400} // 150 ms, then 100 ms
	req := &gemini.Request{Contents: []*genai.Content{genai.NewContentFromText("hi", genai.RoleUser)}, Stream: true}
	_, _, _, done, err := collect(t, client(t, srv), req)
	if err != nil {
		t.Fatal(err)
	}
	if u := done.Usage; u.Wait < 150*time.Millisecond || u.Gen < 100*time.Millisecond {
		t.Errorf("streamed: wait %s, gen %s", u.Wait, u.Gen)
	}
	req.Stream = false
	if _, _, _, done, err = collect(t, client(t, srv), req); err != nil {
		t.Fatal(err)
	}
	if u := done.Usage; u.Wait < 250*time.Millisecond || u.Gen != 0 {
		t.Errorf("unary: wait %s, gen %s", u.Wait, u.Gen)
	}
}

// TestLocal: a server on this machine or its network is local; a public one is not.
func TestLocal(t *testing.T) {
	for url, want := range map[string]bool{
		"http://localhost:11434/v1": true, "http://127.0.0.1:1234/v1": true, "http://[::1]:8080/v1": true,
		"http://192.168.1.20:11434/v1": true, "http://10.0.0.5/v1": true, "http://ollama:11434/v1": true,
		"http://gpu-box.local:8000/v1": true, "http://host.docker.internal:11434/v1": true,
		"https://api.openai.com/v1": false, "https://openrouter.ai/api/v1": false, "http://8.8.8.8/v1": false,
		"https://localhost.example.com/v1": false,
	} {
		c, err := New(Config{BaseURL: url, Model: "m"})
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Local(); got != want {
			t.Errorf("%s: local %v, want %v", url, got, want)
		}
	}
}
