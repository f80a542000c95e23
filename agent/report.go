package agent

import (
	"math"

	"github.com/reprise-dev/reprise/contextwin"
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
	s.mu.Lock()
	defer s.mu.Unlock()
	status := StatusIdle
	switch {
	case s.capped:
		status = StatusCapped
	case s.running:
		status = StatusRunning
	}
	f := s.prompt.fixed(&s.ledger.Estimator)
	return Report{
		SessionID:   s.opts.ID,
		Model:       s.opts.ModelName,
		ServedModel: s.servedOtherLocked(),
		Usage:       s.usageLocked(),
		Largest:     contextwin.LargestItems(s.history, 10, &s.ledger.Estimator),
		LastPrompt:  s.lastPrompt,
		Turns:       s.turns,
		Calls:       s.calls,
		Rereads:     s.rereads,
		Checkpoints: len(s.checkpoints),
		State:       s.stateLocked(),
		Status:      status,
		FixedTokens: f.Sum(),
		Policy:      s.opts.ContextPolicy,
		Factor:      s.ledger.Factor(),
	}
}

// Usage returns the current context usage.
func (s *Session) Usage() Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.usageLocked()
}

func (s *Session) usageLocked() Usage {
	used, src := s.ledger.Used()
	window := s.Window()
	fixed := s.prompt.fixed(&s.ledger.Estimator)
	state := CompactionIdle
	switch {
	case s.blocking:
		state = CompactionBlocking
	case s.job != nil:
		state = CompactionRunning
	}
	return Usage{
		Used:        used,
		Size:        window,
		Percent:     math.Round(1000*float64(used)/float64(window)) / 10,
		Source:      src,
		Breakdown:   contextwin.NewBreakdown(window, used, s.opts.ContextPolicy.Reserve(window), fixed),
		Totals:      s.totals,
		Compaction:  state,
		Compactions: len(s.checkpoints),
		CostUnknown: !s.totals.CostKnown() || !s.pricedLocked(),
	}
}
