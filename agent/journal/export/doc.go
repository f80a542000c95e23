// Package export writes a saved session for people: the whole conversation (questions, answers,
// tool calls with the outputs the model got, refusals, compactions and clearings with their
// tokens, plan changes), with each turn's tokens, cached share and dollars and the session's,
// as Markdown or as one self-contained HTML file. It reads the session's log, never the live
// session, so what it shows is what was saved: secrets masked as they were, and masked again.
package export

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/contextwin"
)

// Doc is a session as an export shows it.
type Doc struct {
	ID, Title, Model, Workspace string
	Created                     time.Time
	Parent, From                string // a fork's origin
	Subagent                    string // a subagent's task: Parent ran it
	Turns                       []Turn
	// Before are what happened before the first turn (pins, a fork's origin).
	Before []Step
	// Totals are the session's, as `reprise sessions show` replays them; each turn's add up to them.
	Totals contextwin.Totals
}

// Turn is one question and all it took.
type Turn struct {
	N      int
	Steps  []Step
	Totals contextwin.Totals // what its calls (and summaries, caches) billed
	Stop   string            // why it ended ("" while interrupted)
	Error  string
}

// StepKind is what a step is.
type StepKind string

// The steps.
const (
	StepUser       StepKind = "user"
	StepAgent      StepKind = "agent"
	StepTool       StepKind = "tool"
	StepNote       StepKind = "note" // a harness note the model got (a file changed on disk, a pin)
	StepCompaction StepKind = "compaction"
	StepPlan       StepKind = "plan"
	StepRestore    StepKind = "restore"
	StepFork       StepKind = "fork"
)

// Step is one thing in a turn.
type Step struct {
	Kind       StepKind
	Text       string
	Tool       *Tool
	Checkpoint *contextwin.Checkpoint
	Plan       []contextwin.Todo
}

// Tool is a tool call and what came of it.
type Tool struct {
	ID, Name  string
	Args      string // JSON
	Output    string // what the model got
	Error     bool
	Refused   bool
	SavedPath string // where the whole output was saved
	Omitted   int    // characters left out of Output
	answered  bool
}

// Build makes the Doc of a session from its log's records, each text passed through redact (nil:
// as saved).
func Build(recs []journal.Record, redact func(string) string) Doc {
	if redact == nil {
		redact = func(s string) string { return s }
	}
	snap := journal.Replay(recs)
	d := Doc{ID: snap.Meta.ID, Title: redact(snap.Title), Model: snap.Meta.Model, Workspace: snap.Meta.Workspace,
		Created: snap.Meta.Created, Parent: snap.Meta.Parent, From: snap.Meta.From, Subagent: snap.Meta.Subagent, Totals: snap.Totals}
	b := builder{d: &d, redact: redact, tools: map[string][]*Tool{}, shown: map[string]*Tool{}}
	for _, r := range recs {
		b.apply(r)
	}
	return d
}

// builder is Build's state between records.
type builder struct {
	d      *Doc
	redact func(string) string
	tools  map[string][]*Tool // by call id (or name, for calls without one), unanswered, in order
	shown  map[string]*Tool   // by the id the editor saw, which a tool record names
	calls  int                // model calls so far: a call without an id was shown as call-<calls>-<n>
	turn   *Turn
}

// step adds s to the current turn, or before the first.
func (b *builder) step(s Step) {
	if b.turn == nil {
		b.d.Before = append(b.d.Before, s)
		return
	}
	b.turn.Steps = append(b.turn.Steps, s)
}

