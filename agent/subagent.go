package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"path/filepath"
	"strings"
	"sync"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/agent/sandbox"
	"github.com/reprise-dev/reprise/agent/tools"
	"github.com/reprise-dev/reprise/contextwin"
)

// Subagents: the task tool runs a child session on the same workspace, with a fresh context (its
// own system prompt, the workspace instructions and the task), its own model and budget, the
// read-only tools and run_command under the parent's policy, sandbox and approvals. The parent
// gets only the child's final message. The child's calls are billed with the parent as they are
// made (the parent's caps cover them, its meter shows them), and its transcript is saved as a
// session of its own.

// Subagents is the part of a session that runs its task calls: the subagents running and their
// progress waiting to be told. What it needs of the rest of the session is given by New; its
// methods take mu and no other lock.
type Subagents struct {
	opts *Options
	conv *Conversation
	bill *billing
	// policy, env and usage read the session's settings in force and its usage report;
	// newSession is New (a child is a session).
	policy     func() contextwin.Policy
	env        func() (*tools.Env, *sandbox.Sandbox)
	usage      func() Usage
	newSession func(Options) (child, error)

	mu      sync.Mutex              // guards running and queue
	running map[string]*subagentRun // by the child's id
	queue   []Event
	notify  chan struct{} // made by init; a post wakes the turn's goroutine
}

// child is a subagent's session as its parent sees it (New gives it).
type child struct {
	run     func(ctx context.Context, text string) iter.Seq2[Event, error]
	figures func() (totals contextwin.Totals, calls int) // its own, summaries and all
	history func() []*genai.Content
	close   func()
}

// subagentRun is one task call being answered.
type subagentRun struct {
	id, call    string // the child's session id, the parent's call id
	description string
	prompt      string
	model       string
	ctx         context.Context // the turn's, cancelled by CancelSubagent
	cancel      context.CancelFunc
	done        chan struct{}
	byUser      bool         // Cancel stopped it; guarded by Subagents.mu
	res         tools.Result // set before done is closed
}

// tell posts a copy of ev: the subagent's state as it is now.
func (d *Subagents) tell(ev SubagentEvent) { d.post(Event{Type: EventSubagent, Subagent: &ev}) }

func (d *Subagents) post(ev Event) {
	d.mu.Lock()
	d.queue = append(d.queue, ev)
	d.mu.Unlock()
	select {
	case d.notify <- struct{}{}:
	default:
	}
}

func (d *Subagents) take() []Event {
	d.mu.Lock()
	defer d.mu.Unlock()
	q := d.queue
	d.queue = nil
	return q
}

func (d *Subagents) add(run *subagentRun) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.running == nil {
		d.running = map[string]*subagentRun{}
	}
	d.running[run.id] = run
}

func (d *Subagents) remove(id string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.running, id)
}

// Cancel stops the subagent id, which answers its task call with that; the turn goes on. False
// when no such subagent runs.
func (d *Subagents) Cancel(id string) bool {
	d.mu.Lock()
	run := d.running[id]
	if run != nil {
		run.byUser = true
	}
	d.mu.Unlock()
	if run == nil {
		return false
	}
	run.cancel()
	return true
}

// Running lists the subagents running now, by id.
func (d *Subagents) Running() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	ids := make([]string, 0, len(d.running))
	for id := range d.running {
		ids = append(ids, id)
	}
	return ids
}

// subagentsOn tells whether this session's model may call task.
func (d *Subagents) on() bool { return !d.opts.Subagents.Off && d.opts.parent == nil }

// startTasks starts the task calls among fcs, at most Parallel at once, and tells each one's
// tool_call; the others run in order as before. ids are the calls' ids.
func (d *Subagents) start(ctx context.Context, em *emitter, fcs []*genai.FunctionCall, ids []string) map[int]*subagentRun {
	if !d.on() || ctx.Err() != nil || em.stopped {
		return nil
	}
	var runs map[int]*subagentRun
	slots := make(chan struct{}, d.parallel())
	// Each run takes its slot after the one before it has: the first tasks asked run first.
	prev := make(chan struct{})
	close(prev)
	for i, fc := range fcs {
		if fc.Name != tools.TaskTool {
			continue
		}
		if runs == nil {
			runs = map[int]*subagentRun{}
		}
		run := d.newRun(ctx, ids[i], fc)
		runs[i] = run
		title, kind := tools.Describe(tools.Call{Name: fc.Name, Args: fc.Args})
		em.send(Event{Type: EventToolCall, Tool: &ToolEvent{ID: ids[i], Name: fc.Name, Title: d.opts.Secrets.String(title), Kind: kind,
			Status: ToolInProgress, Args: d.opts.Secrets.Map(fc.Args)}})
		if run.cancel == nil {
			continue // refused: its result is set
		}
		d.add(run)
		after, turn := prev, make(chan struct{})
		prev = turn
		go func() {
			defer close(run.done)
			defer d.remove(run.id)
			acquired := false
			select {
			case <-after:
				select {
				case slots <- struct{}{}:
					acquired = true
				case <-run.ctx.Done():
				}
			case <-run.ctx.Done():
			}
			close(turn)
			if !acquired {
				run.res = d.stoppedResult(run, "before it started")
				return
			}
			defer func() { <-slots }()
			run.res = d.run(run)
		}()
	}
	return runs
}

