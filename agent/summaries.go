package agent

import (
	"cmp"
	"context"
	"errors"
	"strings"

	"github.com/reprise-dev/reprise/agent/gemini"
	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/contextwin"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// summaryCalls are what a compaction's summary calls use: the conversation's prompt, which an
// in-context summary sends as the agent's own, the billing they are charged to, the journal.
type summaryCalls struct {
	conv *Conversation
	bill *billing
	opts *Options
}

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
func (m summaryCalls) summarizer(job *compactionJob) contextwin.Summarizer {
	return func(ctx context.Context, sr contextwin.SummaryRequest) (string, error) {
		return m.summarize(ctx, job, sr)
	}
}

// summarize asks job's route for one summary. On Flex it asks once, under job.urgent: a shed
// request, a failure, or the agent coming to wait for the job (urgent is cancelled) sends it and
// every later call of the job to the standard tier, and job.fellBack says why, for the user.
// The calls of one job are sequential, so fellBack needs no lock; it is read once job.done closes.
func (m summaryCalls) summarize(ctx context.Context, job *compactionJob, sr contextwin.SummaryRequest) (string, error) {
	if job.route.flex && job.fellBack == "" {
		text, err := m.summaryCall(job.urgent, job.route, sr, catalog.TierFlex)
		if err == nil || ctx.Err() != nil {
			return text, err
		}
		job.fellBack = flexFallback(job.urgent.Err() != nil, err)
	}
	return m.summaryCall(ctx, job.route, sr, catalog.TierStandard)
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
func (m summaryCalls) summaryCall(ctx context.Context, route summaryRoute, sr contextwin.SummaryRequest, tier catalog.Tier) (string, error) {
	req := &gemini.Request{System: contextwin.SummaryInstruction, Contents: sr.Contents, Thinking: route.thinking, Tier: tier}
	if sr.InContext {
		m.conv.mu.Lock()
		req.System, req.Tools, req.NoFunctionCalls = m.conv.prompt.text, m.conv.prompt.decls, true
		m.conv.mu.Unlock()
	}
	for ch, err := range route.model.Generate(ctx, req) {
		if err != nil {
			return "", err
		}
		if ch.Done == nil {
			continue
		}
		served := cmp.Or(ch.Done.ModelVersion, route.name)
		cu := m.bill.usage(served, ch.Done.Usage)
		servedTier := cmp.Or(ch.Done.Tier, tier)
		cost, priced := m.bill.summary(served, servedTier, cu)
		m.opts.journal(journal.Record{Kind: journal.KindSummaryUsage, Usage: &cu, Cost: cost, Unpriced: !priced, Model: served, ModelStatus: ch.Done.ModelStatus, Tier: servedTier})
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

// compactionJob is one compaction running in the background over a snapshot of the history. The
// session owns it: cancel stops it, done closes when its goroutine ends.
type compactionJob struct {
	trigger     contextwin.Trigger
	focus, note string
	snapshot    int // history length when it started; only appends happen meanwhile
	turn, call  int // the turn and its model call before which an automatic one started
	before      int // tokens used when it started
	cancel      context.CancelFunc
	done        chan struct{}
	res         contextwin.Result
	err         error
	// route is where its summaries go. urgent is the context of a call on Flex: hurry cancels
	// it when the agent comes to wait for the job, which sends the summary to the standard tier.
	route  summaryRoute
	urgent context.Context
	hurry  context.CancelFunc
	// fellBack says why a summary asked on Flex was asked again on the standard tier; written by
	// the job's goroutine, read once done is closed.
	fellBack string
}

// onFlex tells whether the job's summary is still asked on the Flex tier, unfinished: nothing has
// come to wait for it, nothing shed it.
func (j *compactionJob) onFlex() bool {
	select {
	case <-j.done:
		return false
	case <-j.urgent.Done():
		return false
	default:
		return j.route.flex
	}
}
