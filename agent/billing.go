package agent

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent/gemini"
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

// modelLocked is the model the next call is expected to be served by: the last call's, else the
// one asked for. s.mu must be held.
func (s *Session) modelLocked() string { return cmp.Or(s.served, s.opts.ModelName) }

// planPricesLocked are the prices a compaction is weighed at: the serving model's today, else
// the catalogue's default model's. The decision rests on the ratios between input, cached input
// and output, which Gemini models share closely enough. s.mu must be held.
func (s *Session) planPricesLocked() contextwin.Prices {
	now := s.opts.Now()
	if p, ok := s.pricing.At(s.modelLocked(), now, s.lastPrompt); ok {
		return p
	}
	p, _ := s.pricing.At(s.opts.Catalog.DefaultModel(), now, s.lastPrompt)
	return p
}

// pricedLocked tells whether the model the next call is expected to be served by has a known
// price. s.mu must be held.
func (s *Session) pricedLocked() bool {
	_, ok := s.pricing.At(s.modelLocked(), s.opts.Now(), 0)
	return ok
}

// thinking is what every request of the session sends about thinking.
func (s *Session) thinking() gemini.Thinking {
	t := s.opts.Thinking
	return gemini.Thinking{Level: t.Level, Budget: t.Budget}
}

// cacheMinLocked is the shortest prefix the serving model caches implicitly. s.mu must be held.
func (s *Session) cacheMinLocked() int { return s.opts.Catalog.CacheMin(s.modelLocked()) }

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
	if _, priced := s.pricing.At(name, s.opts.Now(), 0); !priced && s.opts.ContextPolicy.MaxCostUSD > 0 {
		out = append(out, s.warnOnceLocked("cap", s.capWarning(name)))
	}
	return nonEmpty(out)
}

// capWarning says that the dollar cap cannot be enforced because model has no known price.
func (s *Session) capWarning(model string) string {
	return fmt.Sprintf("the dollar cap ($%.2f) cannot be enforced: %s has no known price (give it one with --prices or the prices setting)", s.opts.ContextPolicy.MaxCostUSD, model)
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

// servedWarningsLocked are the warnings one call gives rise to, each once per session: the API
// answered with another model than the one asked for (the call is billed at that model's
// prices), the served model is being retired, or a dollar cap cannot be enforced because the
// served model has no known price. s.mu must be held.
func (s *Session) servedWarningsLocked(served string, status *genai.ModelStatus, priced bool) []string {
	asked := s.opts.ModelName
	routed := !s.opts.Catalog.Same(served, asked)
	var out []string
	if routed {
		text := fmt.Sprintf("the API answered %s with %s", asked, served)
		if m, ok := s.opts.Catalog.Lookup(asked); ok && m.RetiredAt(s.opts.Now()) {
			text = fmt.Sprintf("%s is retired: the API answered with %s", asked, served)
			if m.Replacement != "" && !s.opts.Catalog.Same(m.Replacement, served) {
				text += fmt.Sprintf(" (the catalogue's replacement is %s)", m.Replacement)
			}
		}
		if priced {
			text += fmt.Sprintf("; its calls are billed at %s's prices", served)
		} else {
			text += fmt.Sprintf("; %s has no known price, so the cost is unknown", served)
		}
		out = append(out, s.warnOnceLocked("served:"+served, text))
	}
	// A routed call's status is the retired model's: the routing warning has said it.
	if routed && status != nil && status.ModelStage == genai.ModelStageRetired {
		status = nil
	}
	subject := served
	if routed {
		subject = asked
	}
	if w := statusWarning(subject, status); w != "" {
		out = append(out, s.warnOnceLocked("status:"+subject, w))
	}
	if !priced && s.opts.ContextPolicy.MaxCostUSD > 0 {
		out = append(out, s.warnOnceLocked("cap", s.capWarning(served)))
	}
	return nonEmpty(out)
}

// statusWarning words a modelStatus that says the model is going away, or "".
func statusWarning(model string, st *genai.ModelStatus) string {
	if st == nil {
		return ""
	}
	stage := st.ModelStage
	if stage != genai.ModelStageDeprecated && stage != genai.ModelStageRetired && stage != genai.ModelStageLegacy && st.RetirementTime.IsZero() {
		return ""
	}
	text := fmt.Sprintf("the API reports %s as %s", model, strings.ToLower(string(cmpOr(stage, "to be retired"))))
	if !st.RetirementTime.IsZero() {
		text += ", retiring on " + st.RetirementTime.UTC().Format(time.DateOnly)
	}
	if st.Message != "" {
		text += ": " + st.Message
	}
	return text
}

func cmpOr(stage genai.ModelStage, def string) genai.ModelStage {
	if stage == "" || stage == genai.ModelStageUnspecified {
		return genai.ModelStage(def)
	}
	return stage
}

// servedOtherLocked is the model that served the last call when it is not the one asked for.
func (s *Session) servedOtherLocked() string {
	if s.served == "" || s.opts.Catalog.Same(s.served, s.opts.ModelName) {
		return ""
	}
	return s.served
}
