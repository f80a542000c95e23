package agent

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent/gemini"
	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/contextwin"
)

const summaryText = "**Objective:**\nRead the notes\n**Files read and what mattered:**\nnotes\n**Modifications made:**\nnone\n**Last tests:**\nnone\n**Hypotheses ruled out:**\nnone\n**Remaining work:**\nread the rest"

// notes makes n files of about size characters each.
func notes(n, size int) map[string]string {
	files := map[string]string{}
	for i := range n {
		files[fmt.Sprintf("notes/%d.txt", i)] = strings.Repeat(fmt.Sprintf("note %d line\n", i), size/12)
	}
	return files
}

func readTurns(n int) []geminitest.Turn {
	var turns []geminitest.Turn
	for i := range n {
		turns = append(turns, callTurn("read_file", map[string]any{"path": fmt.Sprintf("notes/%d.txt", i)}, sig))
	}
	return turns
}

// TestBackgroundCompaction: past compactAt, a compaction that pays for itself starts in the
// background. With prices where the cache gives no discount and output is free, freeing tokens
// early pays after a few calls. The summarizer is asked in context: the agent's system
// instruction and tools, function calling off, its prefix cached.
func TestBackgroundCompaction(t *testing.T) {
	p := contextwin.DefaultPolicy()
	p.ContextBudget, p.KeepRecentTurns = 5000, 2
	noDiscount := contextwin.PriceTable{"gemini": {Input: 1, CachedInput: 1, Output: 0}}
	turns := append(readTurns(16), textTurn("read them all"), summaryTurn(summaryText), summaryTurn(summaryText))
	f := newFixture(t, fixtureOpts{policy: p, stream: true, files: notes(16, 800), prices: noDiscount, cacheMin: 1024}, turns...)
	evs, err := f.run(t.Context(), "Read every note.")
	if err != nil {
		t.Fatal(err)
	}
	if end := lastEnd(t, evs); end.StopReason != StopEndTurn {
		t.Fatalf("stop = %s", end.StopReason)
	}
	comp := ofType(evs, EventCompaction)
	if len(comp) < 2 || comp[0].Compaction.State != CompactionRunning || !strings.Contains(comp[0].Compaction.Note, "> 0.7 × 5000: compacting") {
		t.Fatalf("compaction events = %+v", comp)
	}
	// It overlaps one step: a model call happens between its start and its install.
	overlapped, started := false, false
	for _, e := range evs {
		switch {
		case e.Type == EventCompaction && e.Compaction.State == CompactionRunning:
			started = true
		case e.Type == EventModelCall && started:
			overlapped = true
		case e.Type == EventCompaction && e.Compaction.State == CompactionDone:
			started = false
		}
		if overlapped {
			break
		}
	}
	if !overlapped {
		t.Errorf("no model call ran while the compaction did: %v", types(evs))
	}
	cps := f.s.Conversation().Checkpoints()
	if len(cps) == 0 || cps[0].N != 1 || cps[0].Title != "Read the notes" || cps[0].TokensAfter >= cps[0].TokensBefore || cps[0].Fallback != "" {
		t.Fatalf("checkpoints = %+v", cps)
	}
	h := f.s.Conversation().History()
	head := firstText(h[0])
	for _, want := range []string{"Read every note.", "[Summary of the first", "take precedence over this summary", "**State held by the harness**", summaryText} {
		contains(t, head, want)
	}
	if err := pairs(h); err != nil {
		t.Error(err)
	}
	// Every kept call still carries its signature.
	for _, c := range h[1:] {
		for _, p := range c.Parts {
			if p.FunctionCall != nil && string(p.ThoughtSignature) != "sig-1" {
				t.Errorf("kept call %s lost its signature", p.FunctionCall.Name)
			}
		}
	}
	sums := summaryRequests(f.srv)
	if len(sums) == 0 {
		t.Fatal("no summarizer request")
	}
	sr, first := sums[0], mainRequests(f.srv)[0]
	if sr.FunctionCalling != "NONE" || sr.Tools == 0 || firstText(sr.SystemInstruction) != firstText(first.SystemInstruction) {
		t.Errorf("summary request: function calling %q, %d tools, same system %v; want the agent's own, calls off",
			sr.FunctionCalling, sr.Tools, firstText(sr.SystemInstruction) == firstText(first.SystemInstruction))
	}
	last := sr.Contents[len(sr.Contents)-1]
	ask := last.Parts[len(last.Parts)-1].Text
	for _, hd := range contextwin.Headings {
		contains(t, ask, "**"+hd+":**")
	}
	if sr.Usage == nil || sr.Usage.Cached < sr.Usage.Prompt*8/10 {
		t.Errorf("summary usage = %+v, want most of its prompt cached", sr.Usage)
	}
	if u := f.s.Usage(); u.Compactions != len(cps) || u.Compaction != "idle" {
		t.Errorf("usage after = %+v", u)
	}
}