func (d *Subagents) parallel() int {
	n := cmp.Or(d.opts.Subagents.Parallel, DefaultSubagentParallel)
	return min(max(n, 1), MaxSubagentParallel)
}

// newRun checks a task call's arguments and prepares its run; a run without cancel is refused,
// its result d.
func (d *Subagents) newRun(ctx context.Context, call string, fc *genai.FunctionCall) *subagentRun {
	run := &subagentRun{id: NewID(d.opts.Now()), call: call, done: make(chan struct{})}
	run.description, _ = fc.Args["description"].(string)
	run.prompt, _ = fc.Args["prompt"].(string)
	run.description = strings.TrimSpace(run.description)
	if strings.TrimSpace(run.prompt) == "" || run.description == "" {
		run.res = tools.Result{Output: "task needs a description (3 to 6 words) and a prompt (the whole task)", IsError: true}
		close(run.done)
		return run
	}
	run.model = cmp.Or(d.opts.SubagentModelName, d.opts.ModelName)
	run.ctx, run.cancel = context.WithCancel(ctx)
	return run
}

// await waits for a task's subagent, telling the progress of every subagent meanwhile, and
// returns the call's final update and its result.
func (d *Subagents) await(em *emitter, fc *genai.FunctionCall, run *subagentRun) (*ToolEvent, tools.Result) {
	for done := false; !done; {
		select {
		case <-run.done:
			done = true
		case <-d.notify:
		}
		if d.flush(em) && em.stopped {
			d.cancelRuns()
		}
	}
	if run.cancel != nil {
		run.cancel()
	}
	res := run.res
	title, kind := tools.Describe(tools.Call{Name: fc.Name, Args: fc.Args})
	done := &ToolEvent{ID: run.call, Name: fc.Name, Title: d.opts.Secrets.String(title), Kind: kind, Status: ToolCompleted,
		Args: d.opts.Secrets.Map(fc.Args), Output: res.Output, Refused: res.Refused}
	if res.IsError {
		done.Status = ToolFailed
	}
	return done, res
}

// flushSubagents tells what the subagents did since the last flush, and the usage when they
// billed calls; false when there was nothing.
func (d *Subagents) flush(em *emitter) bool {
	q := d.take()
	for _, ev := range q {
		em.send(ev)
	}
	if len(q) > 0 {
		u := d.usage()
		em.send(Event{Type: EventUsage, Usage: &u})
	}
	return len(q) > 0
}

// cancelRuns stops every running subagent (the consumer stopped listening).
func (d *Subagents) cancelRuns() {
	d.mu.Lock()
	runs := make([]*subagentRun, 0, len(d.running))
	for _, r := range d.running {
		runs = append(runs, r)
	}
	d.mu.Unlock()
	for _, r := range runs {
		r.cancel()
	}
}

