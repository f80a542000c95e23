package openai

import (
	"encoding/json"
	"fmt"
	"strings"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"
	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent/gemini"
)

// params translates the agent's request, which is Gemini's shape, into a Chat Completions one: the
// system instruction first, each user content as a user message, each function response as a
// tool message answering its call, each model content as an assistant message with its tool
// calls. Thought parts are not sent back: Chat Completions has no place for them.
func params(model string, req *gemini.Request) oai.ChatCompletionNewParams {
	p := oai.ChatCompletionNewParams{Model: shared.ChatModel(model)}
	if req.System != "" {
		p.Messages = append(p.Messages, oai.SystemMessage(req.System))
	}
	ids := callIDs{}
	for _, c := range req.Contents {
		if c == nil {
			continue
		}
		if c.Role == genai.RoleModel {
			if m, ok := assistant(c, &ids); ok {
				p.Messages = append(p.Messages, m)
			}
			continue
		}
		p.Messages = append(p.Messages, userSide(c, &ids)...)
	}
	for _, d := range req.Tools {
		p.Tools = append(p.Tools, tool(d))
	}
	if req.NoFunctionCalls && len(p.Tools) > 0 {
		p.ToolChoice = oai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: oai.String("none")}
	}
	if req.MaxOutputTokens > 0 {
		p.MaxCompletionTokens = oai.Int(int64(req.MaxOutputTokens))
	}
	if req.Stream {
		p.StreamOptions = oai.ChatCompletionStreamOptionsParam{IncludeUsage: oai.Bool(true)}
	}
	return p
}

// callIDs gives the calls of a history that has none (a session begun on Gemini, which names
// calls only by their function) ids, and the responses the ids of their calls, in order.
type callIDs struct {
	n       int
	pending map[string][]string // function name → ids of its calls not yet answered
}

func (c *callIDs) call(fc *genai.FunctionCall) string {
	id := fc.ID
	if id == "" {
		c.n++
		id = fmt.Sprintf("call_%d", c.n)
	}
	if c.pending == nil {
		c.pending = map[string][]string{}
	}
	c.pending[fc.Name] = append(c.pending[fc.Name], id)
	return id
}

func (c *callIDs) response(fr *genai.FunctionResponse) string {
	q := c.pending[fr.Name]
	id := fr.ID
	if id == "" && len(q) > 0 {
		id = q[0]
	}
	for i, p := range q {
		if p == id {
			c.pending[fr.Name] = append(q[:i:i], q[i+1:]...)
			break
		}
	}
	return id
}

// assistant is a model content as an assistant message; false when it holds nothing to send.
func assistant(c *genai.Content, ids *callIDs) (oai.ChatCompletionMessageParamUnion, bool) {
	var text strings.Builder
	var calls []oai.ChatCompletionMessageToolCallUnionParam
	for _, p := range c.Parts {
		switch {
		case p == nil || p.Thought:
		case p.FunctionCall != nil:
			args, err := json.Marshal(p.FunctionCall.Args)
			if err != nil || p.FunctionCall.Args == nil {
				args = []byte("{}")
			}
			calls = append(calls, oai.ChatCompletionMessageToolCallUnionParam{OfFunction: &oai.ChatCompletionMessageFunctionToolCallParam{
				ID:       ids.call(p.FunctionCall),
				Function: oai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: p.FunctionCall.Name, Arguments: string(args)},
			}})
		case p.Text != "":
			text.WriteString(p.Text)
		}
	}
	if text.Len() == 0 && len(calls) == 0 {
		return oai.ChatCompletionMessageParamUnion{}, false
	}
	m := oai.ChatCompletionAssistantMessageParam{ToolCalls: calls}
	if text.Len() > 0 {
		m.Content.OfString = oai.String(text.String())
	}
	return oai.ChatCompletionMessageParamUnion{OfAssistant: &m}, true
}

// userSide is a user content: its function responses as tool messages, its text as one user
// message after them (the harness's notes follow the results they are about).
func userSide(c *genai.Content, ids *callIDs) []oai.ChatCompletionMessageParamUnion {
	var out []oai.ChatCompletionMessageParamUnion
	var text strings.Builder
	for _, p := range c.Parts {
		switch {
		case p == nil:
		case p.FunctionResponse != nil:
			body, err := json.Marshal(p.FunctionResponse.Response)
			if err != nil {
				body = []byte(fmt.Sprintf("%q", fmt.Sprint(p.FunctionResponse.Response)))
			}
			out = append(out, oai.ToolMessage(string(body), ids.response(p.FunctionResponse)))
		case p.Text != "":
			if text.Len() > 0 {
				text.WriteString("\n\n")
			}
			text.WriteString(p.Text)
		}
	}
	if text.Len() > 0 {
		out = append(out, oai.UserMessage(text.String()))
	}
	return out
}

// tool is a function declaration as a Chat Completions function tool. The agent's tools declare
// their parameters as JSON Schema already.
func tool(d *genai.FunctionDeclaration) oai.ChatCompletionToolUnionParam {
	f := shared.FunctionDefinitionParam{Name: d.Name}
	if d.Description != "" {
		f.Description = oai.String(d.Description)
	}
	switch s := d.ParametersJsonSchema.(type) {
	case map[string]any:
		f.Parameters = shared.FunctionParameters(s)
	case nil:
		f.Parameters = shared.FunctionParameters{"type": "object", "properties": map[string]any{}}
	default:
		var m map[string]any
		if b, err := json.Marshal(s); err == nil && json.Unmarshal(b, &m) == nil {
			f.Parameters = shared.FunctionParameters(m)
		}
	}
	return oai.ChatCompletionFunctionTool(f)
}
