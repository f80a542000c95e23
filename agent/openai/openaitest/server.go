// Package openaitest is a scripted fake of an OpenAI-compatible server, for tests: Chat
// Completions (streamed or not) with text, reasoning and tool calls, usage with cached tokens,
// errors and cut streams; the model list; and Ollama's /api/show, which gives a local model's
// context length. Like geminitest, it never reaches a real model.
package openaitest

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// Turn is one scripted reply. Status, when not 0, answers with that error instead.
type Turn struct {
	// Match, when set, keeps the turn for the first request whose last message contains it (a
	// summary, asked beside the agent's own calls); the turns without one answer the others in
	// order.
	Match string
	// Also are more strings the request (its JSON) must hold, with Match, for this turn to
	// answer it: a summary of a history that holds a given call, say.
	Also      []string
	Text      string
	Reasoning string // sent as reasoning_content
	Calls     []Call
	Chunks    int // text deltas the text is cut into when streamed; default 3
	// Usage, when nil, is estimated: the request's characters over 4, the reply's (its text and
	// calls, and apart its reasoning) likewise, and the cached share as an automatic prefix cache
	// gives it (the longest prefix shared with an earlier request, from 1,024 tokens, in steps
	// of 128).
	Usage   *Usage
	Status  int
	Message string // the error's message
	Code    string // the error's code (invalid_api_key, insufficient_quota…); its type follows the status
	Cut     bool   // the stream stops before its end
	Finish  string // default "stop", or "tool_calls" with calls
}

// Call is a scripted tool call.
type Call struct {
	ID, Name string
	Args     map[string]any
}

// Pace is a model's speed in tokens per second.
type Pace struct{ Prompt, Output float64 }

// waits are the times a reply of u takes at s.Pace: before its first chunk, and after it.
func (s *Server) waits(u *Usage) (first, rest time.Duration) {
	if s.Pace == nil || u == nil {
		return 0, 0
	}
	sec := func(tokens int, perSecond float64) time.Duration {
		return time.Duration(float64(tokens) / perSecond * float64(time.Second))
	}
	return sec(u.Prompt-u.Cached, s.Pace.Prompt), sec(u.Completion+u.Reasoning, s.Pace.Output)
}

// Usage is what a reply reports.
type Usage struct {
	Prompt, Cached, Completion, Reasoning int
}

// Request is a call the server received.
type Request struct {
	Path string
	Body map[string]any
}

// Messages are the request's messages.
func (r Request) Messages() []map[string]any {
	var out []map[string]any
	ms, _ := r.Body["messages"].([]any)
	for _, m := range ms {
		if mm, ok := m.(map[string]any); ok {
			out = append(out, mm)
		}
	}
	return out
}

// Server is the fake. Models lists what /v1/models answers; ContextLength is the model's
// maximum /api/show gives, NumCtx its Modelfile's num_ctx there (0: none), Loaded the context
// /api/ps gives the loaded model (0: not loaded). NotOllama answers 404 to both, as a server other
// than Ollama does. NoCache estimates no cached tokens, as Ollama reports none. Pace, when set,
// makes each reply take the time a local model would: the uncached prompt at Pace.Prompt tokens
// a second before the first chunk, the output at Pace.Output after it.
type Server struct {
	*httptest.Server
	Models        []string
	ContextLength int
	NumCtx        int
	Loaded        int
	NotOllama     bool
	NoCache       bool
	Pace          *Pace

	mu       sync.Mutex
	slept    time.Duration
	turns    []Turn
	requests []Request
	prefixes []string
}

// New starts a server answering turns in order.
func New(turns ...Turn) *Server {
	s := newServer(turns)
	s.Server.Start()
	return s
}

// NewListener is New serving on l, for a fake in its own process.
func NewListener(l net.Listener, turns ...Turn) *Server {
	s := newServer(turns)
	s.Server.Listener.Close() // the one httptest opened
	s.Server.Listener = l
	s.Server.Start()
	return s
}

func newServer(turns []Turn) *Server {
	s := &Server{turns: turns, Models: []string{"fake-model"}, ContextLength: 16384}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("GET /v1/models", s.models)
	mux.HandleFunc("/api/show", s.show)
	mux.HandleFunc("/api/ps", s.ps)
	s.Server = httptest.NewUnstartedServer(mux)
	return s
}

