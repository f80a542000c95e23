package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"strings"
	"time"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// Request is one call to the model: the whole conversation so far plus what the model may do.
type Request struct {
	System          string // system instruction text; empty sends none
	Tools           []*genai.FunctionDeclaration
	Contents        []*genai.Content
	Stream          bool  // stream deltas as they come, or wait for the whole reply
	MaxOutputTokens int32 // 0 leaves the model's default
	// IncludeThoughts asks for thought summaries (ThinkingConfig.IncludeThoughts), which arrive
	// as Chunk.Thought. Only thinking models (2.5 and later) accept it.
	IncludeThoughts bool
	// NoFunctionCalls declares Tools but forbids calling them (function calling mode NONE): a
	// side request, such as a summary, keeps the agent's cached prefix without acting.
	NoFunctionCalls bool
	// Thinking sets how much the model thinks: a level (3.x and 4) or a budget (2.5); the zero
	// value sends neither, leaving the model's default.
	Thinking Thinking
	// Cache, if set, is the explicit cache the request reads: System, Tools and the cache's
	// first messages of Contents are not sent (the API refuses a system instruction, tools or a
	// tool config beside a cache).
	Cache *CacheRef
	// Tier is the service tier asked for; "" (standard) sends none. A Flex request is tried
	// once: Flex is best-effort, and what retries one is the caller's fall back to the standard
	// tier, not another wait on shed capacity.
	Tier catalog.Tier
}

// Thinking is a thinkingLevel or a thinkingBudget. Only one is ever sent: the API answers 400 to
// both together, and Level wins if both are set.
type Thinking struct {
	Level  string // MINIMAL, LOW, MEDIUM, HIGH, XHIGH; "" for none
	Budget *int   // tokens; nil for none
}

// Chunk is one step of a Generate call. Exactly one of its fields is set (Text and Thought may
// come together in the unary case).
type Chunk struct {
	// Text and Thought are deltas of the answer and of the thought summary, in arrival order.
	// A unary call yields one chunk holding all of each.
	Text, Thought string
	// Retry says an attempt failed and another one is coming; show it, and reset what was shown
	// of this call when Retry.Discard is set.
	Retry *Retry
	// Done is the merged result, on the last chunk only.
	Done *Response
}

// Retry describes a retry about to happen.
type Retry struct {
	Attempt int           // the attempt about to start: 2 for the first retry
	Delay   time.Duration // the wait before it: RetryInfo's when the server sent one, else backoff
	Err     error         // why the previous attempt failed (an *Error)
	// Discard is true when deltas of the failed attempt were already yielded: they are void,
	// and the next attempt starts the reply over.
	Discard bool
}

// Response is the model's turn, ready to be appended to Request.Contents as is: parts merged,
// thought signatures where the model put them.
type Response struct {
	Content      *genai.Content // Role "model"
	Usage        Usage
	FinishReason genai.FinishReason
	// ModelVersion is the model that served the call (the response's modelVersion): the one
	// asked for, a version of it, or, for a retired model, the one the API routed the call to.
	// "" when the API did not say.
	ModelVersion string
	// ModelStatus is the served model's stage and retirement, when the API sends it (the Gemini
	// API does; Vertex AI does not).
	ModelStatus *genai.ModelStatus
	// Tier is the service tier that served the call: the x-gemini-service-tier header (see
	// TierHeader), else the tier asked for.
	Tier catalog.Tier
}

// Usage is the token accounting of one response, as the API reports it.
type Usage struct {
	Prompt        int // promptTokenCount: the whole input, cached tokens included
	Cached        int // cachedContentTokenCount: the part of Prompt served from cache
	Candidates    int // candidatesTokenCount: the answer
	Thoughts      int // thoughtsTokenCount: thinking, billed as output
	ToolUsePrompt int // toolUsePromptTokenCount
	Total         int // totalTokenCount
	// Wait is the time from the request to the reply's first chunk (the prompt processed) and
	// Gen from the first chunk to the last (the output generated), for a client that measures
	// them (agent/openai, where a local model's time is its cost); 0 otherwise.
	Wait, Gen time.Duration
}

