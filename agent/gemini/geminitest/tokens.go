package geminitest

import (
	"encoding/json"
	"maps"
	"strings"
	"unicode/utf8"

	"google.golang.org/genai"
)

// charsPerToken is the fake tokenizer's ratio.
const charsPerToken = 4

// EstimateTokens is the fake's tokenizer: ceil(chars/4). It is deterministic, so usage numbers
// in tests are exact, and it grows with the request like a real tokenizer does, so the effect
// of truncation and compaction on the prompt is a real measurement.
func EstimateTokens(chars int) int {
	return (chars + charsPerToken - 1) / charsPerToken
}

// promptSegments is the request body as the model reads it, in segments (see segment): the
// system instruction, the tool declarations JSON, then the contents. What is counted is text,
// function call names and JSON args, and function response JSON. countTokens may nest the
// request under generateContentRequest.
func promptSegments(body map[string]any) []segment {
	var segs []segment
	if si, ok := body["systemInstruction"].(map[string]any); ok {
		segs = appendContent(segs, "systemInstruction", si)
	}
	if tools, ok := body["tools"]; ok {
		segs = append(segs, newSegment("tools", jsonString(tools)))
	}
	if contents, ok := body["contents"].([]any); ok {
		for _, c := range contents {
			if c, ok := c.(map[string]any); ok {
				role, _ := c["role"].(string)
				segs = appendContent(segs, "content "+role, c)
			}
		}
	}
	if nested, ok := body["generateContentRequest"].(map[string]any); ok {
		segs = append(segs, promptSegments(nested)...)
	}
	return segs
}

// promptChars counts the characters promptTokenCount is computed from.
func promptChars(segs []segment) int {
	n := 0
	for _, s := range segs {
		n += s.chars
	}
	return n
}

// appendContent appends a message: a segment that starts it (its role, in frame) and one per
// part.
func appendContent(segs []segment, frame string, c map[string]any) []segment {
	segs = append(segs, newSegment(frame, ""))
	parts, _ := c["parts"].([]any)
	for _, p := range parts {
		if p, ok := p.(map[string]any); ok {
			segs = append(segs, partSegment(p))
		}
	}
	return segs
}

// partSegment is one part: its counted characters in the body, and in the frame which of them
// it has and every other field (thought, thoughtSignature, a call's id...), which must be equal
// too for the prefix to go on.
func partSegment(p map[string]any) segment {
	var body strings.Builder
	var kinds []string
	rest := maps.Clone(p)
	if s, ok := p["text"].(string); ok {
		body.WriteString(s)
		kinds = append(kinds, "text")
		delete(rest, "text")
	}
	if fc, ok := p["functionCall"].(map[string]any); ok {
		fcRest := maps.Clone(fc)
		name, _ := fc["name"].(string)
		body.WriteString(name)
		delete(fcRest, "name")
		if args, ok := fc["args"]; ok {
			body.WriteString(jsonString(args))
			delete(fcRest, "args")
		}
		kinds = append(kinds, "functionCall")
		rest["functionCall"] = fcRest
	}
	if fr, ok := p["functionResponse"]; ok {
		body.WriteString(jsonString(fr))
		kinds = append(kinds, "functionResponse")
		delete(rest, "functionResponse")
	}
	return newSegment("part "+strings.Join(kinds, "+")+" "+jsonString(rest), body.String())
}

// jsonString is v as JSON, map keys sorted: the same value always gives the same string.
func jsonString(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "" // v was decoded from JSON: it always encodes
	}
	return string(b)
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

// PartBodies are what promptTokenCount counts of each part of c, in order, as the genai client
// sends it: the characters the fake bills, and whose shared prefix with an earlier request's it
// caches. A cost model outside the fake (the cost tests' mark) counts with it in the fake's units.
func PartBodies(c *genai.Content) ([]string, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	var out []string
	for _, s := range appendContent(nil, "", m)[1:] {
		out = append(out, s.key[s.frame:])
	}
	return out, nil
}

// FixedChars counts what promptTokenCount counts of a request body before its messages: the
// system instruction and the tool declarations.
func FixedChars(body []byte) (int, error) {
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		return 0, err
	}
	delete(m, "contents")
	return promptChars(promptSegments(m)), nil
}
