package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent/gemini"
	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/agent/tools"
	"github.com/reprise-dev/reprise/contextwin"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// emitter hands events to the consumer and remembers when it stopped listening.
type emitter struct {
	yield   func(Event, error) bool
	stopped bool
}

func (e *emitter) send(ev Event) bool {
	if !e.stopped && !e.yield(ev, nil) {
		e.stopped = true
	}
	return !e.stopped
}

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
	if s.bill.overCap(f.policy) {
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

// autoCompact starts a compaction when the prompt is past compactAt and one is due (see
// beforeCall). It returns the compaction running, if any, whether the next call must wait for it,
// and whether it started it.
func (k *compactor) autoCompact(ctx context.Context, f planFacts, calls int) (job *compactionJob, wait, started bool, cleared *contextwin.Checkpoint) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.conv.mu.Lock()
	defer k.conv.mu.Unlock()
	used, _ := k.conv.ledger.Used()
	window := k.opts.window(f.policy)
	th := f.policy.Check(used, window)
	// The first tier: old tool results cleared, when that pays; a summary only when it is not
	// enough. What was decided, and why, is kept for the meter.
	if th == contextwin.Below {
		k.decision = ""
		e, due := k.earlyPlanLocked(f, calls, used)
		switch {
		case !due || k.job != nil:
		case e.summary == nil:
			cleared, k.decision = k.clearEarlyLocked(e, calls)
		default:
			note := k.startAutoLocked(ctx, f, *e.summary, calls, "a summary frees more than clearing old tool results", true)
			k.decision, started = "summarizing the oldest turns before compactAt: "+note, true
		}
	} else if k.job == nil {
		cleared, k.decision = k.firstTierLocked(f, calls, used, window)
		if cleared != nil {
			used, _ = k.conv.ledger.Used()
			th = f.policy.Check(used, window)
		}
	}
	if th != contextwin.Below && k.job == nil && !f.policy.NoSummaries && k.canCompactLocked() {
		if plan, ok := k.conv.planLocked(f, 0); ok && (th == contextwin.Block || k.opts.worth(f, plan, calls)) {
			note := k.startAutoLocked(ctx, f, plan, calls, thresholdNote(f.policy, used, window), th != contextwin.Block)
			k.decision, started = "summarizing the oldest turns: "+note, true
		} else if !ok {
			k.skipAt = len(k.conv.history)
		}
	}
	job = k.job
	// An early compaction overlaps one step (the model call it was started before, and its
	// tools); the next call waits for it. Its summary takes about as long as that call, so the
	// wait is short, and the saving starts at a known call instead of whenever it lands. Not one
	// on Flex: it takes minutes, and the loop goes on until it lands or blockAt comes.
	overlapped := job != nil && !job.route.flex && job.trigger == contextwin.TriggerAuto && job.turn == k.conv.turns && job.call < calls
	wait = job != nil && (th == contextwin.Block || overlapped)
	return job, wait, started, cleared
}

// startAutoLocked starts an automatic compaction as plan cuts it, before the model call calls,
// and returns its note. s.compactor.mu and s.conv.mu must be held.
func (k *compactor) startAutoLocked(ctx context.Context, f planFacts, plan contextwin.Plan, calls int, note string, background bool) string {
	k.startJobLocked(ctx, contextwin.TriggerAuto, "", note, plan, f, background)
	k.job.turn, k.job.call = k.conv.turns, calls
	return k.job.note
}

func thresholdNote(p contextwin.Policy, used, window int) string {
	if p.Check(used, window) == contextwin.Block {
		return fmt.Sprintf("%d ≥ %g × %d", used, p.BlockAt, window)
	}
	return fmt.Sprintf("%d > %g × %d", used, p.CompactAt, window)
}

// call makes one model call over the current history, streaming its text as events.
func (s *Session) call(ctx context.Context, em *emitter) (*gemini.Response, int, error) {
	stale := s.files.toAnnounce()
	s.conv.mu.Lock()
	announced := s.conv.announceStaleLocked(stale)
	s.conv.announcePinsLocked()
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
	u := contextwin.CallUsage{Prompt: resp.Usage.Prompt, Cached: resp.Usage.Cached, Candidates: resp.Usage.Candidates, Thoughts: resp.Usage.Thoughts}
	content := resp.Content
	if content.Role == "" {
		content.Role = genai.RoleModel
	}
	served := cmp.Or(resp.ModelVersion, s.opts.ModelName)
	s.conv.mu.Lock()
	// The history is the request's until the reply is appended: what it shared with the last
	// request is what implicit caching should have billed as cached. Billing takes only its own
	// lock, so it may be called under conv.mu.
	c := &s.conv
	if u.Prompt > 0 {
		u.ExpectedCached = min(c.last.expectedCached(&c.prompt, c.history, &c.ledger, s.bill.pricing.Catalog.CacheMin(served)), u.Prompt)
		c.last.remember(&c.prompt, c.history, u.Prompt)
		u.Explicit = s.caching.lastRead()
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

// appendLocked appends c to the history, its ledger, the transcript and the journal. s.conv.mu
// must be held.
func (s *Session) appendLocked(c *genai.Content) {
	c = s.opts.Secrets.Content(c) // the same message when it holds no secret
	cv := &s.conv
	cv.history = append(cv.history, c)
	cv.ledger.Append(c)
	cv.transcript = append(cv.transcript, journal.Entry{Content: c, Turn: cv.turns, Calls: s.bill.callCount()})
	s.opts.journal(appendRecord(c))
}

func (s *Session) sendUsage(em *emitter) {
	u := s.usage()
	em.send(Event{Type: EventUsage, Usage: &u})
}

// turnLoop is the turn loop's own state. Its methods take mu and no other lock.
type turnLoop struct {
	mu           sync.Mutex // guards everything below
	running      bool
	generation   int // turns started; a turn's deferred cleanup acts only on its own
	lastActivity time.Time
}

// begin marks a turn running and returns its generation; false when one already runs.
func (l *turnLoop) begin() (int, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.running {
		return 0, false
	}
	l.running = true
	l.generation++
	return l.generation, true
}

// end marks the session idle unless a turn started after the one of generation gen.
func (l *turnLoop) end(gen int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.generation == gen {
		l.running = false
	}
}

// idle marks the session idle.
func (l *turnLoop) idle() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.running = false
}

// touch records activity at t.
func (l *turnLoop) touch(t time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lastActivity = t
}

// isRunning tells whether a turn runs.
func (l *turnLoop) isRunning() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.running
}
