package agent

import (
	"fmt"

	"github.com/reprise-dev/reprise/contextwin"
)

// billLocked adds one call's usage to the totals, priced at model (the model that served it) on
// the day it was made. It returns the call's cost, and false when model has no known price: the
// tokens count, the cost is unknown (never $0). s.mu must be held.
func (s *Session) billLocked(model string, u contextwin.CallUsage) (float64, bool) {
	p, ok := s.pricing.At(model, s.opts.Now(), u.Prompt)
	if !ok {
		s.totals.AddUnpriced(u)
		return 0, false
	}
	s.totals.Add(u, p)
	return u.Cost(p), true
}

// planPricesLocked are the prices a compaction is weighed at: the session model's today, else
// the catalogue's default model's. The decision rests on the ratios between input, cached input
// and output, which Gemini models share closely enough. s.mu must be held.
func (s *Session) planPricesLocked() contextwin.Prices {
	now := s.opts.Now()
	if p, ok := s.pricing.At(s.opts.ModelName, now, s.lastPrompt); ok {
		return p
	}
	p, _ := s.pricing.At(s.opts.Catalog.DefaultModel(), now, s.lastPrompt)
	return p
}

// cacheMin is the shortest prefix the session's model caches implicitly.
func (s *Session) cacheMin() int { return s.opts.Catalog.CacheMin(s.opts.ModelName) }

// warnOnceLocked returns text the first time key is warned about in this session, else "".
// s.mu must be held.
func (s *Session) warnOnceLocked(key, text string) string {
	if s.warned[key] {
		return ""
	}
	if s.warned == nil {
		s.warned = map[string]bool{}
	}
	s.warned[key] = true
	return text
}

// turnWarningsLocked are what the user hears before a turn's first call, once per session: the
// model is retired, or a dollar cap is set on a model without a known price. s.mu must be held.
func (s *Session) turnWarningsLocked() []string {
	var out []string
	name := s.opts.ModelName
	m, known := s.opts.Catalog.Lookup(name)
	if known && m.RetiredAt(s.opts.Now()) {
		text := fmt.Sprintf("%s was shut down on %s (model catalogue of %s): the API answers 404", name, m.Shutdown, s.opts.Catalog.CurrentAsOf)
		if m.RoutedTo != "" {
			text += fmt.Sprintf(" to new keys and %s to older ones, billed at its prices", m.RoutedTo)
		}
		if m.Replacement != "" {
			text += fmt.Sprintf("; use %s instead", m.Replacement)
		}
		out = append(out, s.warnOnceLocked("retired", text))
	}
	if _, priced := s.pricing.At(name, s.opts.Now(), 0); !priced && s.opts.Policy.MaxCostUSD > 0 {
		out = append(out, s.warnOnceLocked("cap", s.capWarning(name)))
	}
	return nonEmpty(out)
}

// capWarning says that the dollar cap cannot be enforced because model has no known price.
func (s *Session) capWarning(model string) string {
	return fmt.Sprintf("the dollar cap ($%.2f) cannot be enforced: %s has no known price (give it one with --prices or the prices setting)", s.opts.Policy.MaxCostUSD, model)
}

func nonEmpty(in []string) []string {
	out := in[:0]
	for _, s := range in {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
