package secret

import (
	"maps"
	"slices"

	"google.golang.org/genai"
)

// Content returns c with secrets replaced in its texts, call arguments and call responses. When c
// holds none it is returned as is, the same pointer: a message the model sent stays byte-identical
// (its thought signatures with it).
func (r *Redactor) Content(c *genai.Content) *genai.Content {
	if r.Empty() || c == nil {
		return c
	}
	var parts []*genai.Part
	for i, p := range c.Parts {
		q := r.part(p)
		if q == p {
			continue
		}
		if parts == nil {
			parts = slices.Clone(c.Parts)
		}
		parts[i] = q
	}
	if parts == nil {
		return c
	}
	return &genai.Content{Role: c.Role, Parts: parts}
}

func (r *Redactor) part(p *genai.Part) *genai.Part {
	if p == nil {
		return p
	}
	var q *genai.Part
	copyPart := func() *genai.Part {
		if q == nil {
			c := *p
			q = &c
		}
		return q
	}
	if t := r.String(p.Text); t != p.Text {
		copyPart().Text = t
	}
	if fc := p.FunctionCall; fc != nil {
		if args, changed := r.value(fc.Args); changed {
			c := *fc
			c.Args = args.(map[string]any)
			copyPart().FunctionCall = &c
		}
	}
	if fr := p.FunctionResponse; fr != nil {
		if resp, changed := r.value(fr.Response); changed {
			c := *fr
			c.Response = resp.(map[string]any)
			copyPart().FunctionResponse = &c
		}
	}
	if q == nil {
		return p
	}
	return q
}

// value redacts the strings of a JSON-like value, copying only what changes.
func (r *Redactor) value(v any) (any, bool) {
	switch v := v.(type) {
	case string:
		s := r.String(v)
		return s, s != v
	case map[string]any:
		var out map[string]any
		for k, e := range v {
			if ne, changed := r.value(e); changed {
				if out == nil {
					out = maps.Clone(v)
				}
				out[k] = ne
			}
		}
		if out == nil {
			return v, false
		}
		return out, true
	case []any:
		var out []any
		for i, e := range v {
			if ne, changed := r.value(e); changed {
				if out == nil {
					out = slices.Clone(v)
				}
				out[i] = ne
			}
		}
		if out == nil {
			return v, false
		}
		return out, true
	}
	return v, false
}
