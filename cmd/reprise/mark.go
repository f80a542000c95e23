package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"unicode/utf8"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/contextwin"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// The true mark (issue 36): what a session would cost at the cheapest schedule of clearings,
// each clearing every result the policy's keep rules let go at that call (agent.Clearable: the
// last model turns, the reads of the files being edited, the last command output), replayed on
// the requests the fake received when the session ran uncompacted. It counts in the fake's units
// (characters, four to a token), with the stubs as the first tier writes them; a request is
// cached up to its first changed character when that reaches the cache minimum, and a clearing may
// come at any call, below the minimum too. The calls and the output are the uncompacted run's.
//
// A clearing clears all that the rules allow, or all of it past the cache minimum: the first
// tier's two starts (contextwin.DueClearing). Fewer results from the same first one change the
// prompt from the same place and leave more to rewrite later; leaving the results under the
// minimum keeps the prompt cached up to the first cleared, which clearing all of them cannot
// when the prompt before them is under it (a session without a head). The keep rules are not monotone (a read is kept while its file is edited, a
// result cleared is no longer seen as an edit), so the schedules are told apart by what they
// cleared, not by their last clearing: a forward search over the cleared sets, merging equal
// ones.

// markRun is an uncompacted run as the mark replays it.
type markRun struct {
	fixed   int              // characters of the system instruction and tools, the same in every request
	history []*genai.Content // the last request's messages: every request's are a prefix of them
	ends    []int            // how many of them each request sent
	parts   [][]string       // each message's parts as counted
	stubs   [][]string       // the same parts cleared
	chars   []int            // each message's counted characters
	cleared []int            // the same, cleared
	spill   string           // where the stubs say a long result was saved
	keep    int              // the model turns kept verbatim
	// output is the cost of the run's output, the same whatever is cleared; run its cost as billed.
	output, run float64
	prompts     []int // each request's promptTokenCount as billed
}

// newMarkRun reads the requests reqs of a run without compaction on model: the agent's own,
// those that share its first message (not a subagent's or a summary's).
func newMarkRun(reqs []geminitest.Request, model string, keep int, spill string, p contextwin.Prices) (*markRun, error) {
	var own []geminitest.Request
	for _, r := range reqs {
		if r.Usage != nil && r.Model == model && len(r.Contents) > 0 && (len(own) == 0 || sameContent(r.Contents[0], own[0].Contents[0])) {
			own = append(own, r)
		}
	}
	if len(own) == 0 {
		return nil, errors.New("mark: no request of the agent")
	}
	m := &markRun{history: own[len(own)-1].Contents, keep: keep, spill: spill}
	for i, r := range own {
		fixed, err := geminitest.FixedChars(r.Body)
		if err != nil {
			return nil, err
		}
		if i > 0 && fixed != m.fixed {
			return nil, fmt.Errorf("mark: request %d's instruction and tools differ from the first's", i)
		}
		m.fixed = fixed
		if len(r.Contents) > len(m.history) || !slices.EqualFunc(r.Contents, m.history[:len(r.Contents)], sameContent) {
			return nil, fmt.Errorf("mark: request %d is not a prefix of the last: the run was compacted", i)
		}
		m.ends = append(m.ends, len(r.Contents))
		m.prompts = append(m.prompts, r.Usage.Prompt)
		m.output += contextwin.CallUsage{Candidates: r.Usage.Candidates, Thoughts: r.Usage.Thoughts}.Cost(p)
		m.run += r.Cost
	}
	for k, c := range m.history {
		parts, err := geminitest.PartBodies(c)
		if err != nil {
			return nil, err
		}
		stubs, err := geminitest.PartBodies(agent.ClearedCopy(m.history, []int{k}, spill, 1)[k])
		if err != nil {
			return nil, err
		}
		m.parts, m.stubs = append(m.parts, parts), append(m.stubs, stubs)
		m.chars, m.cleared = append(m.chars, runes(parts)), append(m.cleared, runes(stubs))
	}
	for i, e := range m.ends { // the units agree with the fake's, or nothing the mark says holds
		if got := geminitest.EstimateTokens(m.fixed + sum(m.chars[:e])); got != m.prompts[i] {
			return nil, fmt.Errorf("mark: request %d counts %d tokens, the fake billed %d", i, got, m.prompts[i])
		}
	}
	return m, nil
}

func sameContent(a, b *genai.Content) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

