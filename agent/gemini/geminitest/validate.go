package geminitest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// reject returns the message of the 400 the API answers req with when model serves it, or "":
// a thinking budget beside a level, a budget to a model that takes none (Gemini 4), a level to a
// model set by budget (2.5) or one it does not accept; a function call of the current turn whose
// thought signature did not come back as the fake sent it (3.x and 4). s.mu must be held.
func (s *Server) reject(model string, req Request) string {
	level, budget := req.ThinkingLevel, req.ThinkingBudget
	if level != "" && budget != nil {
		return "Unable to submit request because thinking_budget and thinking_level are not supported together."
	}
	m, known := catalog.Builtin().Lookup(model)
	if known {
		th := m.Thinking
		switch {
		case budget != nil && th.NoBudget:
			return fmt.Sprintf("thinking_budget is not supported by %s; use thinking_level.", model)
		case level != "" && len(th.Levels) == 0:
			return fmt.Sprintf("thinking_level is not supported by %s; use thinking_budget.", model)
		case level != "" && !slices.Contains(th.Levels, level):
			return fmt.Sprintf("thinking_level %s is not supported by %s; supported: %s.", level, model, strings.Join(th.Levels, ", "))
		}
	}
	if !needsSignatures(m, known, model) {
		return ""
	}
	for i, c := range activeLoop(req.Contents) {
		if c == nil || c.Role != genai.RoleModel {
			continue
		}
		for _, p := range c.Parts {
			if p == nil || p.FunctionCall == nil {
				continue
			}
			// The first call of a step carries the step's signature; the fake checks the ones it
			// sent.
			sent, ok := s.signatures[callKey(p.FunctionCall.Name, p.FunctionCall.Args)]
			if ok && !slices.Contains(sent, base64.StdEncoding.EncodeToString(p.ThoughtSignature)) {
				return fmt.Sprintf("Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:%s` , position %d. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.", p.FunctionCall.Name, i+1)
			}
			break
		}
	}
	return ""
}

// needsSignatures tells whether model validates the thought signatures of the current turn:
// every model set by thinking level (3.x and 4), and a model the catalogue does not know unless
// it is a 2.x.
func needsSignatures(m catalog.Model, known bool, model string) bool {
	if known {
		return len(m.Thinking.Levels) > 0
	}
	return !strings.HasPrefix(strings.TrimPrefix(model, "models/"), "gemini-2")
}

// activeLoop is the current turn: the contents from the last user message with text (not only
// function responses) on.
func activeLoop(contents []*genai.Content) []*genai.Content {
	for i := len(contents) - 1; i >= 0; i-- {
		c := contents[i]
		if c == nil || c.Role != genai.RoleUser {
			continue
		}
		for _, p := range c.Parts {
			if p != nil && p.Text != "" {
				return contents[i:]
			}
		}
	}
	return contents
}

// callKey identifies a function call by its name and arguments (JSON, keys sorted).
func callKey(name string, args map[string]any) string {
	b, err := json.Marshal(args)
	if err != nil || len(args) == 0 {
		b = []byte("{}")
	}
	return name + "\x00" + string(b)
}

// remember notes the thought signatures of the function calls t sends. s.mu must be held.
func (s *Server) remember(t Turn) {
	for _, p := range t.Parts {
		if p.FunctionCall == nil || p.ThoughtSignature == "" {
			continue
		}
		var args map[string]any
		_ = json.Unmarshal(p.FunctionCall.args(), &args) // invalid args are sent as they are; none to check
		if s.signatures == nil {
			s.signatures = map[string][]string{}
		}
		key := callKey(p.FunctionCall.Name, args)
		if !slices.Contains(s.signatures[key], p.ThoughtSignature) {
			s.signatures[key] = append(s.signatures[key], p.ThoughtSignature)
		}
	}
}
