// Package geminitest is a scripted fake of the Gemini REST API (v1beta) that the real
// google.golang.org/genai client can talk to. Tests and the offline demo point the client at it
// (Backend: genai.BackendGeminiAPI, HTTPOptions.BaseURL: server.URL(), any API key) so that
// streaming, usage, thought signatures, retries and faults go through the same code paths as
// against the real service, without touching the network.
package geminitest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// DefaultInputTokenLimit is what GET models/M reports when a script sets no limit, for a model
// the catalogue does not know (a known one reports the catalogue's limit).
const DefaultInputTokenLimit = catalog.FallbackInputTokenLimit

// OutputTokenLimit is what GET models/M reports as outputTokenLimit for a model the catalogue does
// not know.
const OutputTokenLimit = 65536

// Script is what the fake model will answer, turn by turn. It is plain data so that it can live
// in a JSON file (see LoadScript) shared by Go tests and the editors' end-to-end tests.
type Script struct {
	// InputTokenLimit is reported by GET models/M; 0 means the model catalogue's limit for the
	// model (DefaultInputTokenLimit for a model it does not know). Scripts lower
	// it to make context-window pressure (truncation, compaction) happen in a few turns.
	InputTokenLimit int `json:"inputTokenLimit,omitempty"`
	// Cache sets how implicit caching is billed; the zero value bills it as the API does.
	Cache Cache `json:"cache,omitzero"`
	// Routes answer requests for a model with another, as the API does for the older keys of a
	// retired model: by the model asked for. A model the catalogue marks retired and no route
	// names answers 404, as it does to new keys.
	Routes map[string]Route `json:"routes,omitempty"`
	// Models are the ids GET models (models.list) answers, in order, each with the catalogue's
	// limits (DefaultInputTokenLimit for one it does not know); nil lists the catalogue's models
	// that are not retired. An id starting "embedding" or "text-embedding" is listed as an
	// embedding model (embedContent only).
	Models []string `json:"models,omitempty"`
	// Flex is how Flex requests are served and shed (see Flex).
	Flex Flex `json:"flex,omitzero"`
	// Turns are the replies to generateContent and streamGenerateContent requests. Each is
	// consumed by exactly one request; see Turn.Match for how a request picks its turn.
	Turns []Turn `json:"turns"`
}

// Route is the model that answers requests for another, and the modelStatus it reports.
type Route struct {
	To string `json:"to"` // the model that answers: the responses' modelVersion
	// Stage, if set, is sent as modelStatus.modelStage (STABLE, DEPRECATED, RETIRED...), with
	// RetirementTime (RFC 3339) and Message.
	Stage          string `json:"stage,omitempty"`
	RetirementTime string `json:"retirementTime,omitempty"`
	Message        string `json:"message,omitempty"`
}

// Turn is one reply of the model, or one failure in its place.
type Turn struct {
	// Match, if set, restricts this turn to a request whose raw JSON body contains Match. A
	// request is served by the first pending turn whose Match it contains, else by the first
	// pending turn without Match. It lets a script answer side requests (a compaction summary,
	// say) wherever they happen to come in the sequence.
	Match string `json:"match,omitempty"`
	// Also are more strings the body must contain, with Match, for this turn to serve it (a
	// summary of a history that holds a given call, say).
	Also []string `json:"also,omitempty"`
	// Agent, if set, restricts this turn to the requests of one agent: those whose first
	// message (the request that began its conversation, or the task a subagent was given)
	// contains Agent; and such a request is never served by a turn of another Agent. It scripts a
	// parent and its subagents apart, whatever the order their requests come in: the parent's
	// later requests hold a task's words too (its call), but not as their first message.
	Agent string `json:"agent,omitempty"`
	// Parts are the model's content.
	Parts []Part `json:"parts,omitempty"`
	// Usage, if set, is reported as is; nil means computed from the request and the reply with
	// the ceil(characters/4) rule (see EstimateTokens), so that context growth is measurable,
	// and with the prefix shared with earlier requests as cached tokens (see Cache).
	Usage *Usage `json:"usage,omitempty"`
	// Chunks is how many SSE events a streamed reply is spread over. Text is split across
	// events at rune boundaries; a function call is never split; a thought signature rides on
	// the last piece of its part, as Gemini sends it. 0 means one event per part. Fewer events
	// are sent when the text is too short to be split that many times.
	Chunks int `json:"chunks,omitempty"`
	// Delay, e.g. "0.3s", holds the reply back this long, as a slow model would (a summary that
	// comes back after the agent made more calls, say); a cancelled request stops waiting.
	Delay string `json:"delay,omitempty"`
	// FinishReason is sent on the last event; empty means STOP.
	FinishReason string `json:"finishReason,omitempty"`
	// ContinuationToken, standard base64, is sent on the last event's candidate: with
	// FinishReason "CONTINUATION" it is a reply the API would have the client fetch the rest of
	// (go-genai's automatic continuation). A request that sends it back is refused.
	ContinuationToken string `json:"continuationToken,omitempty"`
	// Fault, if set, makes this turn fail instead of (or part way through) the reply.
	Fault *Fault `json:"fault,omitempty"`
}