// Generate calls the model, retrying transient failures, and yields deltas, retries and finally
// the merged response. The sequence ends after a chunk with Done or after an error: an *Error
// for a failure of the model call, or ctx's error (errors.Is(err, context.Canceled)) when ctx
// ends first. Stopping the iteration early cancels the call in flight.
func (c *Client) Generate(ctx context.Context, req *Request) iter.Seq2[Chunk, error] {
	return func(yield func(Chunk, error) bool) {
		shown := false // deltas yielded since the consumer last reset
		emit := func(ch Chunk) bool {
			shown = true
			return yield(ch, nil)
		}
		for attempt := 1; ; attempt++ {
			var resp *Response
			var err error
			if req.Stream {
				var more bool
				resp, more, err = c.stream(ctx, req, emit)
				if !more {
					return
				}
			} else {
				resp, err = c.unary(ctx, req)
				if err == nil && !emitWhole(resp.Content, emit) {
					return
				}
			}
			if err == nil {
				yield(Chunk{Done: resp}, nil)
				return
			}
			if ctx.Err() != nil {
				yield(Chunk{}, c.ctxErr(ctx))
				return
			}
			f := classify(err, c.key)
			if !f.retry || attempt >= c.maxAttempts || req.Tier == catalog.TierFlex {
				yield(Chunk{}, c.final(f, attempt))
				return
			}
			delay := backoff(attempt, c.baseDelay, c.maxDelay, rand.Float64())
			if f.hint > 0 {
				delay = min(f.hint, c.maxDelay)
			}
			retry := &Retry{Attempt: attempt + 1, Delay: delay, Err: f.attemptError(attempt), Discard: shown}
			if !yield(Chunk{Retry: retry}, nil) {
				return
			}
			shown = false
			if sleep(ctx, delay) != nil {
				yield(Chunk{}, c.ctxErr(ctx))
				return
			}
		}
	}
}

func (c *Client) ctxErr(ctx context.Context) error {
	return fmt.Errorf("generate with %s: %w", c.model, ctx.Err())
}

// sent is the part of Contents the request sends: after what its cache holds.
func (req *Request) sent() []*genai.Content {
	if req.Cache != nil {
		return req.Contents[min(req.Cache.Messages, len(req.Contents)):]
	}
	return req.Contents
}

// config is built afresh for every attempt: the SDK fills in defaults in place.
func (c *Client) config(req *Request) *genai.GenerateContentConfig {
	cfg := &genai.GenerateContentConfig{
		// Otherwise the SDK resends an unfinished response with a continuationToken on its own,
		// behind the retries and the accounting done here.
		AutomaticContinuation: genai.Ptr(false),
		MaxOutputTokens:       req.MaxOutputTokens,
	}
	if req.Tier == catalog.TierFlex {
		cfg.ServiceTier = genai.ServiceTierFlex
	}
	if ref := req.Cache; ref != nil {
		cfg.CachedContent = ref.Name
		if tc := thinkingConfig(req); tc != nil {
			cfg.ThinkingConfig = tc
		}
		return cfg
	}
	if req.System != "" {
		cfg.SystemInstruction = &genai.Content{Parts: []*genai.Part{{Text: req.System}}}
	}
	if len(req.Tools) > 0 {
		cfg.Tools = []*genai.Tool{{FunctionDeclarations: req.Tools}}
		if req.NoFunctionCalls {
			cfg.ToolConfig = &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{Mode: genai.FunctionCallingConfigModeNone}}
		}
	}
	if tc := thinkingConfig(req); tc != nil {
		cfg.ThinkingConfig = tc
	}
	return cfg
}

// thinkingConfig is the request's thinking configuration, nil when it sets nothing. A level and
// a budget are never sent together.
func thinkingConfig(req *Request) *genai.ThinkingConfig {
	t := req.Thinking
	if !req.IncludeThoughts && t.Level == "" && t.Budget == nil {
		return nil
	}
	tc := &genai.ThinkingConfig{IncludeThoughts: req.IncludeThoughts}
	switch {
	case t.Level != "":
		tc.ThinkingLevel = genai.ThinkingLevel(t.Level)
	case t.Budget != nil:
		tc.ThinkingBudget = genai.Ptr(int32(*t.Budget))
	}
	return tc
}

