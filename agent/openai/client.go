// Package openai is the agent's model for OpenAI and every server that speaks its Chat Completions
// API (Ollama, LM Studio, llama.cpp's server, vLLM, OpenRouter, LiteLLM), through the official
// openai-go client. It takes the agent's requests, which are Gemini's shape (agent/gemini), and
// answers with the same chunks, so that the loop, the context engine and the journal are the
// ones Gemini sessions use; Gemini's own features (caches, thought signatures, tiers) stay in
// agent/gemini, untouched.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent/gemini"
)

// DefaultBaseURL is OpenAI's own endpoint.
const DefaultBaseURL = "https://api.openai.com/v1"

// Config configures a Client.
type Config struct {
	BaseURL string // the server's /v1 URL; "" is OpenAI's
	APIKey  string // sent as a bearer token; a local server takes any
	// KeyName is where the key came from (OPENAI_API_KEY, or the variable the user named), for
	// the message when it is refused.
	KeyName     string
	Model       string
	MaxAttempts int           // attempts per Generate, first included; default 5
	BaseDelay   time.Duration // first backoff wait, doubled each retry; default 1s
	MaxDelay    time.Duration // default 30s
	HTTPClient  *http.Client  // nil: http.DefaultClient
}

// Client generates with one model of one server.
type Client struct {
	api oai.Client
	cfg Config
}

