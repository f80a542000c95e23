package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent/gemini"
	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/agent/tools"
	"github.com/reprise-dev/reprise/contextwin"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// Run performs one user turn: the model is called, its tool calls run, until it answers without
// calling a tool, the turn budget or the session cap is reached, or ctx is cancelled. Every step is
// an event; the last one is EventTurnEnd. A model error ends the turn with StopError and is also
// yielded as the error. Only one turn runs at a time in a session (ErrBusy otherwise).
func (s *Session) Run(ctx context.Context, text string) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		gen, ok := s.loop.begin()
		if !ok {
			yield(Event{}, ErrBusy)
			return
		}
		// finish clears running before turn_end is sent; this only covers a panic or a consumer
		// that stopped early, and must not clear the flag of a turn started since.
		defer s.loop.end(gen)
		s.caching.stopKeeper() // the session is no longer idle
		em := &emitter{yield: yield}
		reason, err := s.turn(ctx, em, text)
		s.finish(ctx, em, reason, err)
	}
}

// turn runs the loop and returns why it stopped.
func (s *Session) turn(ctx context.Context, em *emitter, text string) (StopReason, error) {
	text = s.opts.Secrets.String(text) // a pasted key goes no further than the session
	if s.bill.isCapped() {
		return StopCapped, nil
	}
	if err := s.bill.unmetered(s.policy().MaxCostUSD); err != nil {
		return StopError, err // before the request joins the history: nothing to undo
	}
	s.conv.mu.Lock()
	if len(s.conv.history) == 0 {
		s.conv.task = text
	}
	s.conv.turns++
	s.opts.journal(journal.Record{Kind: journal.KindTurnStart, Turn: s.conv.turns, Text: text})
	s.appendLocked(&genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: text}}})
	s.conv.mu.Unlock()
	s.loop.touch(s.opts.Now())
	u := s.usage()
	p := s.policy()
	warnings := s.bill.turnWarnings(p, s.opts.window(p))
	em.send(Event{Type: EventUsage, Usage: &u})
	for _, w := range warnings {
		em.send(Event{Type: EventWarning, Text: w})
	}

	for calls := 0; ; calls++ {
		if ctx.Err() != nil || em.stopped {
			return StopCancelled, nil
		}
		if stop := s.beforeCall(ctx, em, calls); stop != "" {
			return stop, nil
		}
		if calls >= s.opts.MaxTurnRequests {
			return StopMaxTurnRequests, nil
		}
		if err := s.bill.unmetered(s.policy().MaxCostUSD); calls > 0 && err != nil {
			return StopError, err // the API routed a call to a model without a known price
		}
		resp, attempts, err := s.call(ctx, em)
		if err != nil {
			if ctx.Err() != nil {
				return StopCancelled, nil
			}
			return StopError, err
		}
		fcs := journal.FunctionCalls(resp.Content)
		rec, warnings := s.record(resp, fcs, attempts)
		for _, w := range warnings {
			em.send(Event{Type: EventWarning, Text: w})
		}
		em.send(Event{Type: EventModelCall, Call: &rec})
		s.sendUsage(em)
		if len(fcs) == 0 {
			return StopEndTurn, nil
		}
		s.runTools(ctx, em, fcs)
		s.sendUsage(em)
	}
}

