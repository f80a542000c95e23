package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/reprise-dev/reprise/agent/gemini"
	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/contextwin"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// summaryRoute is where one compaction's summary calls go: the session's model, or the
// compactionModel setting's; on the standard tier, or on Flex first.
type summaryRoute struct {
	model    Model
	name     string // the model asked for
	thinking gemini.Thinking
	// cold: another model than the session's. Its cache holds none of the session's prefix, so
	// the summary is asked stand-alone, over the rendered transcript, which is smaller.
	cold bool
	// flex: asked on the Flex tier first, falling back to the standard tier once.
	flex bool
}

// summaryTarget is the summaries' model as planFacts reads it: its name, whether it is another
// model than the session's, and whether the Flex setting applies to it.
func (b *billing) summaryTarget(p contextwin.Policy) (name string, cold, flexOK bool) {
	name = b.asked
	if b.compaction != "" {
		name, cold = b.compaction, true
	}
	flexOK = p.CompactionTier == catalog.TierFlex && b.pricing.Catalog.OffersFlex(name)
	return name, cold, flexOK
}

// route is where the summaries of a compaction planned with f go. Only a background one may ask
// for Flex: Flex answers in minutes, and a summary the agent waits for must not.
func (o *Options) route(f planFacts, background bool) summaryRoute {
	r := summaryRoute{model: o.Model, name: o.ModelName, thinking: o.thinking(), flex: background && f.flexOK}
	if f.cold {
		t := o.CompactionThinking
		r.model, r.name, r.thinking, r.cold = o.CompactionModel, f.summaryModel, gemini.Thinking{Level: t.Level, Budget: t.Budget}, true
	}
	return r
}

// summarizer is the Summarizer handed to contextwin for job.
func (k *compactor) summarizer(job *compactionJob) contextwin.Summarizer {
	return func(ctx context.Context, sr contextwin.SummaryRequest) (string, error) {
		return k.summarize(ctx, job, sr)
	}
}

// summarize asks job's route for one summary. On Flex it asks once, under job.urgent: a shed
// request, a failure, or the agent coming to wait for the job (urgent is cancelled) sends it and
// every later call of the job to the standard tier, and job.fellBack says why, for the user.
// The calls of one job are sequential, so fellBack needs no lock; it is read once job.done closes.
func (k *compactor) summarize(ctx context.Context, job *compactionJob, sr contextwin.SummaryRequest) (string, error) {
	if job.route.flex && job.fellBack == "" {
		text, err := k.summaryCall(job.urgent, job.route, sr, catalog.TierFlex)
		if err == nil || ctx.Err() != nil {
			return text, err
		}
		job.fellBack = flexFallback(job.urgent.Err() != nil, err)
	}
	return k.summaryCall(ctx, job.route, sr, catalog.TierStandard)
}

// flexFallback says why a summary asked on Flex was asked again on the standard tier.
func flexFallback(waited bool, err error) string {
	var why string
	switch {
	case waited:
		why = "the agent came to wait for it, and Flex answers in minutes"
	case gemini.IsShed(err):
		why = "Flex capacity was shed (" + err.Error() + ")"
	default:
		why = "the Flex request failed (" + err.Error() + ")"
	}
	return "a background summary asked on the Flex tier was asked again on the standard tier, at the standard price: " + why
}

// summaryCall is one unary model call for a summary on route, on tier. In context it carries the
// agent's own system instruction and tool declarations, function calling off, so that its prefix
// is the one the agent's calls cached. Its usage is billed to the session at the served model
// and tier, and journaled with both.
func (k *compactor) summaryCall(ctx context.Context, route summaryRoute, sr contextwin.SummaryRequest, tier catalog.Tier) (string, error) {
	req := &gemini.Request{System: contextwin.SummaryInstruction, Contents: sr.Contents, Thinking: route.thinking, Tier: tier}
	if sr.InContext {
		k.conv.mu.Lock()
		req.System, req.Tools, req.NoFunctionCalls = k.conv.prompt.text, k.conv.prompt.decls, true
		k.conv.mu.Unlock()
	}
	for ch, err := range route.model.Generate(ctx, req) {
		if err != nil {
			return "", err
		}
		if ch.Done == nil {
			continue
		}
		u := ch.Done.Usage
		cu := contextwin.CallUsage{Prompt: u.Prompt, Cached: u.Cached, Candidates: u.Candidates, Thoughts: u.Thoughts}
		served := cmp.Or(ch.Done.ModelVersion, route.name)
		servedTier := cmp.Or(ch.Done.Tier, tier)
		cost, priced := k.bill.summary(served, servedTier, cu)
		k.opts.journal(journal.Record{Kind: journal.KindSummaryUsage, Usage: &cu, Cost: cost, Unpriced: !priced, Model: served, ModelStatus: ch.Done.ModelStatus, Tier: servedTier})
		var b strings.Builder
		if ch.Done.Content != nil {
			for _, p := range ch.Done.Content.Parts {
				if !p.Thought {
					b.WriteString(p.Text)
				}
			}
		}
		return b.String(), nil
	}
	return "", errors.New("summarizer: no response")
}

// renderedTokensLocked are the tokens of each message as a stand-alone summary renders it (tool
// outputs cut), for planning a summary on another model. s.conv.mu must be held.
func (c *Conversation) renderedTokensLocked(est *contextwin.Estimator) []int {
	out := make([]int, len(c.history))
	for i, m := range c.history {
		if m != nil {
			out[i] = est.Tokens(contextwin.EstimateText(contextwin.RenderMessage(m)))
		}
	}
	return out
}

// summaryWarningsLocked are what the user hears once per session about the compactionModel and
// compactionTier settings: a retired model, one without a known price (the summaries' cost is
// unknown), Flex asked of a model the catalogue does not list on it. b.mu must be held.
func (b *billing) summaryWarningsLocked(p contextwin.Policy, cat *catalog.Catalog) []string {
	name := cmp.Or(b.compaction, b.asked)
	var out []string
	if b.compaction != "" {
		if m, ok := cat.Lookup(name); ok && m.RetiredAt(b.now()) {
			text := fmt.Sprintf("compactionModel %s was shut down on %s (model catalogue of %s)", name, m.Shutdown, cat.CurrentAsOf)
			if m.Replacement != "" {
				text += fmt.Sprintf("; use %s instead", m.Replacement)
			}
			out = append(out, b.warnOnceLocked("compaction:retired", text))
		}
		if _, ok := b.pricing.At(name, b.now(), 0); !ok {
			out = append(out, b.warnOnceLocked("compaction:price", fmt.Sprintf(
				"compactionModel %s has no known price: the summaries' cost is unknown (give it one with --prices or the prices setting)", name)))
		}
	}
	if p.CompactionTier == catalog.TierFlex && !cat.OffersFlex(name) {
		out = append(out, b.warnOnceLocked("compaction:flex", fmt.Sprintf(
			"compactionTier flex: the model catalogue of %s does not list %s on the Flex tier, so its summaries use the standard tier "+
				"(if it is offered, say so with the models setting: {%q: {\"flex\": true}})", cat.CurrentAsOf, name, name)))
	}
	return out
}
