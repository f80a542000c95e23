package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent/cmdpolicy"
	"github.com/reprise-dev/reprise/agent/gemini"
	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/agent/sandbox"
	"github.com/reprise-dev/reprise/agent/secret"
	"github.com/reprise-dev/reprise/agent/tools"
	"github.com/reprise-dev/reprise/contextwin"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// fixture is a workspace, a fake model and a session over both, through the real genai client.
type fixture struct {
	ws    string
	state string // the session's directory
	srv   *geminitest.Server
	s     *Session
	log   *journal.Log // with journal set
	store *journal.Store
	// timers wait on the fake's clock, with simClock set.
	timers *simTimers
}

type fixtureOpts struct {
	files    map[string]string
	policy   contextwin.Policy
	stream   bool
	approver tools.Approver
	commands *cmdpolicy.Policy
	limit    int
	setup    func(t *testing.T, ws string) // after files are written, before the session starts
	ws       string                        // "" = a new temp dir
	sandbox  *sandbox.Sandbox
	secrets  *secret.Redactor // nil = the process environment's credentials
	journal  bool             // save the session in a store, as the server does
	prices   contextwin.PriceTable
	// cacheMin, if set, is the session model's implicit-cache minimum, for the fake and in the
	// catalogue the session plans with (short scripted prompts that still cache).
	cacheMin int
	model    string           // "" = the catalogue's default
	now      func() time.Time // nil = time.Now
	simClock bool             // the session's clock is the fake's (geminitest.Server.Now)
	script   geminitest.Script
	thinking catalog.ThinkingChoice
	external tools.External
	grants   *tools.MCPGrants
	// clearing keeps the first tier on (clearing old tool results); the tests of summaries
	// leave it off, so that what they see is the second tier alone.
	clearing bool
	// compaction is the compactionModel setting: summaries go to this model, through its own
	// client on the same fake ("" = the session's model).
	compaction string
	between    func(Event) // Options.Between
	// subagentModel runs subagents on this model, through its own client on the same fake
	// ("" = the session's model); subagents are their settings.
	subagentModel string
	subagents     SubagentSettings
	// wrap, if set, stands between the session and its client (a local model, say).
	wrap func(Model) Model
	// head keeps the tool guide and the workspace map in the system instruction; the other tests'
	// scripts are sized on the short prompt alone.
	head bool
}

