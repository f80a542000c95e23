package contextwin

import "google.golang.org/genai"

// Ledger tracks the size of the prompt the next call will send. The last real count anchors it;
// messages appended since are estimated and corrected. Appending costs the same whatever the
// history length: each message is estimated once.
type Ledger struct {
	Estimator
	fixed        float64   // system instruction and tool declarations
	est          []float64 // per message, in history order
	total        float64   // sum of est
	anchored     bool
	anchorTokens int     // the model's count for the prompt made of fixed + est[:anchorLen]
	anchorEst    float64 // fixed + sum(est[:anchorLen]) at that time
}

// SetFixed sets the estimate of what every request carries before the messages.
func (l *Ledger) SetFixed(estimate float64) {
	if estimate != l.fixed {
		l.fixed = estimate
		l.anchored = false
	}
}

// Append records a message added to the history.
func (l *Ledger) Append(c *genai.Content) {
	e := EstimateContent(c)
	l.est = append(l.est, e)
	l.total += e
}

// Replace records that message i was rewritten (the harness added a note to it). The anchor is
// kept; the difference is estimated.
func (l *Ledger) Replace(i int, c *genai.Content) {
	e := EstimateContent(c)
	l.total += e - l.est[i]
	l.est[i] = e
}

// Reset re-estimates a rewritten history (after a compaction or a resume): the anchor is gone
// until the next real count.
func (l *Ledger) Reset(history []*genai.Content) {
	l.est = l.est[:0]
	l.total = 0
	for _, c := range history {
		l.Append(c)
	}
	l.anchored = false
}

// Observe records the model's prompt count for a request made of everything appended so far, and
// learns the correction factor from it.
func (l *Ledger) Observe(promptTokens int) {
	est := l.fixed + l.total
	l.Learn(est, promptTokens)
	l.anchored = true
	l.anchorTokens = promptTokens
	l.anchorEst = est
}

// Extend records that what was appended since the last Observe (the model's reply) is known to
// count tokens, as the reply's candidatesTokenCount says, so the next prompt's size stays exact.
func (l *Ledger) Extend(tokens int) {
	if !l.anchored {
		return
	}
	l.anchorTokens += tokens
	l.anchorEst = l.fixed + l.total
}

// Source says where a prompt size comes from.
type Source string

// Sources of a prompt size.
const (
	SourceUsage    Source = "usage"    // the model's own count
	SourceEstimate Source = "estimate" // partly estimated: content appended since the last count
)

// Used returns the tokens the next prompt will take and whether that figure is the model's own
// count or partly estimated.
func (l *Ledger) Used() (tokens int, source Source) {
	est := l.fixed + l.total
	if !l.anchored {
		return l.Tokens(est), SourceEstimate
	}
	if est == l.anchorEst {
		return l.anchorTokens, SourceUsage
	}
	return l.anchorTokens + l.Tokens(est-l.anchorEst), SourceEstimate
}

// PrefixTokens estimates the tokens of a request made of the fixed part and the first n messages,
// with the correction factor learned: the part of the next request that an earlier one shared.
func (l *Ledger) PrefixTokens(n int) int {
	est := l.fixed
	for _, e := range l.est[:min(n, len(l.est))] {
		est += e
	}
	return l.Tokens(est)
}

// Len is the number of messages recorded.
func (l *Ledger) Len() int { return len(l.est) }

// MessageEstimate returns the estimate recorded for message i.
func (l *Ledger) MessageEstimate(i int) float64 { return l.est[i] }
