package agent

import (
	"context"
	"iter"
	"sync"

	"github.com/reprise-dev/reprise/agent/gemini"
	"google.golang.org/genai"
)

// scriptedModel replies with its contents in order, in process (benchmarks without HTTP).
type scriptedModel struct {
	mu      sync.Mutex
	replies []*genai.Content
}

func (m *scriptedModel) Generate(ctx context.Context, req *gemini.Request) iter.Seq2[gemini.Chunk, error] {
	return func(yield func(gemini.Chunk, error) bool) {
		m.mu.Lock()
		c := genai.NewContentFromText("(script exhausted)", genai.RoleModel)
		if len(m.replies) > 0 {
			c, m.replies = m.replies[0], m.replies[1:]
		}
		m.mu.Unlock()
		yield(gemini.Chunk{Done: &gemini.Response{Content: c, Usage: gemini.Usage{Prompt: 1000, Candidates: 20}}}, nil)
	}
}