// runSubagent runs the child session of run to its end and returns what the parent's model gets.
func (d *Subagents) run(run *subagentRun) tools.Result {
	child, log, err := d.newChild(run)
	if err != nil {
		d.opts.Logger.Warn("subagent not started", "session", d.opts.ID, "error", err)
		return tools.Result{Output: "the subagent could not start: " + d.opts.Secrets.String(err.Error()), IsError: true}
	}
	defer func() {
		child.close()
		if log != nil {
			if err := log.Close(); err != nil {
				d.opts.Logger.Warn("subagent log not closed", "subagent", run.id, "error", err)
			}
		}
	}()
	rec := journal.Subagent{ID: run.id, Call: run.call, Description: d.opts.Secrets.String(run.description), Model: run.model, Status: journal.SubagentRunning}
	if log != nil {
		rec.Saved = log.Dir()
	}
	d.record(rec)
	ev := SubagentEvent{ID: run.id, Parent: d.opts.ID, Call: run.call, Description: rec.Description, Model: run.model, Status: journal.SubagentRunning, Saved: rec.Saved}
	d.tell(ev)
	var end *TurnEnd
	for e, err := range child.run(run.ctx, run.prompt) {
		if err != nil {
			continue // the turn_end before it carries the error
		}
		switch e.Type {
		case EventToolCall:
			ev.Tool = e.Tool.Title
		case EventModelCall:
			ev.Calls, ev.Tool = e.Call.Turn, ""
		case EventTurnEnd:
			end = e.End
			continue
		default:
			continue
		}
		ev.Totals, _ = child.figures()
		d.tell(ev)
	}
	res := d.result(run, child, end, log)
	totals, calls := child.figures()
	ev.Status, ev.Tool, ev.Totals, ev.Result, ev.Calls = d.status(run, end, res), "", totals, res.Output, calls
	if end != nil {
		ev.Err = end.Err
	}
	rec.Status, rec.Calls, rec.Totals, rec.Error = ev.Status, ev.Calls, ev.Totals, ev.Err
	d.record(rec)
	d.tell(ev)
	return res
}

// subagentRecord journals a subagent's start or end, counts a start and keeps it in the
// transcript.
func (d *Subagents) record(sa journal.Subagent) {
	r := journal.Record{Kind: journal.KindSubagent, Subagent: &sa}
	d.bill.apply(r)
	c := d.conv
	c.mu.Lock()
	c.transcript = append(c.transcript, journal.Entry{Subagent: &sa, Turn: c.turns})
	d.opts.journal(r)
	c.mu.Unlock()
}

// subagentBilled bills one of subagent id's calls with the session: its totals, caps and
// journal.
func (d *Subagents) billed(id string, r journal.Record) {
	rec := journal.Record{Kind: journal.KindSubagentUsage, Text: id, Usage: r.Usage, Cost: r.Cost, Unpriced: r.Unpriced, Model: r.Model, Tier: r.Tier, Time: r.Time}
	d.bill.apply(rec)
	d.opts.journal(rec)
}

func (d *Subagents) status(run *subagentRun, end *TurnEnd, res tools.Result) string {
	d.mu.Lock()
	byUser := run.byUser
	d.mu.Unlock()
	switch {
	case byUser || end != nil && end.StopReason == StopCancelled:
		return journal.SubagentCancelled
	case res.IsError:
		return journal.SubagentFailed
	default:
		return journal.SubagentCompleted
	}
}

// stoppedResult answers a task whose subagent was stopped when (before it started, say).
func (d *Subagents) stoppedResult(run *subagentRun, when string) tools.Result {
	d.mu.Lock()
	byUser := run.byUser
	d.mu.Unlock()
	if byUser {
		return tools.Result{Output: "the user stopped this subagent " + when + "; do not start it again unless asked", IsError: true, Refused: true}
	}
	return tools.Result{Output: "cancelled by the user " + when, IsError: true}
}

// subagentResult is what the parent's model gets of a finished subagent: its final message,
// bounded like any tool output, and where its whole transcript is.
func (d *Subagents) result(run *subagentRun, c child, end *TurnEnd, log SubagentLog) tools.Result {
	_, calls := c.figures()
	where := "not saved"
	if log != nil {
		where = "its transcript is session " + run.id
	}
	foot := fmt.Sprintf("\n\n[subagent %s: %d model calls on %s; %s]", run.id, calls, run.model, where)
	if end == nil || end.StopReason == StopCancelled {
		res := d.stoppedResult(run, "while it ran")
		res.Output += foot
		return res
	}
	text := strings.TrimSpace(finalText(c.history()))
	var out string
	switch end.StopReason {
	case StopEndTurn:
		out = cmp.Or(text, "(the subagent ended without a report)")
	case StopError:
		return tools.Result{Output: "the subagent failed: " + end.Err + foot, IsError: true}
	case StopMaxTurnRequests:
		out = fmt.Sprintf("The subagent stopped at its limit of %d model calls before it finished. Its last words:\n%s", calls, cmp.Or(text, "(none)"))
	case StopCapped:
		return tools.Result{Output: "the subagent stopped: the session reached its cap" + foot, IsError: true}
	default:
		out = fmt.Sprintf("The subagent stopped (%s). Its last words:\n%s", end.StopReason, cmp.Or(text, "(none)"))
	}
	limit := d.policy().ToolOutputMaxChars
	bounded, omitted := contextwin.Truncate(out, limit)
	return tools.Result{Output: bounded + foot, TotalChars: len([]rune(out)), Omitted: omitted}
}