// URL is the base URL a client is given (…/v1).
func (s *Server) URL() string { return s.Server.URL + "/v1" }

// Slept is the time the replies so far took at Pace.
func (s *Server) Slept() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.slept
}

// Requests returns the chat calls received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Add appends turns to the script.
func (s *Server) Add(turns ...Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.turns = append(s.turns, turns...)
}

func (s *Server) next(r *http.Request) (Turn, Request, *Usage, error) {
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		return Turn{}, Request{}, nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	req := Request{Path: r.URL.Path, Body: body}
	s.requests = append(s.requests, req)
	i := s.pick(req)
	if i < 0 {
		return Turn{Status: 500, Message: "openaitest: the script has no turn left for this request"}, req, nil, nil
	}
	t := s.turns[i]
	s.turns = append(s.turns[:i:i], s.turns[i+1:]...)
	u := t.Usage
	if u == nil {
		u = s.estimate(body, t)
	}
	return t, req, u, nil
}

// holdsAll tells whether s contains every one of subs.
func holdsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// pick is the index of the turn that answers req: the first whose Match its last message holds,
// else the first without a Match; -1 when none is left.
func (s *Server) pick(req Request) int {
	ms := req.Messages()
	last := ""
	if len(ms) > 0 {
		b, _ := json.Marshal(ms[len(ms)-1])
		last = string(b)
	}
	whole, _ := json.Marshal(req.Body)
	for i, t := range s.turns {
		if t.Match != "" && strings.Contains(last, t.Match) && holdsAll(string(whole), t.Also) {
			return i
		}
	}
	for i, t := range s.turns {
		if t.Match == "" {
			return i
		}
	}
	return -1
}

// estimate is the usage of a request as an automatic prefix cache would bill it.
func (s *Server) estimate(body map[string]any, t Turn) *Usage {
	// The tools come first, then the messages, as the servers' prefix caches read a request.
	tools, _ := json.Marshal(body["tools"])
	msgs, _ := json.Marshal(body["messages"])
	text := string(tools) + string(msgs)
	best := 0
	for _, p := range s.prefixes {
		n := 0
		for n < len(p) && n < len(text) && p[n] == text[n] {
			n++
		}
		best = max(best, n)
	}
	s.prefixes = append(s.prefixes, text)
	// The reply as the model wrote it: its text and its calls' names and arguments.
	out := len(t.Text)
	for _, c := range t.Calls {
		args, _ := json.Marshal(c.Args)
		out += len(c.Name) + len(args)
	}
	u := &Usage{Prompt: len(text) / 4, Completion: max(out/4, 1), Reasoning: len(t.Reasoning) / 4}
	if tokens := best / 4; tokens >= 1024 && !s.NoCache {
		u.Cached = tokens / 128 * 128
	}
	return u
}

// chat answers a chat completion. Here and below a failed write of a reply is left to the client,
// which then sees a broken answer, as it would from a real server.
func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	t, req, u, err := s.next(r)
	if err != nil {
		http.Error(w, `{"error":{"message":"bad JSON","type":"invalid_request_error"}}`, 400)
		return
	}
	if t.Status != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(t.Status)
		typ := map[int]string{429: "rate_limit_error", 500: "server_error", 502: "server_error", 503: "server_error"}[t.Status]
		if typ == "" {
			typ = "invalid_request_error"
		}
		var code any
		if t.Code != "" {
			code = t.Code
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": t.Message, "type": typ, "code": code}})
		return
	}
	model, _ := req.Body["model"].(string)
	finish := t.Finish
	if finish == "" {
		finish = "stop"
		if len(t.Calls) > 0 {
			finish = "tool_calls"
		}
	}
	first, rest := s.waits(u)
	s.mu.Lock()
	s.slept += first + rest
	s.mu.Unlock()
	time.Sleep(first)
	if stream, _ := req.Body["stream"].(bool); stream {
		s.streamReply(w, model, t, u, finish, rest)
		return
	}
	time.Sleep(rest)
	msg := map[string]any{"role": "assistant", "content": t.Text}
	if t.Reasoning != "" {
		msg["reasoning_content"] = t.Reasoning
	}
	if len(t.Calls) > 0 {
		msg["tool_calls"] = toolCalls(t.Calls, false)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"id": "chatcmpl-1", "object": "chat.completion", "model": model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": usage(u)})
}