// writeFiles writes files (slash paths → content) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func newFixture(t *testing.T, o fixtureOpts, turns ...geminitest.Turn) *fixture {
	t.Helper()
	ws := o.ws
	if ws == "" {
		ws = t.TempDir()
	}
	writeFiles(t, ws, o.files)
	if o.setup != nil {
		o.setup(t, ws)
	}
	script := o.script
	script.Turns = append(script.Turns, turns...)
	if o.cacheMin > 0 {
		script.Cache.MinTokens = o.cacheMin
	}
	srv := geminitest.New(script)
	t.Cleanup(srv.Close)
	client, err := gemini.New(t.Context(), gemini.Config{APIKey: "test-key", Model: o.model, BaseURL: srv.URL(), BaseDelay: time.Millisecond, MaxDelay: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var cat *catalog.Catalog
	if o.cacheMin > 0 {
		row := json.RawMessage(fmt.Sprintf(`{"cacheMinTokens": %d}`, o.cacheMin))
		if cat, err = catalog.Builtin().Overlay(map[string]json.RawMessage{client.Model(): row}); err != nil {
			t.Fatal(err)
		}
	}
	policy := o.policy
	if policy != (contextwin.Policy{}) && !o.clearing {
		policy.KeepToolResults = true
	}
	if !o.head {
		if policy == (contextwin.Policy{}) {
			policy = contextwin.DefaultPolicy()
		}
		policy.PlainHead = true
	}
	opts := Options{
		Config: Config{
			Prices:        o.prices,
			Catalog:       cat,
			ContextPolicy: policy,
			Approver:      o.approver,
			Secrets:       o.secrets,
			Stream:        o.stream,
		},
		Workspace:       ws,
		Model:           Model(client),
		ModelName:       client.Model(),
		Now:             o.now,
		Thinking:        o.thinking,
		InputTokenLimit: o.limit,
		Commands:        o.commands,
		Sandbox:         o.sandbox,
		StateDir:        t.TempDir(),
		External:        o.external,
		MCPGrants:       o.grants,
		Between:         o.between,
	}
	if o.compaction != "" {
		cc, err := gemini.New(t.Context(), gemini.Config{APIKey: "test-key", Model: o.compaction, BaseURL: srv.URL(), BaseDelay: time.Millisecond, MaxDelay: 20 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		opts.CompactionModel, opts.CompactionModelName = cc, o.compaction
	}
	opts.Subagents = o.subagents
	if o.wrap != nil {
		opts.Model = o.wrap(opts.Model)
	}
	if o.subagentModel != "" {
		sc, err := gemini.New(t.Context(), gemini.Config{APIKey: "test-key", Model: o.subagentModel, BaseURL: srv.URL(), BaseDelay: time.Millisecond, MaxDelay: 20 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		opts.SubagentModel, opts.SubagentModelName = sc, o.subagentModel
	}
	f := &fixture{ws: ws, srv: srv}
	if o.simClock {
		f.timers = &simTimers{srv: srv, armed: make(chan struct{}, 1)}
		opts.Now, opts.After = srv.Now, f.timers.After
	}
	if o.journal {
		st, err := journal.OpenStore(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		f.store = st
		opts.OpenSubagent = func(m journal.Meta) (SubagentLog, error) { return st.Create(m) }
		opts.ID = NewID(time.Now())
		f.log, err = st.Create(journal.Meta{ID: opts.ID, Workspace: ws, Model: client.Model(), Created: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.log.Close() })
		opts.StateDir, opts.Journal, opts.Blobs = st.Dir(opts.ID), f.log, f.log
	}
	f.state = opts.StateDir
	if f.s, err = New(opts); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.s.Close)
	return f
}

// run collects a turn's events and its error.
func (f *fixture) run(ctx context.Context, text string) ([]Event, error) {
	var evs []Event
	var runErr error
	for ev, err := range f.s.Run(ctx, text) {
		if err != nil {
			runErr = err
			continue
		}
		evs = append(evs, ev)
	}
	return evs, runErr
}

func lastEnd(t *testing.T, evs []Event) *TurnEnd {
	t.Helper()
	if len(evs) == 0 || evs[len(evs)-1].Type != EventTurnEnd {
		t.Fatalf("the last event is not turn_end: %v", types(evs))
	}
	return evs[len(evs)-1].End
}

func types(evs []Event) []EventType {
	var out []EventType
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

func ofType(evs []Event, typ EventType) []Event {
	return slices.DeleteFunc(slices.Clone(evs), func(e Event) bool { return e.Type != typ })
}

// toolResults are the final updates of the tool calls, without a running command's live ones.
func toolResults(evs []Event) []Event {
	return slices.DeleteFunc(ofType(evs, EventToolUpdate), func(e Event) bool { return e.Tool.Live != nil })
}

func callTurn(name string, args map[string]any, sig string) geminitest.Turn {
	return geminitest.Turn{Parts: []geminitest.Part{{FunctionCall: &geminitest.FunctionCall{Name: name, Args: args}, ThoughtSignature: sig}}}
}

func textTurn(text string) geminitest.Turn {
	return geminitest.Turn{Parts: []geminitest.Part{{Text: text}}}
}

func summaryTurn(text string) geminitest.Turn {
	return geminitest.Turn{Match: contextwin.SummaryMarker, Parts: []geminitest.Part{{Text: text}}}
}

// responses returns the function responses sent in a request, by tool name.
func responses(req geminitest.Request) map[string][]string {
	out := map[string][]string{}
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			if fr := p.FunctionResponse; fr != nil {
				s, _ := fr.Response["output"].(string)
				if e, ok := fr.Response["error"].(string); ok {
					s = "error: " + e
				}
				out[fr.Name] = append(out[fr.Name], s)
			}
		}
	}
	return out
}

// firstText is a message's text, its parts joined (a head message has several).
func firstText(c *genai.Content) string {
	return contextwin.HeadText(c)
}

func contains(t *testing.T, got, want string) {
	t.Helper()
	if !strings.Contains(got, want) {
		t.Errorf("%q does not contain %q", got, want)
	}
}

// mainRequests are the loop's requests (not the summarizer's, nor model info).
func mainRequests(srv *geminitest.Server) []geminitest.Request {
	return slices.DeleteFunc(srv.Requests(), func(r geminitest.Request) bool {
		return r.Tools == 0 || r.FunctionCalling == "NONE" || r.Method != "POST"
	})
}

// summaryRequests are the summarizer's requests.
func summaryRequests(srv *geminitest.Server) []geminitest.Request {
	return slices.DeleteFunc(srv.Requests(), func(r geminitest.Request) bool {
		return !strings.Contains(string(r.Body), contextwin.SummaryMarker)
	})
}
