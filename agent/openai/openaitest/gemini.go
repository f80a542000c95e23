package openaitest

import (
	"errors"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
)

// FromGemini is a geminitest script's replies as an OpenAI-compatible server sends them: the
// text, the thoughts as reasoning, the calls; the turns kept for a request (Match, Also) kept the
// same way. A script that sets usage by hand or scripts subagents apart (Agent) has no
// translation: the usage would be Gemini's counts, and openaitest matches on the last message.
func FromGemini(script geminitest.Script) ([]Turn, error) {
	var out []Turn
	for _, t := range script.Turns {
		switch {
		case t.Agent != "":
			return nil, errors.New("openaitest: a turn scripted for one agent (Agent) has no translation")
		case t.Usage != nil:
			return nil, errors.New("openaitest: a turn whose usage is set by hand has no translation")
		}
		o := Turn{Match: t.Match, Also: t.Also, Chunks: t.Chunks}
		for _, p := range t.Parts {
			switch {
			case p.FunctionCall != nil:
				o.Calls = append(o.Calls, Call{Name: p.FunctionCall.Name, Args: p.FunctionCall.Args})
			case p.Thought:
				o.Reasoning += p.Text
			default:
				o.Text += p.Text
			}
		}
		out = append(out, o)
	}
	return out, nil
}