func (b *builder) apply(r journal.Record) {
	switch r.Kind {
	case journal.KindTurnStart:
		b.d.Turns = append(b.d.Turns, Turn{N: r.Turn})
		b.turn = &b.d.Turns[len(b.d.Turns)-1]
		b.step(Step{Kind: StepUser, Text: b.redact(r.Text)})
	case journal.KindAppend:
		b.message(r.Content)
	case journal.KindUsage, journal.KindSummaryUsage, journal.KindCache:
		if r.Kind == journal.KindUsage && r.Usage != nil {
			b.calls++
		}
		if b.turn != nil {
			journal.Bill(&b.turn.Totals, r)
		}
	case journal.KindTool:
		if r.Tool != nil {
			if tool := b.shown[r.Tool.Call]; tool != nil {
				tool.Refused, tool.SavedPath, tool.Omitted = r.Tool.Refused, r.Tool.SavedPath, r.Tool.Omitted
			}
		}
	case journal.KindCompaction:
		if c := r.Compaction; c != nil {
			cp := c.Checkpoint
			cp.Summary = b.redact(cp.Summary)
			b.step(Step{Kind: StepCompaction, Checkpoint: &cp})
		}
	case journal.KindUndo:
		b.step(Step{Kind: StepCompaction, Text: "The last compaction was undone: the messages it replaced came back."})
	case journal.KindPlan:
		b.step(Step{Kind: StepPlan, Plan: r.Todos})
	case journal.KindRestore:
		if rs := r.Restored; rs != nil {
			b.step(Step{Kind: StepRestore, Text: "Files put back as they were before turn " + itoa(rs.Turn) + ": " + strings.Join(rs.Paths, ", ")})
		}
	case journal.KindFork:
		b.step(Step{Kind: StepFork, Text: r.Text})
	case journal.KindTurnEnd:
		if b.turn != nil {
			b.turn.Stop, b.turn.Error = r.StopReason, b.redact(r.Error)
		}
	}
}

// message adds what a message of the history shows: the answer's text and calls, the calls'
// results, the harness's notes. The user's question is the turn's start.
func (b *builder) message(c *genai.Content) {
	if c == nil {
		return
	}
	n := 0 // the message's calls so far
	for i, p := range c.Parts {
		switch {
		case p == nil || p.Thought:
		case p.FunctionCall != nil:
			fc := p.FunctionCall
			n++
			args, _ := json.Marshal(fc.Args)
			t := &Tool{ID: fc.ID, Name: fc.Name, Args: b.redact(string(args))}
			k := contextwin.CallKey(fc.ID, fc.Name)
			b.tools[k] = append(b.tools[k], t)
			shown := fc.ID
			if shown == "" { // as the session named it for the editor
				shown = fmt.Sprintf("call-%d-%d", b.calls, n)
			}
			b.shown[shown] = t
			b.step(Step{Kind: StepTool, Tool: t})
		case p.FunctionResponse != nil:
			fr := p.FunctionResponse
			k := contextwin.CallKey(fr.ID, fr.Name)
			if len(b.tools[k]) == 0 {
				continue
			}
			t := b.tools[k][0]
			b.tools[k] = b.tools[k][1:]
			t.answered = true
			t.Output, t.Error = b.redact(responseText(fr.Response)), fr.Response["error"] != nil
		case p.Text == "":
		case c.Role == genai.RoleModel:
			b.step(Step{Kind: StepAgent, Text: b.redact(p.Text)})
		case i > 0 || b.turn == nil || !strings.HasPrefix(b.redact(p.Text), b.turnText()):
			// The question is the turn's; what the harness added after it is a note.
			b.step(Step{Kind: StepNote, Text: b.redact(p.Text)})
		}
	}
}

// turnText is the current turn's question, as saved.
func (b *builder) turnText() string {
	if b.turn == nil || len(b.turn.Steps) == 0 {
		return ""
	}
	return b.turn.Steps[0].Text
}

// responseText is a function response as the model read it: its output or error text, else
// the whole response as JSON.
func responseText(resp map[string]any) string {
	for _, k := range []string{"output", "error", "result", "content"} {
		if s, ok := resp[k].(string); ok && len(resp) == 1 {
			return s
		}
	}
	out, _ := json.MarshalIndent(resp, "", "  ")
	return string(out)
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
