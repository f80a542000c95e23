package geminitest

import (
	"encoding/json"
	"strings"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// Request is one request the fake received, kept so that a test can assert on what the model
// was sent (that a function call kept its thought signature, that old turns were compacted away,
// that no continuationToken went out).
type Request struct {
	Method string
	Path   string // URL path, e.g. /v1beta/models/gemini-2.5-flash:streamGenerateContent
	Model  string // e.g. gemini-2.5-flash
	Stream bool   // streamGenerateContent
	// HasAPIKey reports whether an x-goog-api-key header came with the request. Its value is
	// never kept.
	HasAPIKey bool
	Body      []byte // raw JSON body

	// The body decoded, for generateContent, streamGenerateContent and countTokens.
	Contents          []*genai.Content
	SystemInstruction *genai.Content
	Tools             int      // entries in "tools"
	Functions         []string // names of the function declarations, in order
	// FunctionCalling is toolConfig.functionCallingConfig.mode ("NONE", "ANY", "AUTO"), "" when
	// the request sets none.
	FunctionCalling string
	// ThinkingLevel and ThinkingBudget are generationConfig.thinkingConfig's, "" and nil when
	// the request sets none.
	ThinkingLevel  string
	ThinkingBudget *int

	// Tier is the serviceTier the request asked for, as sent ("" for none); ServedTier the tier
	// the fake served it on (see Flex), set once a turn or a shed answered it.
	Tier       string
	ServedTier catalog.Tier
	// Cost is what the API bills the reply, in US dollars at the catalogue's prices for the
	// served model and tier on the fake's date; Priced is false when the catalogue has no price
	// for the model (Cost is then 0, not free). Both zero when no reply came.
	Cost   float64
	Priced bool

	// Turn is the index in the script (counting appended turns) of the turn that served the
	// request, or -1 when no turn did (model info, countTokens, rejected or exhausted).
	Turn int
	// Usage is the usageMetadata the reply carried, cached tokens included; nil when no reply
	// did (no turn served it, or the turn was a fault).
	Usage *Usage
}

// decodedBody is the part of a request body that Request exposes.
type decodedBody struct {
	Contents          []*genai.Content `json:"contents"`
	SystemInstruction *genai.Content   `json:"systemInstruction"`
	Tools             []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	ToolConfig struct {
		FunctionCallingConfig struct {
			Mode string `json:"mode"`
		} `json:"functionCallingConfig"`
	} `json:"toolConfig"`
	GenerationConfig struct {
		ThinkingConfig struct {
			ThinkingLevel  string `json:"thinkingLevel"`
			ThinkingBudget *int   `json:"thinkingBudget"`
		} `json:"thinkingConfig"`
	} `json:"generationConfig"`
	GenerateContentRequest *decodedBody `json:"generateContentRequest"`
	ServiceTier            string       `json:"serviceTier"`
}

// decode fills the decoded view of r from its body; countTokens may nest the request.
func (r *Request) decode() error {
	var b decodedBody
	if err := json.Unmarshal(r.Body, &b); err != nil {
		return err
	}
	if b.GenerateContentRequest != nil && len(b.Contents) == 0 {
		b = *b.GenerateContentRequest
	}
	r.Tier = b.ServiceTier
	r.Contents = b.Contents
	r.SystemInstruction = b.SystemInstruction
	r.Tools = len(b.Tools)
	r.FunctionCalling = b.ToolConfig.FunctionCallingConfig.Mode
	r.ThinkingLevel = b.GenerationConfig.ThinkingConfig.ThinkingLevel
	r.ThinkingBudget = b.GenerationConfig.ThinkingConfig.ThinkingBudget
	for _, t := range b.Tools {
		for _, fd := range t.FunctionDeclarations {
			r.Functions = append(r.Functions, fd.Name)
		}
	}
	return nil
}

// hasContinuationToken reports whether the body asks to resume a response, which the fake (like
// this project) never wants: the genai client sends it on its own unless AutomaticContinuation is
// false.
func hasContinuationToken(body map[string]any) bool {
	if _, ok := body["continuationToken"]; ok {
		return true
	}
	if gc, ok := body["generationConfig"].(map[string]any); ok {
		if _, ok := gc["continuationToken"]; ok {
			return true
		}
	}
	return false
}

// firstText is the text of a request's first message: what Turn.Agent is matched against.
func firstText(contents []*genai.Content) string {
	if len(contents) == 0 || contents[0] == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range contents[0].Parts {
		if p != nil {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}