// finish waits for a compaction still running (so its result is applied and reported within the
// turn), then closes the turn. A summary still on Flex is not waited for: it goes on between turns,
// at half price, and lands at the next turn's first call, or is hurried to the standard tier when
// something comes to wait for it (blockAt, /compact).
func (s *Session) finish(ctx context.Context, em *emitter, reason StopReason, err error) {
	if reason == StopCancelled {
		s.compactor.cancelJob()
	}
	if job := s.compactor.currentJob(); job != nil && !job.onFlex() {
		job.hurry() // the turn waits for it
		select {
		case <-job.done:
		case <-ctx.Done():
			s.compactor.cancelJob()
			<-job.done
		}
		s.applyJob(em)
	} else if job != nil {
		s.applyJob(em) // landed already, or left running
	}
	s.loop.touch(s.opts.Now())
	if reason == StopCapped {
		s.bill.setCapped()
	}
	f := s.bill.figures()
	end := &TurnEnd{StopReason: reason, Totals: f.totals, Calls: f.calls}
	if err != nil {
		end.Err = s.opts.Secrets.String(err.Error())
	}
	end.Changes = s.endTurn(reason, end.Err, f.calls)
	s.opts.sync()
	// Before the session is idle, so that the next turn, which stops it, cannot begin first.
	s.caching.startKeeper()
	// Idle before turn_end is sent: whoever hears it may compact, restore or ask at once.
	s.loop.idle()
	if job := s.compactor.currentJob(); job != nil {
		s.landBetween(job) // left running on Flex
	}
	if em.send(Event{Type: EventTurnEnd, End: end}) && err != nil {
		em.yield(Event{}, err)
	}
}

// beforeCall applies a finished compaction, starts one, waits for it at blockAt, and checks the
// session cap. It returns a stop reason or "". A compaction starts when the prompt reaches blockAt
// (it must), or earlier, past compactAt, when it pays for itself over the calls the turn is
// expected to make (calls is how many it made): each compaction costs a summary call and the
// cache of the prefix it rewrites, which small savings do not repay.
func (s *Session) beforeCall(ctx context.Context, em *emitter, calls int) StopReason {
	if stop := s.applyJob(em); stop != "" {
		return stop
	}
	f := s.planFacts()
	if s.bill.overCap(f.policy) || s.opts.parent != nil && s.opts.parent.overCap() {
		return StopCapped
	}
	job, wait, started, cleared := s.compactor.autoCompact(ctx, f, calls)
	if cleared != nil {
		em.send(Event{Type: EventCompaction, Compaction: &CompactionEvent{State: CompactionDone, Trigger: contextwin.TriggerAuto, Checkpoint: cleared,
			Note: fmt.Sprintf("%d tool results cleared, %d tokens freed; the model reads them again on demand", cleared.Cleared, cleared.TokensBefore-cleared.TokensAfter)}})
		s.sendUsage(em)
	}
	if started {
		em.send(Event{Type: EventCompaction, Compaction: &CompactionEvent{State: CompactionRunning, Trigger: contextwin.TriggerAuto, Note: job.note}})
	}
	if !wait {
		return ""
	}
	s.compactor.setBlocking(true)
	job.hurry() // a summary on Flex, minutes away, goes to the standard tier
	em.send(Event{Type: EventCompaction, Compaction: &CompactionEvent{State: CompactionBlocking, Trigger: job.trigger, Note: job.note}})
	s.sendUsage(em)
	select {
	case <-job.done:
	case <-ctx.Done():
	}
	s.compactor.setBlocking(false)
	if ctx.Err() != nil {
		return StopCancelled
	}
	return s.applyJob(em)
}

// call makes one model call over the current history, streaming its text as events.
func (s *Session) call(ctx context.Context, em *emitter) (*gemini.Response, int, error) {
	stale := s.files.toAnnounce()
	forgotten := s.memo.announce()
	s.conv.mu.Lock()
	announced := s.conv.announceStaleLocked(stale)
	s.conv.announcePinsLocked()
	if forgotten != "" {
		s.conv.addNotesLocked(forgotten)
	}
	req := &gemini.Request{
		System:   s.conv.prompt.text,
		Tools:    s.conv.prompt.decls,
		Contents: slices.Clone(s.conv.history),
		Stream:   s.opts.Stream,
		Thinking: s.opts.thinking(),
	}
	s.conv.mu.Unlock()
	if announced {
		s.files.announced(stale)
	}
	attempts := 1
	thought, text := s.opts.Secrets.Stream(), s.opts.Secrets.Stream()
	send := func(typ EventType, chunk string) {
		if chunk != "" {
			em.send(Event{Type: typ, Text: chunk})
		}
	}
	for ch, err := range s.opts.Model.Generate(ctx, req) {
		if err != nil {
			return nil, attempts, fmt.Errorf("model call: %w", err)
		}
		if r := ch.Retry; r != nil {
			attempts++
			msg := ""
			if r.Err != nil {
				msg = r.Err.Error()
			}
			if r.Discard {
				thought, text = s.opts.Secrets.Stream(), s.opts.Secrets.Stream()
			}
			em.send(Event{Type: EventRetry, Retry: &RetryEvent{Attempt: r.Attempt, Delay: r.Delay, Err: msg, Discard: r.Discard}})
		}
		// A thought and the text are two streams taking turns: when one speaks, what the other held
		// back is over, so the events keep their order.
		if ch.Thought != "" {
			send(EventText, text.Flush())
			send(EventThought, thought.Next(ch.Thought))
		}
		if ch.Text != "" {
			send(EventThought, thought.Flush())
			send(EventText, text.Next(ch.Text))
		}
		if ch.Done != nil {
			if ch.Done.Content == nil {
				return nil, attempts, errors.New("model call: the response has no content")
			}
			send(EventThought, thought.Flush())
			send(EventText, text.Flush())
			return ch.Done, attempts, nil
		}
	}
	return nil, attempts, errors.New("model call: the stream ended without a response")
}