// finalText is the text of the last model message of history, thoughts left out.
func finalText(history []*genai.Content) string {
	for i := len(history) - 1; i >= 0; i-- {
		c := history[i]
		if c == nil || c.Role != genai.RoleModel {
			continue
		}
		var b strings.Builder
		for _, p := range c.Parts {
			if p != nil && !p.Thought && p.Text != "" {
				b.WriteString(p.Text)
			}
		}
		return b.String()
	}
	return ""
}

// newChild opens run's child session: saved as a session of its own when the parent can save
// one.
func (d *Subagents) newChild(run *subagentRun) (child, SubagentLog, error) {
	o := *d.opts
	p := d.policy()
	p.ContextBudget = cmp.Or(o.Subagents.Budget, p.ContextBudget)
	p.ExplicitCache, p.ExplicitCacheIdle = false, false
	if err := p.Validate(); err != nil {
		return child{}, nil, fmt.Errorf("subagentBudget: %w", err)
	}
	env, sb := d.env()
	co := Options{
		Config:    o.Config,
		ID:        run.id,
		Workspace: o.Workspace,
		Model:     o.Model, ModelName: o.ModelName, InputTokenLimit: o.InputTokenLimit, Thinking: o.Thinking,
		Commands: env.Commands,
		Sandbox:  sb,
		StateDir: filepath.Join(o.StateDir, "subagents", run.id),
		Now:      o.Now,
		After:    o.After,
		parent:   &parentLink{overCap: func() bool { return d.bill.overCap(d.policy()) }},
	}
	if inner, ok := o.Model.(*ExplicitCache); ok {
		co.Model = inner.inner // the parent's explicit cache is the parent's prefix
	}
	if o.SubagentModel != nil {
		co.Model, co.ModelName, co.InputTokenLimit, co.Thinking = o.SubagentModel, o.SubagentModelName, o.SubagentInputLimit, o.SubagentThinking
	}
	co.ContextPolicy = p
	co.MaxTurnRequests = cmp.Or(o.Subagents.MaxCalls, DefaultSubagentMaxCalls)
	co.Approver = nil
	if o.Approver != nil {
		co.Approver = subagentApprover{inner: o.Approver, id: run.id, label: run.description}
	}
	co.Between = nil
	var log SubagentLog
	if o.OpenSubagent != nil {
		l, err := o.OpenSubagent(journal.Meta{ID: run.id, Workspace: o.Workspace, Model: co.ModelName, Created: o.Now(), Parent: o.ID, Subagent: run.description})
		if err != nil {
			return child{}, nil, err
		}
		log, co.Blobs, co.StateDir = l, l, l.Dir()
	}
	co.Journal = teeJournal{log: log, billed: func(r journal.Record) { d.billed(run.id, r) }}
	c, err := d.newSession(co)
	if err != nil {
		if log != nil {
			err = errors.Join(err, log.Close())
		}
		return child{}, nil, err
	}
	return c, log, nil
}

// teeJournal is a subagent's journal: its own log, when saved, and its calls billed with the
// parent as they are made.
type teeJournal struct {
	log    SubagentLog
	billed func(journal.Record)
}

func (t teeJournal) Append(r journal.Record) error {
	if r.Usage != nil && (r.Kind == journal.KindUsage || r.Kind == journal.KindSummaryUsage) {
		t.billed(r)
	}
	if t.log == nil {
		return nil
	}
	return t.log.Append(r)
}

func (t teeJournal) Sync() error {
	if t.log == nil {
		return nil
	}
	return t.log.Sync()
}

// subagentApprover asks the parent's approver, naming the subagent that asks. Its call ids are
// the subagent's own, which may be the parent's too ("call-1-1"): they are prefixed with its id,
// so that an editor never takes the question for one of the parent's calls.
type subagentApprover struct {
	inner tools.Approver
	id    string
	label string
}

func (a subagentApprover) Approve(ctx context.Context, req tools.ApprovalRequest) (tools.Decision, error) {
	req.Subagent = a.label
	req.CallID = a.id + "/" + req.CallID
	return a.inner.Approve(ctx, req)
}
