package agent

import (
	"sync"
	"time"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/contextwin"
)

// Conversation is what the next request sends (the system prompt and the live history) and how it
// came to be: the task, the head's summaries, the ledger that counts it, the transcript, the
// checkpoints and the frames that undo them. They are one part because a compaction, its undo and
// an appended message each change several of them at once, and the journal records each change
// while mu is held, so that records which name a position in the history (append, amend,
// compaction, undo, a call's usage) are saved in the order they were applied.
type Conversation struct {
	opts *Options // the session's, read-only

	mu          sync.Mutex // guards everything below; taken after compactor.mu, never before
	prompt      systemPrompt
	head        head // built once per session: ReloadInstructions keeps it
	history     []*genai.Content
	task        string                    // the first request, restated after each compaction
	blocks      []contextwin.SummaryBlock // the head's summaries, oldest first
	ledger      contextwin.Ledger
	turns       int                     // user turns since the session began
	checkpoints []contextwin.Checkpoint // one per compaction still in the history
	undo        []journal.UndoFrame     // one per compaction still undoable
	transcript  []journal.Entry         // everything appended and every compaction, in order
	last        lastRequest             // the last loop call's request, for the cached tokens the next should get
	// pins are the user's pinned items, in the order pinned; pinSeq numbers them (p1, p2, …, never
	// reused); pending are the ids of those the history does not hold yet, which the next call
	// adds to the last user message.
	pins    []contextwin.Pin
	pinSeq  int
	pending []string
}

// turn returns the number of the turn running, or of the last one.
func (c *Conversation) turn() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.turns
}

// compactions is how many compactions the history holds.
func (c *Conversation) compactions() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.checkpoints)
}

// appendRecord is the journal entry for a message appended to the history.
func appendRecord(c *genai.Content) journal.Record {
	return journal.Record{Kind: journal.KindAppend, Content: c}
}

// cacheCheck sets what implicit caching should have billed u as cached, and why it billed less
// (contextwin.CallUsage.Miss), then remembers the request: under c.mu, before the reply is
// appended, the history being the request's. A model with no cache (measured false) gets
// neither. idle is how long a prefix is assumed to live unused; now, when the reply ended.
func (c *Conversation) cacheCheck(u *contextwin.CallUsage, cacheMin int, measured bool, idle time.Duration, now time.Time) {
	expected, why := c.last.expectedCached(&c.prompt, c.history, &c.ledger, cacheMin)
	gap := now.Sub(c.last.at) - time.Duration(u.WaitMillis+u.GenMillis)*time.Millisecond
	c.last.remember(&c.prompt, c.history, u.Prompt, now)
	if !measured {
		return
	}
	u.ExpectedCached = min(expected, u.Prompt)
	u.Miss = missOf(*u, u.ExpectedCached, why, gap, idle)
}
