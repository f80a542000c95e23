package gemini

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"
)

func TestMergeParts(t *testing.T) {
	call := func(name string, sig string) *genai.Part {
		p := &genai.Part{FunctionCall: &genai.FunctionCall{Name: name, Args: map[string]any{"n": 1.0}}}
		if sig != "" {
			p.ThoughtSignature = []byte(sig)
		}
		return p
	}
	text := func(s string) *genai.Part { return &genai.Part{Text: s} }
	thought := func(s string) *genai.Part { return &genai.Part{Text: s, Thought: true} }
	signed := func(p *genai.Part, sig string) *genai.Part { p.ThoughtSignature = []byte(sig); return p }

	tests := []struct {
		name string
		in   []*genai.Part
		want []*genai.Part
	}{
		{
			name: "text deltas concatenated",
			in:   []*genai.Part{text("Hel"), text("lo"), text(", world")},
			want: []*genai.Part{text("Hello, world")},
		},
		{
			name: "thought and answer kept apart",
			in:   []*genai.Part{thought("let "), thought("me see"), text("It "), text("is 4.")},
			want: []*genai.Part{thought("let me see"), text("It is 4.")},
		},
		{
			name: "signature on the last delta stays on the merged part",
			in:   []*genai.Part{text("a"), text("b"), signed(text("c"), "s1")},
			want: []*genai.Part{signed(text("abc"), "s1")},
		},
		{
			name: "a different signature starts a new part",
			in:   []*genai.Part{signed(text("a"), "s1"), text("b"), signed(text("c"), "s2")},
			want: []*genai.Part{signed(text("ab"), "s1"), signed(text("c"), "s2")},
		},
		{
			name: "the same signature again merges",
			in:   []*genai.Part{signed(text("a"), "s1"), signed(text("b"), "s1")},
			want: []*genai.Part{signed(text("ab"), "s1")},
		},
		{
			name: "signature-only part attaches to an unsigned previous part of its kind",
			in:   []*genai.Part{text("done"), signed(text(""), "s1")},
			want: []*genai.Part{signed(text("done"), "s1")},
		},
		{
			name: "signature-only part after a signed part stays its own",
			in:   []*genai.Part{signed(text("done"), "s1"), signed(text(""), "s2")},
			want: []*genai.Part{signed(text("done"), "s1"), signed(text(""), "s2")},
		},
		{
			name: "signature-only part after a function call stays its own",
			in:   []*genai.Part{call("ls", ""), signed(text(""), "s1")},
			want: []*genai.Part{call("ls", ""), signed(text(""), "s1")},
		},
		{
			name: "signature-only part of another kind stays its own",
			in:   []*genai.Part{thought("hmm"), signed(text(""), "s1")},
			want: []*genai.Part{thought("hmm"), signed(text(""), "s1")},
		},
		{
			name: "function calls never merged, signatures kept",
			in:   []*genai.Part{thought("plan"), call("read", "s1"), call("read", ""), text("ok")},
			want: []*genai.Part{thought("plan"), call("read", "s1"), call("read", ""), text("ok")},
		},
		{
			name: "text around a call is not joined across it",
			in:   []*genai.Part{text("a"), call("ls", ""), text("b")},
			want: []*genai.Part{text("a"), call("ls", ""), text("b")},
		},
		{
			name: "other kinds kept as they are",
			in: []*genai.Part{
				text("x"),
				{InlineData: &genai.Blob{MIMEType: "image/png", Data: []byte{1}}},
				{Text: "meta", PartMetadata: map[string]any{"k": "v"}},
				text("y"),
			},
			want: []*genai.Part{
				text("x"),
				{InlineData: &genai.Blob{MIMEType: "image/png", Data: []byte{1}}},
				{Text: "meta", PartMetadata: map[string]any{"k": "v"}},
				text("y"),
			},
		},
		{
			name: "empty and nil parts dropped",
			in:   []*genai.Part{nil, text(""), text("a"), {}, text("b")},
			want: []*genai.Part{text("ab")},
		},
		{
			name: "nothing",
			in:   nil,
			want: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mergeParts(tt.in)
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("merged (-got +want):\n%s", diff)
			}
		})
	}
}

func TestMergeDoesNotAliasInput(t *testing.T) {
	in := []*genai.Part{{Text: "a"}, {Text: "b"}}
	got := mergeParts(in)
	got[0].Text = "changed"
	if in[0].Text != "a" {
		t.Errorf("merging modified its input: %q", in[0].Text)
	}
}

// BenchmarkMerge1000 merges a streamed reply of 1,000 small deltas, thoughts then answer.
func BenchmarkMerge1000(b *testing.B) {
	parts := make([]*genai.Part, 1000)
	for i := range parts {
		parts[i] = &genai.Part{Text: fmt.Sprintf("delta %d ", i), Thought: i < 300}
	}
	parts[999].ThoughtSignature = []byte("signature")
	b.ReportAllocs()
	for b.Loop() {
		mergeParts(parts)
	}
}

// mergeParts merges a whole sequence at once, as a stream's chunks are; see merger.add for the rules.
func mergeParts(parts []*genai.Part) []*genai.Part {
	var m merger
	for _, p := range parts {
		m.add(p)
	}
	return m.content().Parts
}
