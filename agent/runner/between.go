package runner

import (
	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/sandbox"
	"github.com/reprise-dev/reprise/contextwin"
)

// What happens to the hosted sessions between their turns, told through Runner.Events.

// tell gives ev, about l, to the front-end's sink.
func (r *Runner) tell(l *Live, ev agent.Event) { r.tellID(l.ID(), ev) }

// tellID gives ev, about session id, to the front-end's sink: what a session tells on its own
// between turns (agent.Options.Between) comes this way too.
func (r *Runner) tellID(id string, ev agent.Event) {
	if r.ObserveEvents != nil {
		r.ObserveEvents(id, ev)
	}
	if r.Events != nil {
		r.Events(id, ev)
	}
}

func (r *Runner) tellUsage(l *Live) {
	u := l.Usage()
	r.tell(l, agent.Event{Type: agent.EventUsage, Usage: &u})
}

// Settings are what a front-end may change in its open sessions while they run: the context
// policy, the commands' sandbox (one for all: it holds no state of a session), and patterns added
// to the command allowlist.
type Settings struct {
	Policy  contextwin.Policy
	Sandbox *sandbox.Sandbox
	Allow   []string
}

// Reconfigure gives every hosted session the settings c and tells its usage, whose size and
// thresholds may have changed; a parked session gets them when it reopens. A session whose
// policy is refused keeps its settings; the refusal is logged.
func (r *Runner) Reconfigure(c Settings) {
	r.settingsMu.Lock()
	ls := &r.live
	ls.mu.Lock()
	for _, p := range ls.parked {
		p.settings = &c
		for _, a := range c.Allow {
			p.commands.AllowPattern(a)
		}
	}
	ls.mu.Unlock()
	var told []*Live
	for _, l := range r.List() {
		if !r.applySettings(l, c) {
			continue
		}
		for _, a := range c.Allow {
			l.Commands.AllowPattern(a)
		}
		ls.mu.Lock()
		l.settings = &c
		ls.mu.Unlock()
		told = append(told, l)
	}
	r.settingsMu.Unlock()
	for _, l := range told {
		r.tellUsage(l)
	}
}

// applySettings gives l the policy and the sandbox of c, not its allowlist (the command policy
// has it already when l reopens); false if the policy is refused.
func (r *Runner) applySettings(l *Live, c Settings) bool {
	if err := l.SetPolicy(c.Policy); err != nil {
		if r.Logger != nil {
			r.Logger.Warn("settings not applied", "session", l.ID(), "error", err)
		}
		return false
	}
	if c.Sandbox != nil {
		l.SetSandbox(c.Sandbox)
	}
	return true
}

// FilesChanged tells every hosted session that paths (workspace-relative) changed on disk;
// with instructions, the workspace's instruction files are among them: they are read again,
// and the usage, whose fixed part changed, is told.
func (r *Runner) FilesChanged(paths []string, instructions bool) {
	for _, l := range r.List() {
		l.Files().FilesChanged(paths)
		if instructions {
			l.Conversation().ReloadInstructions()
			r.tellUsage(l)
		}
	}
}

func (r *Runner) observeEvent(l *Live, ev agent.Event) {
	if r.ObserveEvents != nil {
		r.ObserveEvents(l.ID(), ev)
	}
}
