// Package contextwin decides what the model keeps in front of it: token accounting and estimates,
// tool-output truncation, the compaction plan and its summary prompt, the state the harness holds
// itself, thresholds and cost. It is pure and deterministic: no I/O, no clock, no model calls
// (the summarizer comes in as a function).
package contextwin

import (
	"errors"
	"fmt"

	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// DefaultInputTokenLimit is assumed when the model's own limit cannot be read and the model
// catalogue does not know the model.
const DefaultInputTokenLimit = catalog.FallbackInputTokenLimit

// Policy holds the context-window settings. The defaults are the harness lesson's constants; every
// field is a user setting (flag, initializationOptions, workspace/configuration).
type Policy struct {
	ContextBudget                 int     `json:"contextBudget"`
	CompactAt                     float64 `json:"compactAt"`
	BlockAt                       float64 `json:"blockAt"`
	KeepRecentTurns               int     `json:"keepRecentTurns"`
	ToolOutputMaxChars            int     `json:"toolOutputMaxChars"`
	LargeOutputThresholdBytes     int     `json:"largeOutputThresholdBytes"`
	SessionTokenCap               int     `json:"sessionTokenCap"`
	MaxCompactionsWithoutProgress int     `json:"maxCompactionsWithoutProgress"`
	// MaxCostUSD stops the session once it has cost this many US dollars; 0 means no dollar cap.
	MaxCostUSD float64 `json:"maxCostUSD,omitempty"`
	// ReplyReserve is the part of the budget kept free for the model's reply and a safety margin
	// (the "buffer" of the /context view).
	ReplyReserve int `json:"replyReserve"`
	// KeepToolResults turns the first tier off: old tool results are never cleared, and only
	// summaries free the context.
	KeepToolResults bool `json:"keepToolResults,omitempty"`
	// ExplicitCache puts the stable prefix in an explicit cache when the measured implicit hits
	// fall short enough that it pays (CacheCase), on models that have explicit caching.
	ExplicitCache bool `json:"explicitCache,omitempty"`
	// ExplicitCacheIdle keeps the explicit cache in use alive while the session is idle, for as
	// long as storing it costs less than rebuilding it would (IdleKeep); with ExplicitCache only.
	ExplicitCacheIdle bool `json:"explicitCacheIdle,omitempty"`
	// PlainHead leaves the tool guide and the workspace map out of the system instruction: the
	// fixed head of every request is then the short prompt and the tools, under the cache minimum
	// of today's models (docs/decisions.md, "A head worth caching"). The setting is cacheHead.
	PlainHead bool `json:"plainHead,omitempty"`
	// CompactionTier is the service tier background summaries ask for: "flex" asks Gemini's
	// Flex tier (half price, best-effort, minutes of latency) where the compaction model offers
	// it, falling back to the standard tier when it is shed or the agent comes to wait for it;
	// "standard" or "" never does. A summary the agent waits for is always standard.
	CompactionTier catalog.Tier `json:"compactionTier,omitempty"`
	// NoSummaries turns the second tier off, for measuring the first alone (reprise bench's
	// "clearing" rows). Not a setting: a session that never summarizes outgrows its budget once
	// nothing is left to clear.
	NoSummaries bool `json:"-"`
}

// DefaultPolicy returns the seed's numbers.
func DefaultPolicy() Policy {
	return Policy{
		ContextBudget:                 24_000,
		CompactAt:                     0.7,
		BlockAt:                       0.95,
		KeepRecentTurns:               3,
		ToolOutputMaxChars:            4000,
		LargeOutputThresholdBytes:     20 * 1024,
		SessionTokenCap:               400_000,
		MaxCompactionsWithoutProgress: 3,
		ReplyReserve:                  0, // 0: derived, see Reserve
	}
}

// ErrInvalidPolicy marks a setting out of range.
var ErrInvalidPolicy = errors.New("invalid context settings")

// Validate reports the first setting out of range, by its setting name.
func (p Policy) Validate() error {
	bad := func(name string, v any, want string) error {
		return fmt.Errorf("%w: %s = %v, want %s", ErrInvalidPolicy, name, v, want)
	}
	switch {
	case p.ContextBudget < 1000:
		return bad("contextBudget", p.ContextBudget, "at least 1000")
	case p.CompactAt <= 0 || p.CompactAt >= 1:
		return bad("compactAt", p.CompactAt, "between 0 and 1")
	case p.BlockAt <= p.CompactAt || p.BlockAt > 1:
		return bad("blockAt", p.BlockAt, "above compactAt and at most 1")
	case p.KeepRecentTurns < 1:
		return bad("keepRecentTurns", p.KeepRecentTurns, "at least 1")
	case p.ToolOutputMaxChars < 200:
		return bad("toolOutputMaxChars", p.ToolOutputMaxChars, "at least 200")
	case p.LargeOutputThresholdBytes < 1:
		return bad("largeOutputThresholdBytes", p.LargeOutputThresholdBytes, "positive")
	case p.SessionTokenCap < 1:
		return bad("sessionTokenCap", p.SessionTokenCap, "positive")
	case p.MaxCostUSD < 0:
		return bad("maxCostUSD", p.MaxCostUSD, "0 (no cap) or positive")
	case p.MaxCompactionsWithoutProgress < 1:
		return bad("maxCompactionsWithoutProgress", p.MaxCompactionsWithoutProgress, "at least 1")
	case p.ReplyReserve < 0 || p.ReplyReserve >= p.ContextBudget:
		return bad("replyReserve", p.ReplyReserve, "between 0 and contextBudget")
	case p.CompactionTier != "" && p.CompactionTier != catalog.TierStandard && p.CompactionTier != catalog.TierFlex:
		return bad("compactionTier", fmt.Sprintf("%q", p.CompactionTier), `"standard" or "flex"`)
	}
	return nil
}

// Window is the effective budget: the setting, capped by the model's input limit.
func (p Policy) Window(inputTokenLimit int) int {
	if inputTokenLimit > 0 && inputTokenLimit < p.ContextBudget {
		return inputTokenLimit
	}
	return p.ContextBudget
}

// Reserve is the buffer kept for the reply: the setting, or 1 − blockAt of the window, which is
// what is left when the loop stops to wait for a compaction.
func (p Policy) Reserve(window int) int {
	if p.ReplyReserve > 0 {
		return min(p.ReplyReserve, window)
	}
	return int(float64(window) * (1 - p.BlockAt))
}

// Threshold tells where a prompt size stands against the policy.
type Threshold int

const (
	// Below: nothing to do.
	Below Threshold = iota
	// StartCompaction: start a background compaction.
	StartCompaction
	// Block: wait for the compaction before the next call.
	Block
)

// Check places a prompt of the given size against compactAt and blockAt of the window.
func (p Policy) Check(promptTokens, window int) Threshold {
	switch {
	case float64(promptTokens) >= p.BlockAt*float64(window):
		return Block
	case float64(promptTokens) > p.CompactAt*float64(window):
		return StartCompaction
	}
	return Below
}
