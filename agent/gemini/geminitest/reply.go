package geminitest

import (
	"encoding/json"
	"net/http"
)

// The wire types below are the JSON the Gemini API sends, kept separate from Script so that the
// script format can stay small and the wire format exact (e.g. "text": "" on a part that only
// carries a signature).

type wireResponse struct {
	Candidates    []wireCandidate `json:"candidates"`
	UsageMetadata *wireUsage      `json:"usageMetadata,omitempty"`
	ModelVersion  string          `json:"modelVersion,omitempty"`
	ModelStatus   *wireStatus     `json:"modelStatus,omitempty"`
	ResponseID    string          `json:"responseId,omitempty"`
}

// wireStatus is a response's modelStatus: the stage of the model that answered.
type wireStatus struct {
	ModelStage     string `json:"modelStage,omitempty"`
	RetirementTime string `json:"retirementTime,omitempty"`
	Message        string `json:"message,omitempty"`
}

type wireCandidate struct {
	Content           wireContent `json:"content"`
	FinishReason      string      `json:"finishReason,omitempty"`
	ContinuationToken string      `json:"continuationToken,omitempty"`
	Index             int         `json:"index"`
}

type wireContent struct {
	Role  string     `json:"role"`
	Parts []wirePart `json:"parts,omitempty"`
}

type wirePart struct {
	Text             *string   `json:"text,omitempty"`
	Thought          bool      `json:"thought,omitempty"`
	ThoughtSignature string    `json:"thoughtSignature,omitempty"`
	FunctionCall     *wireCall `json:"functionCall,omitempty"`
}

type wireCall struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

type wireUsage struct {
	PromptTokenCount        int    `json:"promptTokenCount"`
	CachedContentTokenCount int    `json:"cachedContentTokenCount,omitempty"`
	CandidatesTokenCount    int    `json:"candidatesTokenCount,omitempty"`
	ThoughtsTokenCount      int    `json:"thoughtsTokenCount,omitempty"`
	ToolUsePromptTokenCount int    `json:"toolUsePromptTokenCount,omitempty"`
	TotalTokenCount         int    `json:"totalTokenCount"`
	ServiceTier             string `json:"serviceTier,omitempty"`
}

type wireError struct {
	Error wireErrorBody `json:"error"`
}

type wireErrorBody struct {
	Code    int              `json:"code"`
	Message string           `json:"message"`
	Status  string           `json:"status"`
	Details []map[string]any `json:"details,omitempty"`
}

func (u Usage) wire() *wireUsage {
	return &wireUsage{
		PromptTokenCount:        u.Prompt,
		CachedContentTokenCount: u.Cached,
		CandidatesTokenCount:    u.Candidates,
		ThoughtsTokenCount:      u.Thoughts,
		ToolUsePromptTokenCount: u.ToolUsePrompt,
		TotalTokenCount:         u.Prompt + u.Candidates + u.Thoughts + u.ToolUsePrompt,
		ServiceTier:             u.ServiceTier,
	}
}

// piece is one part, or one slice of a text part, as it goes out in one event.
func piece(p Part, text string, last bool) wirePart {
	wp := wirePart{Thought: p.Thought}
	if last {
		wp.ThoughtSignature = p.ThoughtSignature
	}
	if p.FunctionCall != nil {
		wp.FunctionCall = &wireCall{Name: p.FunctionCall.Name, Args: p.FunctionCall.args()}
		if text != "" {
			wp.Text = &text
		}
		return wp
	}
	wp.Text = &text
	return wp
}

// unaryReply is the whole reply in one response.
func unaryReply(model string, status *wireStatus, t Turn, u Usage) wireResponse {
	parts := make([]wirePart, 0, len(t.Parts))
	for _, p := range t.Parts {
		parts = append(parts, piece(p, p.Text, true))
	}
	return wireResponse{
		Candidates:    []wireCandidate{{Content: wireContent{Role: "model", Parts: parts}, FinishReason: finishReason(t), ContinuationToken: t.ContinuationToken}},
		UsageMetadata: u.wire(),
		ModelVersion:  model,
		ModelStatus:   status,
	}
}

