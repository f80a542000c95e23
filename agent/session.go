// Package agent runs the coding agent's loop over a workspace: it calls the model, dispatches tool
// calls, keeps the context window in budget (truncation, background compaction, session cap) and
// reports everything as a stream of events that a CLI or an editor server consumes.
package agent

import (
	"errors"
	"slices"
	"sync"
	"time"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/agent/sandbox"
	"github.com/reprise-dev/reprise/agent/tools"
	"github.com/reprise-dev/reprise/contextwin"
)

// ErrBusy is returned when a turn is asked of a session that is already running one.
var ErrBusy = errors.New("a turn is already running in this session")

// Session is one conversation with the agent. Run may be called again for follow-up requests;
// Context and Compact may be called at any time, from any goroutine.
//
// Its state is split by concern, each part behind its own lock:
//   - settings: the context policy and the tools' environment, which SetPolicy and SetSandbox change;
//   - conv: what the next request sends and how it came to be (history, ledger, transcript,
//     checkpoints, undo frames);
//   - files: what the harness holds of the workspace (changes, restore points, reads, staleness,
//     the last test verdict);
//   - memo: what the agent keeps besides the conversation (its plan, its notes);
//   - bill: what the calls cost, the warnings about models and prices, the caps;
//   - subagents: the subagents its task calls run;
//   - compactor: the compaction running in the background and when to start the next;
//   - loop: whether a turn runs, and when the session was last active.
//
// Lock order: compactor.mu may be held while conv.mu is taken, never the other way round. Starting
// a compaction snapshots the history and installing one swaps it; holding compactor.mu across both
// keeps a second compaction from starting on a history that is about to change. No other lock is
// ever held while another is taken: what one part needs of another is read into locals first.
type Session struct {
	// opts are the options New completed; never written after New (the policy and sandbox in
	// force are in settings).
	opts      Options
	settings  settings
	conv      Conversation
	files     Tracker
	memo      Memo
	bill      billing
	compactor compactor
	loop      turnLoop
	subagents Subagents
	caching   *ExplicitCache // explicit caching in front of the model; nil when the model has none
	landing   sync.WaitGroup // compactions landing between turns (landBetween): Close waits for them
}

// settings are what may change in a session's options while it lives (SetPolicy, SetSandbox).
type settings struct {
	mu     sync.Mutex // guards policy, env and sandbox
	policy contextwin.Policy
	// sandbox is the sandbox in force, before ForSession: a subagent's commands are confined by
	// it for their own session.
	sandbox *sandbox.Sandbox
	// env is replaced, never changed in place: a copy handed out stays as it was.
	env *tools.Env
}

// policy returns the context policy in force.
func (s *Session) policy() contextwin.Policy {
	s.settings.mu.Lock()
	defer s.settings.mu.Unlock()
	return s.settings.policy
}

// toolsEnv returns a copy of the tools' environment in force.
func (st *settings) toolsEnv() *tools.Env {
	st.mu.Lock()
	defer st.mu.Unlock()
	env := *st.env
	return &env
}

// Conversation is what the session sends the model and how it came to be: its history, pins
// and checkpoints.
func (s *Session) Conversation() *Conversation { return &s.conv }

// Files is what the harness holds of the workspace: the files the agent changed and read, those
// changed on disk since, the last test verdict.
func (s *Session) Files() *Tracker { return &s.files }

// ExplicitCache is the explicit cache in front of the session's model; nil when the model has
// none (its methods take a nil receiver).
func (s *Session) ExplicitCache() *ExplicitCache { return s.caching }

// Subagents are the subagents the session runs (its task calls).
func (s *Session) Subagents() *Subagents { return &s.subagents }

// Memo is what the agent keeps besides the conversation: its plan and its notes.
func (s *Session) Memo() *Memo { return &s.memo }

// ID identifies the session.
func (s *Session) ID() string { return s.opts.ID }

// Turns is the number of user turns since the session began: the last turn's number.
func (c *Conversation) Turns() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.turns
}

// Window is the effective context budget.
func (s *Session) Window() int { return s.opts.window(s.policy()) }

// SetPolicy applies new context settings from the next model call on.
func (s *Session) SetPolicy(p contextwin.Policy) error {
	if err := p.Validate(); err != nil {
		return err
	}
	st := &s.settings
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.policy != p { // journaled under the lock: the last record is the policy in force
		s.opts.journal(journal.Record{Kind: journal.KindSettings, Policy: &p})
	}
	st.policy = p
	env := *st.env
	env.MaxOutputChars = p.ToolOutputMaxChars
	env.LargeOutputBytes = p.LargeOutputThresholdBytes
	st.env = &env
	return nil
}

// SetSandbox confines the commands of the next calls under sb (a changed sandbox setting).
func (s *Session) SetSandbox(sb *sandbox.Sandbox) {
	st := &s.settings
	st.mu.Lock()
	defer st.mu.Unlock()
	env := *st.env
	st.sandbox = sb
	env.Sandbox = sb.ForSession(s.opts.ID)
	st.env = &env
}

// ReloadInstructions re-reads the custom-instructions files (AGENTS.md …), e.g. when one changed.
func (c *Conversation) ReloadInstructions() {
	c.mu.Lock()
	prompt := buildSystemPrompt(c.opts, c.opts.Secrets.String(loadInstructions(c.opts.Workspace, c.opts.Logger)), c.head)
	defer c.mu.Unlock()
	c.prompt = prompt
	c.ledger.SetFixed(prompt.estimate())
}

// History returns a copy of the live history, as the next call will send it.
func (c *Conversation) History() []*genai.Content {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.history)
}

// Checkpoints returns the compactions so far, oldest first.
func (c *Conversation) Checkpoints() []contextwin.Checkpoint {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.checkpoints)
}

// LastActivity is when the session last started or ended a turn (its creation time before that).
func (s *Session) LastActivity() time.Time {
	s.loop.mu.Lock()
	defer s.loop.mu.Unlock()
	return s.loop.lastActivity
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
