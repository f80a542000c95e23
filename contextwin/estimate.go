package contextwin

import (
	"encoding/json"
	"math"
	"unicode/utf8"

	"google.golang.org/genai"
)

// EstimateText estimates the tokens of s the way Gemini CLI does: a quarter token per ASCII
// character, 1.3 per other character (CJK and accented text cost more per character).
func EstimateText(s string) float64 {
	ascii, other := 0, 0
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			ascii++
			i++
			continue
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		other++
	}
	return float64(ascii)*0.25 + float64(other)*1.3
}

// EstimateContent estimates one message: its text, function calls and responses, and a few tokens
// of framing per part. Thought signatures are opaque and not billed as prompt text.
func EstimateContent(c *genai.Content) float64 {
	if c == nil {
		return 0
	}
	t := 3.0
	for _, p := range c.Parts {
		t += EstimatePart(p)
	}
	return t
}

// EstimatePart estimates one part.
func EstimatePart(p *genai.Part) float64 {
	if p == nil {
		return 0
	}
	t := 1.0 + EstimateText(p.Text)
	if fc := p.FunctionCall; fc != nil {
		t += EstimateText(fc.Name) + estimateJSON(fc.Args)
	}
	if fr := p.FunctionResponse; fr != nil {
		t += EstimateText(fr.Name) + estimateJSON(fr.Response)
	}
	return t
}

func estimateJSON(v any) float64 {
	if v == nil {
		return 0
	}
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return EstimateText(string(b))
}

// Estimator turns local estimates into token counts, corrected by what the model reports: each
// real prompt count updates a factor (real / estimated), smoothed so one odd count does not swing it.
type Estimator struct {
	factor float64
}

// Factor is the current correction (1 until a real count arrived).
func (e *Estimator) Factor() float64 {
	if e.factor == 0 {
		return 1
	}
	return e.factor
}

// Tokens converts an estimate to corrected tokens.
func (e *Estimator) Tokens(estimate float64) int {
	return int(math.Ceil(estimate * e.Factor()))
}

// Learn records that a prompt estimated at estimate was counted as actual by the model.
func (e *Estimator) Learn(estimate float64, actual int) {
	if estimate <= 0 || actual <= 0 {
		return
	}
	r := float64(actual) / estimate
	r = min(max(r, 0.25), 4) // a count wildly off is more likely a mismatch than a tokenizer trait
	if e.factor == 0 {
		e.factor = r
		return
	}
	e.factor = 0.5*e.factor + 0.5*r
}

// EstimateContents is the estimate of several messages.
func EstimateContents(cs []*genai.Content) float64 {
	total := 0.0
	for _, c := range cs {
		total += EstimateContent(c)
	}
	return total
}