// streamReply is the reply as SSE events, spread as Turn.Chunks says; the last event carries the
// finish reason and the usage.
func streamReply(model string, status *wireStatus, t Turn, u Usage) []wireResponse {
	var groups [][]wirePart
	n := len(t.Parts)
	switch {
	case n == 0:
		groups = [][]wirePart{nil}
	case t.Chunks == 0 || t.Chunks == n:
		for _, p := range t.Parts {
			groups = append(groups, []wirePart{piece(p, p.Text, true)})
		}
	case t.Chunks < n:
		// Fewer events than parts: whole parts share events.
		for e := range t.Chunks {
			var g []wirePart
			for _, p := range t.Parts[e*n/t.Chunks : (e+1)*n/t.Chunks] {
				g = append(g, piece(p, p.Text, true))
			}
			groups = append(groups, g)
		}
	default:
		for i, k := range splitCounts(t.Parts, t.Chunks) {
			p := t.Parts[i]
			if p.FunctionCall != nil || k == 1 {
				groups = append(groups, []wirePart{piece(p, p.Text, true)})
				continue
			}
			r := []rune(p.Text)
			for j := range k {
				s := string(r[j*len(r)/k : (j+1)*len(r)/k])
				groups = append(groups, []wirePart{piece(p, s, j == k-1)})
			}
		}
	}
	events := make([]wireResponse, len(groups))
	for i, g := range groups {
		events[i] = wireResponse{
			Candidates:   []wireCandidate{{Content: wireContent{Role: "model", Parts: g}}},
			ModelVersion: model,
			ModelStatus:  status,
		}
	}
	last := &events[len(events)-1]
	last.Candidates[0].FinishReason = finishReason(t)
	last.Candidates[0].ContinuationToken = t.ContinuationToken
	last.UsageMetadata = u.wire()
	return events
}

// splitCounts says into how many pieces each part goes so that there are chunks events in all
// (chunks > len(parts)): every part gets one, and the rest go round-robin to text parts that
// still have a rune to spare.
func splitCounts(parts []Part, chunks int) []int {
	counts := make([]int, len(parts))
	runes := make([]int, len(parts))
	for i, p := range parts {
		counts[i] = 1
		if p.FunctionCall == nil {
			runes[i] = len([]rune(p.Text))
		}
	}
	extra := chunks - len(parts)
	for extra > 0 {
		gave := false
		for i := range parts {
			if extra > 0 && counts[i] < runes[i] {
				counts[i]++
				extra--
				gave = true
			}
		}
		if !gave {
			break
		}
	}
	return counts
}

func finishReason(t Turn) string {
	if t.FinishReason == "" {
		return "STOP"
	}
	return t.FinishReason
}

// statusNames are the google.rpc.Code names the API puts in "status" for each HTTP status.
var statusNames = map[int]string{
	400: "INVALID_ARGUMENT",
	401: "UNAUTHENTICATED",
	403: "PERMISSION_DENIED",
	404: "NOT_FOUND",
	408: "DEADLINE_EXCEEDED",
	409: "ABORTED",
	429: "RESOURCE_EXHAUSTED",
	499: "CANCELLED",
	500: "INTERNAL",
	501: "UNIMPLEMENTED",
	502: "UNAVAILABLE",
	503: "UNAVAILABLE",
	504: "DEADLINE_EXCEEDED",
}

func statusName(code int) string {
	if s, ok := statusNames[code]; ok {
		return s
	}
	return "UNKNOWN"
}

// errorBody is the API's error JSON for a fault.
func errorBody(f Fault) wireError {
	msg := f.Message
	if msg == "" {
		msg = http.StatusText(f.Status)
	}
	e := wireError{Error: wireErrorBody{Code: f.Status, Message: msg, Status: statusName(f.Status)}}
	if f.RetryDelay != "" {
		e.Error.Details = []map[string]any{{
			"@type":      "type.googleapis.com/google.rpc.RetryInfo",
			"retryDelay": f.RetryDelay,
		}}
	}
	return e
}