// stream runs one streaming attempt, passing text and thought deltas to emit. more is false when
// emit asked to stop. A stream that ends without a finish reason fails with ErrStreamCut.
func (c *Client) stream(ctx context.Context, req *Request, emit func(Chunk) bool) (resp *Response, more bool, err error) {
	var (
		m        merger
		usage    *genai.GenerateContentResponseUsageMetadata
		finish   genai.FinishReason
		feedback *genai.GenerateContentResponsePromptFeedback
		served   string
		status   *genai.ModelStatus
		headers  *genai.HTTPResponse
	)
	for r, err := range c.genai.Models.GenerateContentStream(ctx, c.model, req.sent(), c.config(req)) {
		if err != nil {
			var syntax *json.SyntaxError
			if errors.As(err, &syntax) {
				// The connection dropped in the middle of an event, which the SDK reports as
				// that event's JSON being malformed.
				return nil, true, fmt.Errorf("%w: an event was cut off (%v)", ErrStreamCut, syntax)
			}
			return nil, true, err
		}
		if r.UsageMetadata != nil {
			usage = r.UsageMetadata // a running total: the last one counts
		}
		if r.SDKHTTPResponse != nil {
			headers = r.SDKHTTPResponse
		}
		if r.ModelVersion != "" {
			served = r.ModelVersion
		}
		if r.ModelStatus != nil {
			status = r.ModelStatus
		}
		if fb := r.PromptFeedback; fb != nil && fb.BlockReason != "" {
			feedback = fb
		}
		if len(r.Candidates) == 0 || r.Candidates[0] == nil {
			continue
		}
		cand := r.Candidates[0]
		if cand.Content != nil {
			for _, p := range cand.Content.Parts {
				m.add(p)
				if p == nil || p.Text == "" {
					continue
				}
				ch := Chunk{Text: p.Text}
				if p.Thought {
					ch = Chunk{Thought: p.Text}
				}
				if !emit(ch) {
					return nil, false, nil
				}
			}
		}
		if cand.FinishReason != "" && cand.FinishReason != genai.FinishReasonUnspecified {
			finish = cand.FinishReason
		}
	}
	if finish == "" {
		if feedback != nil {
			return nil, true, blocked(feedback)
		}
		return nil, true, ErrStreamCut
	}
	return &Response{Content: m.content(), Usage: usageOf(usage), FinishReason: finish, ModelVersion: served, ModelStatus: status, Tier: servedTier(headers, req.Tier)}, true, nil
}

// unary runs one non-streaming attempt.
func (c *Client) unary(ctx context.Context, req *Request) (*Response, error) {
	r, err := c.genai.Models.GenerateContent(ctx, c.model, req.sent(), c.config(req))
	if err != nil {
		return nil, err
	}
	if len(r.Candidates) == 0 || r.Candidates[0] == nil {
		if fb := r.PromptFeedback; fb != nil && fb.BlockReason != "" {
			return nil, blocked(fb)
		}
		return nil, &Error{Message: "the model returned no answer"}
	}
	cand := r.Candidates[0]
	var m merger
	if cand.Content != nil {
		for _, p := range cand.Content.Parts {
			m.add(p)
		}
	}
	return &Response{Content: m.content(), Usage: usageOf(r.UsageMetadata), FinishReason: cand.FinishReason, ModelVersion: r.ModelVersion, ModelStatus: r.ModelStatus, Tier: servedTier(r.SDKHTTPResponse, req.Tier)}, nil
}

// emitWhole yields the text and thought of a unary reply as one chunk, if there are any.
func emitWhole(content *genai.Content, emit func(Chunk) bool) bool {
	var text, thought strings.Builder
	for _, p := range content.Parts {
		if p.Thought {
			thought.WriteString(p.Text)
		} else {
			text.WriteString(p.Text)
		}
	}
	if text.Len() == 0 && thought.Len() == 0 {
		return true
	}
	return emit(Chunk{Text: text.String(), Thought: thought.String()})
}

// TierHeader is the response header in which the Gemini API names the tier that served a call.
// The body says it too (usageMetadata.serviceTier), but go-genai (v1.77.0 to v1.79.1 at least)
// drops that field from generateContent's usage; the header reaches the response's
// SDKHTTPResponse.
const TierHeader = "x-gemini-service-tier"

// servedTier is the tier the response's header names, else the one asked.
func servedTier(h *genai.HTTPResponse, asked catalog.Tier) catalog.Tier {
	reported := ""
	if h != nil {
		reported = h.Headers.Get(TierHeader)
	}
	return catalog.ServedTier(reported, asked)
}

func usageOf(u *genai.GenerateContentResponseUsageMetadata) Usage {
	if u == nil {
		return Usage{}
	}
	return Usage{
		Prompt:        int(u.PromptTokenCount),
		Cached:        int(u.CachedContentTokenCount),
		Candidates:    int(u.CandidatesTokenCount),
		Thoughts:      int(u.ThoughtsTokenCount),
		ToolUsePrompt: int(u.ToolUsePromptTokenCount),
		Total:         int(u.TotalTokenCount),
	}
}
