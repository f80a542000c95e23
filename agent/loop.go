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
	"github.com/reprise-dev/reprise/agent/session"
	"github.com/reprise-dev/reprise/agent/tools"
	"github.com/reprise-dev/reprise/contextwin"
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
		s.mu.Lock()
		if s.running {
			s.mu.Unlock()
			yield(Event{}, ErrBusy)
			return
		}
		s.running = true
		s.generation++
		gen := s.generation
		s.mu.Unlock()
		// finish clears running before turn_end is sent; this only covers a panic or a consumer
		// that stopped early, and must not clear the flag of a turn started since.
		defer func() {
			s.mu.Lock()
			if s.generation == gen {
				s.running = false
			}
			s.mu.Unlock()
		}()
		em := &emitter{yield: yield}
		reason, err := s.turn(ctx, em, text)
		s.finish(ctx, em, reason, err)
	}
}

// turn runs the loop and returns why it stopped.
func (s *Session) turn(ctx context.Context, em *emitter, text string) (StopReason, error) {
	text = s.opts.Secrets.String(text) // a pasted key goes no further than the session
	s.mu.Lock()
	if s.capped {
		s.mu.Unlock()
		return StopCapped, nil
	}
	if len(s.history) == 0 {
		s.task = text
	}
	s.turns++
	s.journal(session.Record{Kind: session.KindTurnStart, Turn: s.turns, Text: text})
	s.appendLocked(&genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: text}}})
	s.lastActivity = s.opts.Now()
	u := s.usageLocked()
	warnings := s.turnWarningsLocked()
	s.mu.Unlock()
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
		resp, attempts, err := s.call(ctx, em)
		if err != nil {
			if ctx.Err() != nil {
				return StopCancelled, nil
			}
			return StopError, err
		}
		fcs := session.FunctionCalls(resp.Content)
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
// turn), then closes the turn.
func (s *Session) finish(ctx context.Context, em *emitter, reason StopReason, err error) {
	if reason == StopCancelled {
		s.cancelJob()
	}
	if job := s.currentJob(); job != nil {
		select {
		case <-job.done:
		case <-ctx.Done():
			s.cancelJob()
			<-job.done
		}
		s.applyJob(em)
	}
	s.mu.Lock()
	s.lastActivity = s.opts.Now()
	if reason == StopCapped {
		s.capped = true
	}
	end := &TurnEnd{StopReason: reason, Totals: s.totals, Calls: s.calls}
	s.mu.Unlock()
	s.journal(session.Record{Kind: session.KindTurnEnd, StopReason: string(reason)})
	s.sync()
	// Idle before turn_end is sent: whoever hears it may compact, restore or ask at once.
	s.mu.Lock()
	s.running = false
	s.mu.Unlock()
	if err != nil {
		end.Err = err.Error()
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
	s.mu.Lock()
	if s.totals.Capped(s.opts.ContextPolicy) {
		s.mu.Unlock()
		return StopCapped
	}
	used, _ := s.ledger.Used()
	window := s.Window()
	th := s.opts.ContextPolicy.Check(used, window)
	if th != contextwin.Below && s.job == nil && s.canCompactLocked() {
		if plan, ok := s.planLocked(); ok && (th == contextwin.Block || s.worthLocked(plan, calls)) {
			s.startJobLocked(ctx, contextwin.TriggerAuto, "", s.thresholdNote(used, window), plan)
			s.job.turn, s.job.call = s.turns, calls
			ev := &CompactionEvent{State: CompactionRunning, Trigger: contextwin.TriggerAuto, Note: s.job.note}
			s.mu.Unlock()
			em.send(Event{Type: EventCompaction, Compaction: ev})
			s.mu.Lock()
		} else if !ok {
			s.skipAt = len(s.history)
		}
	}
	job := s.job
	// An early compaction overlaps one step (the model call it was started before, and its
	// tools); the next call waits for it. Its summary takes about as long as that call, so the
	// wait is short, and the saving starts at a known call instead of whenever it lands.
	overlapped := job != nil && job.trigger == contextwin.TriggerAuto && job.turn == s.turns && job.call < calls
	s.mu.Unlock()
	if job == nil || th != contextwin.Block && !overlapped {
		return ""
	}
	s.mu.Lock()
	s.blocking = true
	s.mu.Unlock()
	em.send(Event{Type: EventCompaction, Compaction: &CompactionEvent{State: CompactionBlocking, Trigger: job.trigger, Note: job.note}})
	s.sendUsage(em)
	select {
	case <-job.done:
	case <-ctx.Done():
	}
	s.mu.Lock()
	s.blocking = false
	s.mu.Unlock()
	if ctx.Err() != nil {
		return StopCancelled
	}
	return s.applyJob(em)
}

func (s *Session) thresholdNote(used, window int) string {
	p := s.opts.ContextPolicy
	if p.Check(used, window) == contextwin.Block {
		return fmt.Sprintf("%d ≥ %g × %d", used, p.BlockAt, window)
	}
	return fmt.Sprintf("%d > %g × %d", used, p.CompactAt, window)
}

// call makes one model call over the current history, streaming its text as events.
func (s *Session) call(ctx context.Context, em *emitter) (*gemini.Response, int, error) {
	s.mu.Lock()
	s.announceStaleLocked()
	req := &gemini.Request{
		System:   s.prompt.text,
		Tools:    s.prompt.decls,
		Contents: slices.Clone(s.history),
		Stream:   s.opts.Stream,
		Thinking: s.thinking(),
	}
	s.mu.Unlock()
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
	s.mu.Lock()
	defer s.mu.Unlock()
	if u.Prompt > 0 {
		s.ledger.Observe(u.Prompt)
		s.lastPrompt = u.Prompt
	}
	served := cmp.Or(resp.ModelVersion, s.opts.ModelName)
	cost, priced := s.billLocked(served, u)
	warnings := s.servedWarningsLocked(served, resp.ModelStatus, priced)
	s.served = served
	s.journal(session.Record{Kind: session.KindUsage, Usage: &u, Cost: cost, Unpriced: !priced, Model: served, ModelStatus: resp.ModelStatus})
	s.appendLocked(content)
	if u.Prompt > 0 && u.Candidates > 0 {
		s.ledger.Extend(u.Candidates) // thoughts are not sent back, candidates are
	}
	s.calls++
	rec := CallRecord{Turn: s.calls, Prompt: u.Prompt, Cached: u.Cached, Output: u.Output(), Thoughts: u.Thoughts, Attempts: attempts}
	var names []string
	for _, fc := range fcs {
		names = append(names, fc.Name)
	}
	rec.Tool = strings.Join(names, ", ")
	if len(fcs) > 0 {
		_, rec.Detail = describe(fcs[0])
	}
	return rec, warnings
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

func (s *Session) appendLocked(c *genai.Content) {
	c = s.opts.Secrets.Content(c) // the same message when it holds no secret
	s.history = append(s.history, c)
	s.ledger.Append(c)
	s.transcript = append(s.transcript, session.Entry{Content: c, Turn: s.turns})
	s.journal(appendRecord(c))
}

func (s *Session) sendUsage(em *emitter) {
	s.mu.Lock()
	u := s.usageLocked()
	s.mu.Unlock()
	em.send(Event{Type: EventUsage, Usage: &u})
}