// Part is one part of a reply. Exactly what the genai client decodes into a genai.Part.
type Part struct {
	Text    string `json:"text,omitempty"`
	Thought bool   `json:"thought,omitempty"`
	// ThoughtSignature is sent as is, so it must be standard base64 as on the wire (the client
	// decodes it into bytes): "c2lnLTE=" arrives as []byte("sig-1").
	ThoughtSignature string        `json:"thoughtSignature,omitempty"`
	FunctionCall     *FunctionCall `json:"functionCall,omitempty"`
}

// FunctionCall asks the caller to run a tool.
type FunctionCall struct {
	Name string         `json:"name"`
	Args map[string]any `json:"args,omitempty"`
	// RawArgs, if set, is sent verbatim as "args" instead of Args, so a test can send what a
	// well-behaved API never would (a string, say) and see how the client copes.
	RawArgs json.RawMessage `json:"rawArgs,omitempty"`
}

// Usage is the usageMetadata of a reply. Prompt includes Cached, as in the API.
type Usage struct {
	Prompt        int `json:"promptTokenCount,omitempty"`
	Cached        int `json:"cachedContentTokenCount,omitempty"`
	Candidates    int `json:"candidatesTokenCount,omitempty"`
	Thoughts      int `json:"thoughtsTokenCount,omitempty"`
	ToolUsePrompt int `json:"toolUsePromptTokenCount,omitempty"`
	// ServiceTier is the tier that served the reply, sent as usageMetadata.serviceTier and the
	// x-gemini-service-tier header; empty in a script means the tier the fake served (see Flex).
	ServiceTier string `json:"serviceTier,omitempty"`
}

// Fault is a failure the way the API reports it, so retry and error paths can be tested.
type Fault struct {
	// Status is the HTTP status sent instead of the reply (429, 500, 503, 400, 401, 403...).
	// 0 means no status at all: a unary request has its connection dropped, a stream is cut
	// after AfterEvents events without an error event or a finishReason.
	Status int `json:"status,omitempty"`
	// Message is the error message; empty means the status text.
	Message string `json:"message,omitempty"`
	// RetryDelay, e.g. "2s" or "0.05s", adds a google.rpc.RetryInfo detail to the error body,
	// as the API does on 429.
	RetryDelay string `json:"retryDelay,omitempty"`
	// AfterEvents, for streaming requests only, sends this many SSE events of the reply (without
	// finishReason or usage) before the fault: an error event if Status != 0, else a closed
	// connection.
	AfterEvents int `json:"afterEvents,omitempty"`
}

// LoadScript reads a JSON script. Unknown fields are errors, so that a typo in a hand-written
// script fails loudly instead of silently changing the scenario.
func LoadScript(path string) (Script, error) {
	f, err := os.Open(path)
	if err != nil {
		return Script{}, fmt.Errorf("load script: %w", err)
	}
	defer f.Close()
	dec := json.NewDecoder(f)
	dec.DisallowUnknownFields()
	var s Script
	if err := dec.Decode(&s); err != nil {
		return Script{}, fmt.Errorf("load script %s: %w", path, err)
	}
	if err := validateTurns(s.Turns, 0); err != nil {
		return Script{}, fmt.Errorf("load script %s: %w", path, err)
	}
	if s.InputTokenLimit < 0 {
		return Script{}, fmt.Errorf("load script %s: negative inputTokenLimit %d", path, s.InputTokenLimit)
	}
	if err := s.Cache.validate(); err != nil {
		return Script{}, fmt.Errorf("load script %s: %w", path, err)
	}
	if err := s.Flex.validate(); err != nil {
		return Script{}, fmt.Errorf("load script %s: %w", path, err)
	}
	return s, nil
}

// validateTurns reports the first turn the server could not send as the API would; first is the
// index of turns[0] in the whole script, for the message.
func validateTurns(turns []Turn, first int) error {
	for i, t := range turns {
		if err := validateTurn(t); err != nil {
			return fmt.Errorf("turn %d: %w", first+i, err)
		}
	}
	return nil
}

func validateTurn(t Turn) error {
	if t.Chunks < 0 {
		return fmt.Errorf("negative chunks %d", t.Chunks)
	}
	if t.Delay != "" {
		if d, err := time.ParseDuration(t.Delay); err != nil || d < 0 {
			return fmt.Errorf("delay %q is not a duration such as \"0.3s\"", t.Delay)
		}
	}
	for j, p := range t.Parts {
		if p.ThoughtSignature != "" {
			if _, err := base64.StdEncoding.DecodeString(p.ThoughtSignature); err != nil {
				return fmt.Errorf("part %d: thoughtSignature %q is not standard base64: %w", j, p.ThoughtSignature, err)
			}
		}
		if fc := p.FunctionCall; fc != nil {
			if fc.Name == "" {
				return fmt.Errorf("part %d: functionCall without a name", j)
			}
			if len(fc.RawArgs) > 0 && !json.Valid(fc.RawArgs) {
				return fmt.Errorf("part %d: functionCall rawArgs is not valid JSON", j)
			}
		}
	}
	if f := t.Fault; f != nil {
		if f.Status != 0 && (f.Status < 400 || f.Status > 599) {
			return fmt.Errorf("fault status %d is not an HTTP error status", f.Status)
		}
		if f.AfterEvents < 0 {
			return fmt.Errorf("negative fault afterEvents %d", f.AfterEvents)
		}
		if f.RetryDelay != "" {
			if _, err := time.ParseDuration(f.RetryDelay); err != nil {
				return fmt.Errorf("fault retryDelay: %w", err)
			}
		}
	}
	return nil
}