// record appends the model's reply, learns from its usage and bills it. It returns the row of the
// turn table and the warnings the call gives rise to.
func (s *Session) record(resp *gemini.Response, fcs []*genai.FunctionCall, attempts int) (CallRecord, []string) {
	content := resp.Content
	if content.Role == "" {
		content.Role = genai.RoleModel
	}
	served := cmp.Or(resp.ModelVersion, s.opts.ModelName)
	u := s.bill.usage(served, resp.Usage)
	s.conv.mu.Lock()
	// The history is the request's until the reply is appended: what it shared with the last
	// request is what implicit caching should have billed as cached. Billing takes only its own
	// lock, so it may be called under conv.mu.
	if u.Prompt > 0 {
		u.Explicit = s.caching.lastRead()
		cacheMin := s.bill.cacheMin(served)
		s.conv.cacheCheck(&u, cacheMin, cacheMin != noCache, s.bill.idleLife(), s.opts.Now())
		s.caching.observe(u)
	}
	n, cost, priced, warnings := s.bill.call(served, resp.Tier, u, resp.ModelStatus)
	if s.caching != nil {
		warnings = append(warnings, s.caching.takeNotes()...)
	}
	if u.Prompt > 0 {
		s.conv.ledger.Observe(u.Prompt)
	}
	// Journaled under conv.mu, right before the reply: the record anchors the prompt count at
	// this length of the history.
	rec := journal.Record{Kind: journal.KindUsage, Usage: &u, Cost: cost, Unpriced: !priced, Model: served, ModelStatus: resp.ModelStatus}
	if resp.Tier != "" && resp.Tier != catalog.TierStandard { // the loop asks for none: only an unexpected one is worth the bytes
		rec.Tier = resp.Tier
	}
	s.opts.journal(rec)
	s.appendLocked(content)
	if u.Prompt > 0 && u.Candidates > 0 {
		s.conv.ledger.Extend(u.Candidates) // thoughts are not sent back, candidates are
	}
	s.conv.mu.Unlock()
	row := CallRecord{Turn: n, Prompt: u.Prompt, Cached: u.Cached, ExpectedCached: u.ExpectedCached, Output: u.Output(), Thoughts: u.Thoughts, Attempts: attempts}
	var names []string
	for _, fc := range fcs {
		names = append(names, fc.Name)
	}
	row.Tool = strings.Join(names, ", ")
	if len(fcs) > 0 {
		_, row.Detail = describe(fcs[0])
	}
	return row, warnings
}

// describe returns a call's title and its main argument.
func describe(fc *genai.FunctionCall) (title, detail string) {
	title, _ = tools.Describe(tools.Call{Name: fc.Name, Args: fc.Args})
	for _, k := range []string{"command", "path", "pattern"} {
		if v, ok := fc.Args[k].(string); ok && v != "" {
			return title, v
		}
	}
	return title, ""
}

func (s *Session) sendUsage(em *emitter) {
	u := s.usage()
	em.send(Event{Type: EventUsage, Usage: &u})
}
