package agent

import (
	"slices"
	"time"

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
	prompt  int       // the model's count for it
	at      time.Time // when its reply ended
}

// expectedCached is the cached-token count the request about to be made of p and history should
// be billed with: all of the last request's prompt when the new one starts with it unchanged,
// else the estimated size of the unchanged head (the fixed part and the messages before the
// first one rewritten, by a compaction or a clearing say), and 0 below cacheMin. Messages are
// compared by identity: the history is copy-on-write, a rewritten message is a new one. When it
// expects nothing, why says what stood in the way.
func (r *lastRequest) expectedCached(p *systemPrompt, history []*genai.Content, ledger *contextwin.Ledger, cacheMin int) (expected int, why contextwin.MissCause) {
	switch {
	case !r.sent && slices.ContainsFunc(history, func(c *genai.Content) bool { return c != nil && c.Role == genai.RoleModel }):
		return 0, contextwin.MissResume // a history with replies, and no request sent: resumed or forked
	case !r.sent:
		return 0, contextwin.MissFirst
	case r.prompt < cacheMin:
		return 0, contextwin.MissBelow // whatever changed, the last prompt could not be cached
	case p.text != r.system || p.toolsJSON != r.tools || p.mcpJSON != r.mcp:
		return 0, contextwin.MissTools
	}
	same := 0
	for same < min(len(history), len(r.history)) && history[same] == r.history[same] {
		same++
	}
	expected, why = r.prompt, contextwin.MissBelow
	if same < len(r.history) {
		expected, why = min(ledger.PrefixTokens(same), r.prompt), contextwin.MissRewritten
	}
	if expected < cacheMin {
		return 0, why
	}
	return expected, ""
}

// missOf says why a call of usage u read less from the implicit cache than expected (expected
// tokens, or why it expected none), gap after the last request ended; "" for a hit, and for a
// call that read an explicit cache. idle is how long a prefix is assumed to live unused.
func missOf(u contextwin.CallUsage, expected int, why contextwin.MissCause, gap, idle time.Duration) contextwin.MissCause {
	switch {
	// A shortfall under 1 % is the counts' rounding (the expectation is the agent's estimate of
	// the unchanged head), not a miss.
	case u.Explicit, expected == 0 && u.Cached > 0, expected > 0 && 100*u.Cached >= 99*expected:
		return ""
	case expected == 0:
		return why
	case idle > 0 && gap > idle:
		return contextwin.MissIdle
	}
	return contextwin.MissUnexplained
}

// remember records the request just answered, whose prompt the model counted as prompt tokens,
// its reply ended at at.
func (r *lastRequest) remember(p *systemPrompt, history []*genai.Content, prompt int, at time.Time) {
	// A copy: a message amended in place (a stale-file note) must read as changed next time.
	*r = lastRequest{sent: true, system: p.text, tools: p.toolsJSON, mcp: p.mcpJSON, history: slices.Clone(history), prompt: prompt, at: at}
}