// TestNoEarlyCompactionThatDoesNotPay: at Gemini's prices, past compactAt but far from blockAt,
// compacting a short turn would cost more (a summary call and the cache of the prefix) than it
// saves: nothing happens until the prompt reaches blockAt.
func TestNoEarlyCompactionThatDoesNotPay(t *testing.T) {
	p := contextwin.DefaultPolicy()
	p.ContextBudget, p.KeepRecentTurns = 5000, 2
	turns := append(readTurns(8), textTurn("read them all"), summaryTurn(summaryText), summaryTurn(summaryText))
	f := newFixture(t, fixtureOpts{policy: p, files: notes(8, 1400)}, turns...)
	evs, err := f.run(t.Context(), "Read every note.")
	if err != nil {
		t.Fatal(err)
	}
	var prompts []int
	for _, e := range ofType(evs, EventModelCall) {
		prompts = append(prompts, e.Call.Prompt)
	}
	if slices.Max(prompts) <= 3500 || slices.Max(prompts) >= 4750 {
		t.Fatalf("prompts %v: the scenario must pass compactAt (3500) and stay under blockAt (4750)", prompts)
	}
	if comp := ofType(evs, EventCompaction); len(comp) != 0 || len(summaryRequests(f.srv)) != 0 {
		t.Errorf("compaction events %+v, %d summary requests; want none", comp, len(summaryRequests(f.srv)))
	}
}

func TestBlockingCompaction(t *testing.T) {
	p := contextwin.DefaultPolicy()
	p.ContextBudget, p.KeepRecentTurns, p.CompactAt, p.BlockAt = 4000, 1, 0.5, 0.6
	files := notes(3, 600)
	files["big.txt"] = strings.Repeat("a big file line\n", 1000) // truncated to 4000 chars ≈ 1000 tokens
	turns := append(readTurns(3), callTurn("read_file", map[string]any{"path": "big.txt"}, sig), callTurn("read_file", map[string]any{"path": "big.txt"}, sig), textTurn("done"), summaryTurn(summaryText), summaryTurn(summaryText), summaryTurn(summaryText))
	f := newFixture(t, fixtureOpts{policy: p, files: files}, turns...)
	evs, err := f.run(t.Context(), "Read.")
	if err != nil {
		t.Fatal(err)
	}
	var blocked bool
	var afterBlock []EventType
	for _, e := range evs {
		if e.Type == EventCompaction && e.Compaction.State == CompactionBlocking {
			blocked = true
		}
		if blocked {
			afterBlock = append(afterBlock, e.Type)
		}
	}
	if !blocked {
		t.Fatalf("the loop never blocked: %v", types(evs))
	}
	// The call right after the block already carries the summary.
	var sawHead bool
	for _, r := range mainRequests(f.srv) {
		if strings.Contains(firstText(r.Contents[0]), "[Summary of the first") {
			sawHead = true
		}
	}
	if !sawHead {
		t.Errorf("no model request started with the summary; events after the block: %v", afterBlock)
	}
}