// New returns a client; nothing is sent until the first call.
func New(cfg Config) (*Client, error) {
	if cfg.Model == "" {
		return nil, errors.New("openai: no model named")
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = 5
	}
	if cfg.BaseDelay <= 0 {
		cfg.BaseDelay = time.Second
	}
	if cfg.MaxDelay <= 0 {
		cfg.MaxDelay = 30 * time.Second
	}
	if cfg.KeyName == "" {
		cfg.KeyName = "OPENAI_API_KEY"
	}
	opts := []option.RequestOption{
		option.WithBaseURL(strings.TrimSuffix(cfg.BaseURL, "/") + "/"),
		option.WithAPIKey(cmpOr(cfg.APIKey, "none")), // a local server wants the header, any value
		option.WithMaxRetries(0),                     // retried here, with the chunks the loop shows
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	return &Client{api: oai.NewClient(opts...), cfg: cfg}, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Generate calls the model, retrying what is worth it, and yields text and reasoning deltas, retries
// and the merged response, as gemini.Client.Generate does: an error ends the sequence, an
// *gemini.Error for a failed call or ctx's error when ctx ends first.
func (c *Client) Generate(ctx context.Context, req *gemini.Request) iter.Seq2[gemini.Chunk, error] {
	return func(yield func(gemini.Chunk, error) bool) {
		p := params(c.cfg.Model, req)
		for attempt := 1; ; attempt++ {
			shown := false
			emit := func(ch gemini.Chunk) bool {
				shown = true
				return yield(ch, nil)
			}
			var resp *gemini.Response
			var err error
			if req.Stream {
				resp, err = c.stream(ctx, p, emit)
			} else {
				resp, err = c.unary(ctx, p, emit)
			}
			if errors.Is(err, errStopped) {
				return
			}
			if err == nil {
				yield(gemini.Chunk{Done: resp}, nil)
				return
			}
			if ctx.Err() != nil {
				yield(gemini.Chunk{}, ctx.Err())
				return
			}
			f := c.classify(err)
			if !f.retry || attempt >= c.cfg.MaxAttempts {
				yield(gemini.Chunk{}, f.giveUp(attempt, c.cfg.KeyName))
				return
			}
			delay := backoff(attempt, c.cfg.BaseDelay, c.cfg.MaxDelay)
			if !yield(gemini.Chunk{Retry: &gemini.Retry{Attempt: attempt + 1, Delay: delay, Err: f.attemptError(attempt), Discard: shown}}, nil) {
				return
			}
			if err := sleep(ctx, delay); err != nil {
				yield(gemini.Chunk{}, err)
				return
			}
		}
	}
}

// errStopped is the consumer having stopped the iteration.
var errStopped = errors.New("stopped")

// ErrStreamCut is a stream that ended before the server said it was done.
var ErrStreamCut = errors.New("the model's reply was cut off before its end")

// stream runs one streamed attempt.
func (c *Client) stream(ctx context.Context, p oai.ChatCompletionNewParams, emit func(gemini.Chunk) bool) (*gemini.Response, error) {
	start := time.Now()
	s := c.api.Chat.Completions.NewStreaming(ctx, p)
	defer func() { _ = s.Close() }() // a read stream: its error is s.Err's
	var m merger
	var first time.Time // the first token of the reply (not a chunk naming the role): the prompt was processed
	finished := false
	for s.Next() {
		ch := s.Current()
		text, thought := m.add(ch)
		if first.IsZero() && (text != "" || thought != "" || len(m.calls) > 0) {
			first = time.Now()
		}
		if thought != "" && !emit(gemini.Chunk{Thought: thought}) {
			return nil, errStopped
		}
		if text != "" && !emit(gemini.Chunk{Text: text}) {
			return nil, errStopped
		}
		finished = finished || m.finish != ""
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	if !finished {
		return nil, ErrStreamCut
	}
	if !first.IsZero() {
		m.u.Wait, m.u.Gen = first.Sub(start), time.Since(first)
	}
	return m.response(), nil
}

// unary runs one attempt that waits for the whole reply.
func (c *Client) unary(ctx context.Context, p oai.ChatCompletionNewParams, emit func(gemini.Chunk) bool) (*gemini.Response, error) {
	start := time.Now()
	cc, err := c.api.Chat.Completions.New(ctx, p)
	if err != nil {
		return nil, err
	}
	took := time.Since(start) // prompt and output together: Gen stays 0
	if len(cc.Choices) == 0 {
		return nil, errors.New("the server answered with no choice")
	}
	var m merger
	m.model = cc.Model
	msg := cc.Choices[0].Message
	m.text.WriteString(msg.Content)
	m.thought.WriteString(reasoning(msg.RawJSON()))
	for i, tc := range msg.ToolCalls {
		m.call(int64(i), tc.ID, tc.Function.Name, tc.Function.Arguments)
	}
	m.finish = cc.Choices[0].FinishReason
	m.usage(cc.Usage)
	m.u.Wait = took
	if m.thought.Len() > 0 && !emit(gemini.Chunk{Thought: m.thought.String()}) {
		return nil, errStopped
	}
	if m.text.Len() > 0 && !emit(gemini.Chunk{Text: m.text.String()}) {
		return nil, errStopped
	}
	return m.response(), nil
}

// reasoning reads the reasoning text servers put beside the content: reasoning_content
// (DeepSeek, vLLM, llama.cpp, LM Studio) or reasoning (Ollama, OpenRouter).
func reasoning(raw string) string {
	var r struct {
		ReasoningContent string `json:"reasoning_content"`
		Reasoning        string `json:"reasoning"`
	}
	if raw == "" || json.Unmarshal([]byte(raw), &r) != nil {
		return ""
	}
	return r.ReasoningContent + r.Reasoning
}

// merger folds a streamed reply into the response the agent appends to its history.
type merger struct {
	text, thought strings.Builder
	calls         []*toolCall
	finish        string
	model         string
	u             gemini.Usage
}

type toolCall struct {
	index    int64
	id, name string
	args     strings.Builder
}

// add folds one chunk in and returns its text and reasoning deltas.
func (m *merger) add(ch oai.ChatCompletionChunk) (text, thought string) {
	if ch.Model != "" {
		m.model = ch.Model
	}
	if ch.JSON.Usage.Valid() && (ch.Usage.PromptTokens > 0 || ch.Usage.CompletionTokens > 0) {
		m.usage(ch.Usage)
	}
	for _, choice := range ch.Choices {
		d := choice.Delta
		text, thought = text+d.Content, thought+reasoning(d.RawJSON())
		for _, tc := range d.ToolCalls {
			m.call(tc.Index, tc.ID, tc.Function.Name, tc.Function.Arguments)
		}
		if choice.FinishReason != "" {
			m.finish = choice.FinishReason
		}
	}
	m.text.WriteString(text)
	m.thought.WriteString(thought)
	return text, thought
}

// call adds a tool call's delta: the first names it, the next ones add to its arguments.
func (m *merger) call(index int64, id, name, args string) {
	var tc *toolCall
	for _, c := range m.calls {
		if c.index == index {
			tc = c
		}
	}
	if tc == nil {
		tc = &toolCall{index: index}
		m.calls = append(m.calls, tc)
	}
	if tc.id == "" {
		tc.id = id
	}
	if tc.name == "" {
		tc.name = name
	}
	tc.args.WriteString(args)
}

func (m *merger) usage(u oai.CompletionUsage) {
	reasoningTokens := int(u.CompletionTokensDetails.ReasoningTokens)
	m.u = gemini.Usage{
		Prompt: int(u.PromptTokens), Cached: int(u.PromptTokensDetails.CachedTokens),
		Candidates: int(u.CompletionTokens) - reasoningTokens, Thoughts: reasoningTokens, Total: int(u.TotalTokens),
	}
}

// response is the merged reply. Arguments that are not a JSON object are passed on as one
// string, for the tool to refuse with a message the model can act on.
func (m *merger) response() *gemini.Response {
	c := &genai.Content{Role: genai.RoleModel}
	if m.text.Len() > 0 {
		c.Parts = append(c.Parts, &genai.Part{Text: m.text.String()})
	}
	for _, tc := range m.calls {
		args := map[string]any{}
		if s := strings.TrimSpace(tc.args.String()); s != "" && json.Unmarshal([]byte(s), &args) != nil {
			args = map[string]any{"_unparsed_arguments": s}
		}
		c.Parts = append(c.Parts, &genai.Part{FunctionCall: &genai.FunctionCall{ID: tc.id, Name: tc.name, Args: args}})
	}
	finish := genai.FinishReasonStop
	switch m.finish {
	case "length":
		finish = genai.FinishReasonMaxTokens
	case "content_filter":
		finish = genai.FinishReasonSafety
	}
	return &gemini.Response{Content: c, Usage: m.u, FinishReason: finish, ModelVersion: m.model}
}

// backoff is the wait after failed attempt number attempt: base doubled per attempt up to max,
// half of it random so that clients failing together do not retry together.
func backoff(attempt int, base, max time.Duration) time.Duration {
	d := base
	for i := 1; i < attempt && d < max; i++ {
		d *= 2
	}
	d = min(d, max)
	return d/2 + time.Duration(rand.Float64()*float64(d/2))
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
