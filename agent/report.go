package agent

import (
	"math"
	"slices"

	"github.com/reprise-dev/reprise/contextwin"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// Report is the /context view of a session.
type Report struct {
	SessionID string `json:"sessionId"`
	Model     string `json:"model"`
	// ServedModel is the model that answered the last call, when the API named another.
	ServedModel string            `json:"servedModel,omitempty"`
	Usage                         // used, size, percent, breakdown, totals, compaction
	Largest     []contextwin.Item `json:"largest"`
	LastPrompt  int               `json:"lastPrompt"` // the model's count for the last call
	Turns       int               `json:"turns"`      // user turns: prompts the session answered or is answering
	Calls       int               `json:"calls"`      // model calls: a turn with tool calls makes several
	Rereads     int               `json:"rereads"`    // files read again after a compaction
	Checkpoints int               `json:"checkpoints"`
	State       contextwin.State  `json:"state"`
	Status      Status            `json:"status"`
	FixedTokens int               `json:"fixedTokens"` // what every request carries: system + tools
	Policy      contextwin.Policy `json:"policy"`
	Factor      float64           `json:"estimateFactor"`

	// CompactionModel is the model summaries are asked of when it is not Model, and
	// CompactionTier the tier background summaries ask for ("" for standard).
	CompactionModel string       `json:"compactionModel,omitempty"`
	CompactionTier  catalog.Tier `json:"compactionTier,omitempty"`

	// Pins are the user's pinned items; their tokens are part of the messages.
	Pins []contextwin.Pin `json:"pins"`
}

// Status is what a session is doing.
type Status string

// Session statuses.
const (
	StatusIdle    Status = "idle"
	StatusRunning Status = "running"
	StatusCapped  Status = "capped" // it reached its token or cost cap: every turn ends at once
)

// Context reports the session's context usage with its breakdown and largest items.
func (s *Session) Context() Report {
	p := s.policy()
	running := s.loop.isRunning()
	f := s.bill.figures()
	u := s.usage()
	state, rereads := s.memo.state(s.files.State()), s.files.rereadCount()
	status := StatusIdle
	switch {
	case f.capped:
		status = StatusCapped
	case running:
		status = StatusRunning
	}
	c := &s.conv
	c.mu.Lock()
	defer c.mu.Unlock()
	return Report{
		SessionID:   s.opts.ID,
		Model:       s.opts.ModelName,
		ServedModel: f.servedOther,
		Usage:       u,
		Largest:     contextwin.LargestItems(c.history, 10, &c.ledger.Estimator, len(c.blocks) > 0),
		LastPrompt:  f.lastPrompt,
		Turns:       c.turns,
		Calls:       f.calls,
		Rereads:     rereads,
		Checkpoints: len(c.checkpoints),
		Pins:        slices.Clone(c.pins),
		State:       state,
		Status:      status,
		FixedTokens: c.prompt.fixed(&c.ledger.Estimator).Sum(),
		Policy:      p,
		Factor:      c.ledger.Factor(),

		CompactionModel: s.bill.compaction,
		CompactionTier:  p.CompactionTier,
	}
}

// Usage returns the current context usage.
func (s *Session) Usage() Usage { return s.usage() }

// usage reads each part under its own lock, one after the other.
func (s *Session) usage() Usage {
	p := s.policy()
	state := s.compactor.state()
	decision := s.compactor.lastDecision()
	f := s.bill.figures()
	c := &s.conv
	c.mu.Lock()
	used, src := c.ledger.Used()
	fixed := c.prompt.fixed(&c.ledger.Estimator)
	compactions := len(c.checkpoints)
	c.mu.Unlock()
	window := s.opts.window(p)
	return Usage{
		Used:        used,
		Size:        window,
		Percent:     math.Round(1000*float64(used)/float64(window)) / 10,
		Source:      src,
		Breakdown:   contextwin.NewBreakdown(window, used, p.Reserve(window), fixed),
		Totals:      f.totals,
		Compaction:  state,
		Compactions: compactions,
		CostUnknown: !f.totals.CostKnown() || !f.priced,
		Local:       f.local,
		Decision:    decision,
		CompactAt:   p.CompactAt,
		BlockAt:     p.BlockAt,
	}
}