func TestSummarizerFailureFallsBack(t *testing.T) {
	p := contextwin.DefaultPolicy()
	p.ContextBudget, p.KeepRecentTurns = 5000, 2
	turns := append(readTurns(8), textTurn("done"),
		geminitest.Turn{Match: contextwin.SummaryMarker, Fault: &geminitest.Fault{Status: 400, Message: "summary refused"}},
		geminitest.Turn{Match: contextwin.SummaryMarker, Fault: &geminitest.Fault{Status: 400, Message: "summary refused"}})
	f := newFixture(t, fixtureOpts{policy: p, files: notes(8, 2000)}, turns...)
	if _, err := f.run(t.Context(), "Read every note."); err != nil {
		t.Fatal(err)
	}
	cps := f.s.Conversation().Checkpoints()
	if len(cps) == 0 {
		t.Fatal("no compaction")
	}
	contains(t, cps[0].Fallback, "summary refused")
	contains(t, cps[0].Summary, "read_file notes/0.txt")
	contains(t, firstText(f.s.Conversation().History()[0]), "State held by the harness")
}

func TestManualCompaction(t *testing.T) {
	turns := append(readTurns(6), textTurn("done"), summaryTurn(summaryText))
	f := newFixture(t, fixtureOpts{files: notes(6, 300)}, turns...)
	if _, err := f.run(t.Context(), "Read every note."); err != nil {
		t.Fatal(err)
	}
	before := len(f.s.Conversation().History())
	cp, err := f.s.Compact(t.Context(), "keep the note numbers")
	if err != nil {
		t.Fatal(err)
	}
	if cp.N != 1 || cp.Trigger != "manual" || cp.Focus != "keep the note numbers" || cp.Replaced != before-1-5 {
		t.Errorf("checkpoint = %+v (history had %d messages)", cp, before)
	}
	if got := len(f.s.Conversation().History()); got != 1+5 {
		t.Errorf("history after = %d messages, want head + 3 kept turns (5 messages)", got)
	}
	reqs := f.srv.Requests()
	contains(t, string(reqs[len(reqs)-1].Body), "keep the note numbers")
}

// cancellingModel cancels the compaction's caller as soon as the summarizer is called.
type cancellingModel struct {
	Model
	cancel context.CancelFunc
}

func (m cancellingModel) Generate(ctx context.Context, req *gemini.Request) iter.Seq2[gemini.Chunk, error] {
	if !req.NoFunctionCalls {
		return m.Model.Generate(ctx, req)
	}
	return func(yield func(gemini.Chunk, error) bool) {
		m.cancel()
		<-ctx.Done()
		yield(gemini.Chunk{}, ctx.Err())
	}
}

func TestManualCompactionCancelled(t *testing.T) {
	f := newFixture(t, fixtureOpts{files: notes(6, 300)}, append(readTurns(6), textTurn("done"))...)
	if _, err := f.run(t.Context(), "Read every note."); err != nil {
		t.Fatal(err)
	}
	before := f.s.Conversation().History()
	ctx, cancel := context.WithCancel(t.Context())
	f.s.opts.Model = cancellingModel{Model: f.s.opts.Model, cancel: cancel}
	_, err := f.s.Compact(ctx, "")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	after := f.s.Conversation().History()
	if len(after) != len(before) {
		t.Fatalf("history changed: %d → %d messages", len(before), len(after))
	}
	for i := range before {
		if before[i] != after[i] {
			t.Errorf("message %d changed", i)
		}
	}
	if len(f.s.Conversation().Checkpoints()) != 0 {
		t.Error("a cancelled compaction left a checkpoint")
	}
}

