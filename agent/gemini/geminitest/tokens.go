package geminitest

import (
	"encoding/json"
	"unicode/utf8"
)

// EstimateTokens is the fake's tokenizer: ceil(chars/4). It is deterministic, so usage numbers
// in tests are exact, and it grows with the request like a real tokenizer does, so the effect
// of truncation and compaction on the prompt is a real measurement.
func EstimateTokens(chars int) int {
	return (chars + 3) / 4
}

// promptChars counts the characters the computed promptTokenCount is based on: system
// instruction, contents (text, function call names and JSON args, function response JSON) and
// tool declarations JSON. countTokens may nest the request under generateContentRequest.
func promptChars(body map[string]any) int {
	n := 0
	if si, ok := body["systemInstruction"].(map[string]any); ok {
		n += contentChars(si)
	}
	if contents, ok := body["contents"].([]any); ok {
		for _, c := range contents {
			if c, ok := c.(map[string]any); ok {
				n += contentChars(c)
			}
		}
	}
	if tools, ok := body["tools"]; ok {
		n += jsonChars(tools)
	}
	if nested, ok := body["generateContentRequest"].(map[string]any); ok {
		n += promptChars(nested)
	}
	return n
}

func contentChars(c map[string]any) int {
	parts, _ := c["parts"].([]any)
	n := 0
	for _, p := range parts {
		p, ok := p.(map[string]any)
		if !ok {
			continue
		}
		if s, ok := p["text"].(string); ok {
			n += utf8.RuneCountInString(s)
		}
		if fc, ok := p["functionCall"].(map[string]any); ok {
			name, _ := fc["name"].(string)
			n += utf8.RuneCountInString(name)
			if args, ok := fc["args"]; ok {
				n += jsonChars(args)
			}
		}
		if fr, ok := p["functionResponse"]; ok {
			n += jsonChars(fr)
		}
	}
	return n
}

func jsonChars(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return utf8.RuneCount(b)
}

// replyUsage computes the usage of a reply to a prompt of promptTokens: candidates counts
// answer text and function calls, thoughts counts thought text, as the API splits them.
func replyUsage(promptTokens int, parts []Part) Usage {
	var answer, thought int
	for _, p := range parts {
		if p.Thought {
			thought += utf8.RuneCountInString(p.Text)
		} else {
			answer += utf8.RuneCountInString(p.Text)
		}
		if fc := p.FunctionCall; fc != nil {
			answer += utf8.RuneCountInString(fc.Name) + utf8.RuneCount(fc.args())
		}
	}
	return Usage{
		Prompt:     promptTokens,
		Candidates: EstimateTokens(answer),
		Thoughts:   EstimateTokens(thought),
	}
}

// args is the JSON sent as the call's "args": RawArgs verbatim, else Args ({} when empty, as
// the API sends a call without arguments).
func (fc *FunctionCall) args() json.RawMessage {
	if len(fc.RawArgs) > 0 {
		return fc.RawArgs
	}
	if fc.Args == nil {
		return json.RawMessage("{}")
	}
	b, err := json.Marshal(fc.Args)
	if err != nil {
		// Args come from JSON or from a test's literal; a value JSON cannot hold is a bug in
		// the test, reported where it is visible: in the reply.
		b, _ = json.Marshal(map[string]string{"geminitest_error": err.Error()})
	}
	return b
}