// streamReply streams t; rest is the time the output takes after the first chunk.
func (s *Server) streamReply(w http.ResponseWriter, model string, t Turn, u *Usage, finish string, rest time.Duration) {
	w.Header().Set("Content-Type", "text/event-stream")
	send := func(delta map[string]any, finish any, u *Usage) {
		c := map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
		if u != nil {
			c["choices"], c["usage"] = []any{}, usage(u)
		}
		b, _ := json.Marshal(c)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	if t.Reasoning != "" {
		send(map[string]any{"role": "assistant", "reasoning_content": t.Reasoning}, nil, nil)
	}
	for _, part := range split(t.Text, max(t.Chunks, 1)) {
		send(map[string]any{"role": "assistant", "content": part}, nil, nil)
	}
	if t.Cut {
		return // the connection closes with no finish_reason and no [DONE]
	}
	for i, c := range toolCalls(t.Calls, true) {
		// The arguments arrive in two pieces, as servers stream them.
		args := c["function"].(map[string]any)["arguments"].(string)
		half := len(args) / 2
		first := map[string]any{"index": i, "id": c["id"], "type": "function", "function": map[string]any{"name": c["function"].(map[string]any)["name"], "arguments": args[:half]}}
		send(map[string]any{"tool_calls": []any{first}}, nil, nil)
		send(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": args[half:]}}}}, nil, nil)
	}
	time.Sleep(rest)
	send(map[string]any{}, finish, nil)
	send(nil, nil, u)
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func toolCalls(calls []Call, _ bool) []map[string]any {
	var out []map[string]any
	for i, c := range calls {
		id := c.ID
		if id == "" {
			id = fmt.Sprintf("call_%d", i+1)
		}
		args, _ := json.Marshal(c.Args)
		out = append(out, map[string]any{"id": id, "type": "function", "function": map[string]any{"name": c.Name, "arguments": string(args)}})
	}
	return out
}

func usage(u *Usage) map[string]any {
	return map[string]any{"prompt_tokens": u.Prompt, "completion_tokens": u.Completion + u.Reasoning,
		"total_tokens":              u.Prompt + u.Completion + u.Reasoning,
		"prompt_tokens_details":     map[string]any{"cached_tokens": u.Cached},
		"completion_tokens_details": map[string]any{"reasoning_tokens": u.Reasoning}}
}

// split cuts s into n pieces (fewer when it is shorter).
func split(s string, n int) []string {
	if s == "" {
		return nil
	}
	r := []rune(s)
	size := max(1, (len(r)+n-1)/n)
	var out []string
	for len(r) > 0 {
		k := min(size, len(r))
		out = append(out, string(r[:k]))
		r = r[k:]
	}
	return out
}

func (s *Server) models(w http.ResponseWriter, _ *http.Request) {
	var data []any
	for _, m := range s.Models {
		data = append(data, map[string]any{"id": m, "object": "model", "owned_by": "openaitest"})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
}

// show answers Ollama's /api/show with the model's context length and its parameters.
func (s *Server) show(w http.ResponseWriter, _ *http.Request) {
	if s.NotOllama {
		http.NotFound(w, nil)
		return
	}
	params := "temperature 0.7"
	if s.NumCtx > 0 {
		params += fmt.Sprintf("\nnum_ctx %d", s.NumCtx)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"model_info": map[string]any{"general.architecture": "llama",
		"llama.context_length": s.ContextLength}, "parameters": params, "capabilities": []string{"completion", "tools"}})
}

// ps answers Ollama's /api/ps: the loaded models with the context they were given.
func (s *Server) ps(w http.ResponseWriter, _ *http.Request) {
	if s.NotOllama {
		http.NotFound(w, nil)
		return
	}
	var models []any
	if s.Loaded > 0 {
		for _, m := range s.Models {
			models = append(models, map[string]any{"name": m, "model": m, "context_length": s.Loaded})
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"models": models})
}
