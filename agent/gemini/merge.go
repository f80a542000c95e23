package gemini

import (
	"bytes"
	"reflect"
	"strings"

	"google.golang.org/genai"
)

// merger folds streamed parts into the parts of one model Content. Gemini streams a text part
// as many small parts and puts the thought signature on the last one; the model must get its
// signatures back exactly where they were (on the function call, or on the part that ended a
// thought) or it loses its reasoning between turns, so merging must never drop or move one.
//
// The text of the last part is kept in a builder until another part starts, so that merging n
// chunks costs O(total size), not O(n²).
type merger struct {
	parts []*genai.Part
	// open is true when the last part is plain text whose text lives in buf.
	open bool
	buf  strings.Builder
}

// add folds p in. The rules:
//   - consecutive plain text parts with the same Thought flag are concatenated;
//   - a signature is kept on the merged part, but a part whose signature differs from the one
//     the merged part already has starts a new part;
//   - an empty text part carrying only a signature attaches to the previous part of the same
//     kind if that has none, else stays a part of its own;
//   - function calls and every other kind of part are kept whole, as they came;
//   - a part with nothing in it is dropped.
func (m *merger) add(p *genai.Part) {
	if p == nil {
		return
	}
	if !plainText(p) {
		m.close()
		cp := *p
		m.parts = append(m.parts, &cp)
		return
	}
	if p.Text == "" && len(p.ThoughtSignature) == 0 {
		return
	}
	if m.open {
		last := m.parts[len(m.parts)-1]
		sameKind := last.Thought == p.Thought
		compatible := len(last.ThoughtSignature) == 0 || len(p.ThoughtSignature) == 0 ||
			bytes.Equal(last.ThoughtSignature, p.ThoughtSignature)
		if p.Text == "" {
			// A signature on its own, as Gemini sends at the end of a stream.
			compatible = len(last.ThoughtSignature) == 0
		}
		if sameKind && compatible {
			m.buf.WriteString(p.Text)
			if len(p.ThoughtSignature) > 0 {
				last.ThoughtSignature = p.ThoughtSignature
			}
			return
		}
	}
	m.close()
	m.parts = append(m.parts, &genai.Part{Thought: p.Thought, ThoughtSignature: p.ThoughtSignature})
	m.buf.WriteString(p.Text)
	m.open = true
}

// close moves the buffered text into the last part.
func (m *merger) close() {
	if !m.open {
		return
	}
	m.parts[len(m.parts)-1].Text = m.buf.String()
	m.buf.Reset()
	m.open = false
}

// content is the merged model turn.
func (m *merger) content() *genai.Content {
	m.close()
	return &genai.Content{Role: genai.RoleModel, Parts: m.parts}
}

// plainText reports whether p holds nothing but text, a thought flag and a signature. It looks
// at every field, not a list of known ones, so that a part kind added to the SDK later is kept
// whole instead of being merged into text and lost.
func plainText(p *genai.Part) bool {
	rest := *p
	rest.Text, rest.Thought, rest.ThoughtSignature = "", false, nil
	return reflect.ValueOf(rest).IsZero()
}