func TestLoopGuard(t *testing.T) {
	p := contextwin.DefaultPolicy()
	p.ContextBudget, p.KeepRecentTurns = 1000, 1
	files := map[string]string{"big.txt": strings.Repeat("a big file line\n", 1000)}
	var turns []geminitest.Turn
	for range 10 {
		turns = append(turns, callTurn("read_file", map[string]any{"path": "big.txt"}, ""))
	}
	for range 6 {
		turns = append(turns, summaryTurn("**Objective:**\nread big.txt"))
	}
	f := newFixture(t, fixtureOpts{policy: p, files: files}, turns...)
	evs, err := f.run(t.Context(), "Read big.txt forever.")
	if err != nil {
		t.Fatal(err)
	}
	end := lastEnd(t, evs)
	if end.StopReason != StopCompactionLimit {
		t.Fatalf("stop = %s, want %s", end.StopReason, StopCompactionLimit)
	}
	if n := len(f.s.Conversation().Checkpoints()); n != p.MaxCompactionsWithoutProgress {
		t.Errorf("%d compactions, want %d", n, p.MaxCompactionsWithoutProgress)
	}
	var text strings.Builder
	for _, e := range ofType(evs, EventText) {
		text.WriteString(e.Text)
	}
	contains(t, text.String(), "compactions in a row")
}

// pairs checks that every function call is answered by the next message.
func pairs(h []*genai.Content) error {
	for i, c := range h {
		for _, p := range c.Parts {
			if p.FunctionCall == nil {
				continue
			}
			if i+1 >= len(h) {
				return fmt.Errorf("call %s at %d has no response", p.FunctionCall.Name, i)
			}
			found := false
			for _, q := range h[i+1].Parts {
				if q.FunctionResponse != nil && q.FunctionResponse.Name == p.FunctionCall.Name {
					found = true
				}
			}
			if !found {
				return fmt.Errorf("call %s at %d is not answered by message %d", p.FunctionCall.Name, i, i+1)
			}
		}
	}
	return nil
}

// TestHeadStatesEditedFiles is the harness lesson's exercise: two edits, then several searches
// with a tiny budget; the first message the model sees after the compaction names both files, even
// though the summary says nothing was modified.
func TestHeadStatesEditedFiles(t *testing.T) {
	p := contextwin.DefaultPolicy()
	p.ContextBudget, p.KeepRecentTurns = 2400, 2
	files := map[string]string{"a.go": "package a\n\nconst X = 1\n", "b.go": "package a\n\nconst Y = 1\n"}
	for i := range 6 {
		files[fmt.Sprintf("doc%d.txt", i)] = strings.Repeat(fmt.Sprintf("doc %d says hello\n", i), 60)
	}
	turns := []geminitest.Turn{
		callTurn("edit_file", map[string]any{"path": "a.go", "old": "X = 1", "new": "X = 2"}, ""),
		callTurn("edit_file", map[string]any{"path": "b.go", "old": "Y = 1", "new": "Y = 2"}, ""),
		callTurn("run_command", map[string]any{"command": "go vet ./..."}, ""),
	}
	for range 6 {
		turns = append(turns, callTurn("search", map[string]any{"pattern": "hello"}, ""))
	}
	turns = append(turns, textTurn("done"))
	for range 8 {
		turns = append(turns, summaryTurn("**Objective:**\nchange X and Y\n**Modifications made:**\nNone.\n**Remaining work:**\nedit a.go and b.go"))
	}
	f := newFixture(t, fixtureOpts{policy: p, files: files}, turns...)
	if _, err := f.run(t.Context(), "Set X and Y to 2."); err != nil {
		t.Fatal(err)
	}
	if len(f.s.Conversation().Checkpoints()) == 0 {
		t.Fatal("no compaction happened")
	}
	var head string
	for _, r := range mainRequests(f.srv) {
		if txt := firstText(r.Contents[0]); strings.Contains(txt, "[Summary of the first") {
			head = txt
			break
		}
	}
	if head == "" {
		t.Fatal("no request started with the compacted head")
	}
	contains(t, head, "Files modified since the session began: a.go, b.go")
	contains(t, head, "Modifications made:**\nNone.")
}
