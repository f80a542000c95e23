package agent

import (
	"slices"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/contextwin"
)

// lastRequest is what the session sent in its last loop call, kept to tell how much of the next
// request implicit caching should find cached: Gemini bills as cached the longest prefix shared
// with an earlier request, from the model's minimum, but only best-effort, and the agent measures
// how often it does.
type lastRequest struct {
	sent    bool
	system  string // the system instruction
	tools   string // the tool declarations, as JSON
	mcp     string // the MCP tools' declarations, as JSON
	history []*genai.Content
	prompt  int // the model's count for it
}

// expectedCached is the cached-token count the request about to be made of p and history should
// be billed with: all of the last request's prompt when the new one starts with it unchanged,
// else the estimated size of the unchanged head (the fixed part and the messages before the
// first one rewritten, by a compaction or a clearing say), and 0 below cacheMin. Messages are
// compared by identity: the history is copy-on-write, a rewritten message is a new one.
func (r *lastRequest) expectedCached(p *systemPrompt, history []*genai.Content, ledger *contextwin.Ledger, cacheMin int) int {
	if !r.sent || p.text != r.system || p.toolsJSON != r.tools || p.mcpJSON != r.mcp {
		return 0
	}
	same := 0
	for same < min(len(history), len(r.history)) && history[same] == r.history[same] {
		same++
	}
	expected := r.prompt
	if same < len(r.history) {
		expected = min(ledger.PrefixTokens(same), r.prompt)
	}
	if expected < cacheMin {
		return 0
	}
	return expected
}

// remember records the request just answered, whose prompt the model counted as prompt tokens.
func (r *lastRequest) remember(p *systemPrompt, history []*genai.Content, prompt int) {
	// A copy: a message amended in place (a stale-file note) must read as changed next time.
	*r = lastRequest{sent: true, system: p.text, tools: p.toolsJSON, mcp: p.mcpJSON, history: slices.Clone(history), prompt: prompt}
}