func runes(parts []string) int {
	n := 0
	for _, s := range parts {
		n += utf8.RuneCountInString(s)
	}
	return n
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

// markPlan is a schedule of clearings as the mark prices it.
type markPlan struct {
	Cost      float64 // input and output, in dollars
	Clearings []int   // the calls that clear, from 0
	Cleared   int     // the messages cleared at the end
	MaxPrompt int     // the largest request, in tokens
}

// markState is one set of cleared messages reached by the cheapest schedule so far.
type markState struct {
	set       []bool // by message
	cost      float64
	prev      int // characters of the previous request
	maxPrompt int
	clears    *clearStep
	n         int // clearings so far
}

type clearStep struct {
	at   int
	prev *clearStep
}

// best is the cheapest schedule whose every request is at most budget tokens (0: any), with
// prices p and the cache minimum minCached; states is the most cleared sets it kept apart at one
// call. ok is false when no schedule of clearings fits the budget.
func (m *markRun) best(p contextwin.Prices, minCached, budget int) (plan markPlan, states int, ok bool) {
	cur := map[string]*markState{"": {set: make([]bool, len(m.history))}}
	for i := range m.ends {
		next := map[string]*markState{}
		add := func(s *markState) {
			if budget > 0 && s.maxPrompt > budget {
				return
			}
			k := key(s.set)
			if old, ok := next[k]; !ok || s.cost < old.cost {
				next[k] = s
			}
		}
		for _, s := range cur {
			add(m.plain(s, i, p, minCached))
			for _, how := range []markClear{clearAll, clearCached} {
				if c, ok := m.clearing(s, i, how, p, minCached); ok {
					add(c)
				}
			}
		}
		if len(next) == 0 {
			return markPlan{}, states, false
		}
		states = max(states, len(next))
		cur = next
	}
	var win *markState
	for _, s := range cur {
		if win == nil || s.cost < win.cost {
			win = s
		}
	}
	plan = markPlan{Cost: win.cost + m.output, MaxPrompt: win.maxPrompt}
	for c := win.clears; c != nil; c = c.prev {
		plan.Clearings = append([]int{c.at}, plan.Clearings...)
	}
	for _, c := range win.set {
		if c {
			plan.Cleared++
		}
	}
	return plan, states, true
}

// plain is s after call i made with nothing cleared before it: the previous request read whole
// from the cache.
func (m *markRun) plain(s *markState, i int, p contextwin.Prices, minCached int) *markState {
	return s.then(m.charsUnder(s.set, m.ends[i]), s.prev, p, minCached, nil)
}

// markClear is what a clearing clears of what the keep rules let go: all of it, or what lies after
// the cache minimum (the first tier's two starts, contextwin.DueClearing).
type markClear int

const (
	clearNone markClear = iota
	clearAll
	// clearCached leaves the results under the cache minimum: the prompt stays cached up to the
	// first it clears. It differs from clearAll only when the prompt before the oldest result
	// the rules let go is under the minimum (a session without a head).
	clearCached
)

// clearing is s after call i made right after a clearing how: cached up to the first character
// the clearing changed. ok is false when there is nothing to clear (and at the first call), and
// for clearCached when it would clear the same as clearAll.
func (m *markRun) clearing(s *markState, i int, how markClear, p contextwin.Prices, minCached int) (*markState, bool) {
	if i == 0 || how == clearNone {
		return nil, false
	}
	set, from, ok := m.clearAt(i, s.set, s.n+1, how, minCached)
	if !ok {
		return nil, false
	}
	shared := m.charsUnder(s.set, from) + m.sharedIn(from)
	return s.then(m.charsUnder(set, m.ends[i]), shared, p, minCached, &clearStep{at: i, prev: s.clears}).with(set), true
}

// then is s after a call whose request has chars characters, shared of them with an earlier
// request; step is the clearing made before it, if any.
func (s *markState) then(chars, shared int, p contextwin.Prices, minCached int, step *clearStep) *markState {
	next := &markState{set: s.set, cost: s.cost + billed(chars, shared, p, minCached), prev: chars,
		maxPrompt: max(s.maxPrompt, geminitest.EstimateTokens(chars)), clears: s.clears, n: s.n}
	if step != nil {
		next.clears = step
	}
	return next
}

// with sets the state's cleared set to set, and counts the clearing.
func (s *markState) with(set []bool) *markState {
	s.set, s.n = set, s.n+1
	return s
}

// billed is what the fake bills a request's input: its tokens rounded up, of which the shared
// prefix's, rounded down, at the cached price once they reach the minimum.
func billed(chars, shared int, p contextwin.Prices, minCached int) float64 {
	u := contextwin.CallUsage{Prompt: geminitest.EstimateTokens(chars)}
	if c := shared / 4; c >= minCached {
		u.Cached = c
	}
	return u.Cost(p)
}

func key(set []bool) string {
	b := make([]byte, (len(set)+7)/8)
	for i, c := range set {
		if c {
			b[i/8] |= 1 << (i % 8)
		}
	}
	return string(b)
}

// charsUnder counts a request of the first end messages with set cleared, the fixed part included.
func (m *markRun) charsUnder(set []bool, end int) int {
	n := m.fixed
	for k := range end {
		if set[k] {
			n += m.cleared[k]
		} else {
			n += m.chars[k]
		}
	}
	return n
}

// sharedIn counts the characters of message k the same once it is cleared: its parts up to the
// first that changes, and that part's common start.
func (m *markRun) sharedIn(k int) int {
	n := 0
	for j, part := range m.parts[k] {
		if j >= len(m.stubs[k]) || m.stubs[k][j] != part {
			if j < len(m.stubs[k]) {
				n += commonRunes(part, m.stubs[k][j])
			}
			return n
		}
		n += utf8.RuneCountInString(part)
	}
	return n
}

func commonRunes(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	for i > 0 && i < len(a) && !utf8.RuneStart(a[i]) {
		i--
	}
	return utf8.RuneCountInString(a[:i])
}

// clearAt is what a clearing how at call i adds to set: every result the keep rules let go in
// the request as it would be, whose stub is shorter than it, from the first past minCached tokens
// for clearCached. from is the first message it changes; ok is false when it would clear nothing,
// or for clearCached the same as clearAll.
func (m *markRun) clearAt(i int, set []bool, n int, how markClear, minCached int) (after []bool, from int, ok bool) {
	h := m.requestUnder(set, m.ends[i], n)
	var add []int
	for _, k := range agent.Clearable(h, modifiedIn(h), m.keep, nil) {
		if m.cleared[k] < m.chars[k] {
			add = append(add, k)
		}
	}
	if how == clearCached {
		j := slices.IndexFunc(add, func(k int) bool { return geminitest.EstimateTokens(m.charsUnder(set, k)) >= minCached })
		if j <= 0 {
			return nil, 0, false
		}
		add = add[j:]
	}
	if len(add) == 0 {
		return nil, 0, false
	}
	after = slices.Clone(set)
	for _, k := range add {
		after[k] = true
	}
	return after, add[0], true
}

// requestUnder is the first end messages with set cleared, as clearing number n leaves them.
func (m *markRun) requestUnder(set []bool, end, n int) []*genai.Content {
	var idx []int
	for k := range end {
		if set[k] {
			idx = append(idx, k)
		}
	}
	return agent.ClearedCopy(m.history[:end], idx, m.spill, n)
}

// modifiedIn is the harness's list of the files changed (sorted) as h shows it: the paths of the
// edits and writes that did not fail.
func modifiedIn(h []*genai.Content) []string {
	seen := map[string]bool{}
	for i := 1; i < len(h); i++ {
		for _, p := range h[i].Parts {
			if p == nil || p.FunctionResponse == nil || p.FunctionResponse.Response["error"] != nil {
				continue
			}
			for _, call := range journal.FunctionCalls(h[i-1]) {
				if path, _ := call.Args["path"].(string); (call.Name == "edit_file" || call.Name == "write_file") && path != "" &&
					call.ID == p.FunctionResponse.ID && call.Name == p.FunctionResponse.Name {
					seen[filepath.ToSlash(filepath.Clean(path))] = true
				}
			}
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// follow prices one schedule, clearing before each call as clears says (by call, from 0): its
// cost and its requests, as the mark bills and builds them.
func (m *markRun) follow(clears []markClear, p contextwin.Prices, minCached int) (cost float64, requests [][]*genai.Content) {
	s := &markState{set: make([]bool, len(m.history))}
	for i, end := range m.ends {
		next := m.plain(s, i, p, minCached)
		if i < len(clears) {
			if c, ok := m.clearing(s, i, clears[i], p, minCached); ok {
				next = c
			}
		}
		s = next
		requests = append(requests, m.requestUnder(s.set, end, s.n))
	}
	return s.cost + m.output, requests
}

// trueMark is the true mark of the uncompacted run base, at the default model's prices of today,
// its cache minimum and the default policy's keep rules: the cheapest schedule of clearings, and
// the most schedules it kept apart.
func trueMark(base scenarioRun) (markPlan, error) {
	plan, _, err := trueMarkWithin(base, 0)
	return plan, err
}

// trueMarkWithin is trueMark among the schedules whose every request is at most budget tokens
// (0: any); ok is false when clearing alone cannot keep every request within it.
func trueMarkWithin(base scenarioRun, budget int) (markPlan, bool, error) {
	c := catalog.Builtin()
	model := c.DefaultModel()
	p, ok := contextwin.Pricing{Catalog: c}.At(model, timeNow(), 0)
	if !ok {
		return markPlan{}, false, fmt.Errorf("no price for %s", model)
	}
	m, err := newMarkRun(base.Requests, model, contextwin.DefaultPolicy().KeepRecentTurns, markSpill, p)
	if err != nil {
		return markPlan{}, false, err
	}
	plan, _, ok := m.best(p, c.CacheMin(model), budget)
	return plan, ok, nil
}

// markSpill is where the mark's stubs say a long result was saved: a path as long as a
// session's tool outputs.
var markSpill = filepath.Join(os.TempDir(), "reprise-0123456789", "session", "workspaces", "0123456789abcdef", "sessions", "20261207-170000-0123abcd", "tool-outputs")
