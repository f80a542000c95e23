package agent

import (
	"strings"
	"testing"
	"time"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
)

// What a session tells outside its turns (Options.Between), which the runner passes on to the
// front-ends.

// collect returns a Between sink and the channel it fills.
func collect() (func(Event), chan Event) {
	c := make(chan Event, 64)
	return func(ev Event) { c <- ev }, c
}

// drain returns what c holds now.
func drain(c chan Event) []Event {
	var got []Event
	for {
		select {
		case ev := <-c:
			got = append(got, ev)
		default:
			return got
		}
	}
}

// TestFlexSummaryLandsBetweenTurns: with a Between sink, a background summary that outlives its
// turn is installed as soon as it lands rather than at the next turn's first call: Between hears
// the compaction done, then the usage it leaves, and the next turn starts on the compacted
// history without telling the compaction again.
func TestFlexSummaryLandsBetweenTurns(t *testing.T) {
	slowFlex := geminitest.Turn{Match: flexBody, Delay: "2s", Parts: []geminitest.Part{{Text: summaryText}}}
	o, turns := flexScenario(fixtureOpts{}, slowFlex, textTurn("nothing more to read"))
	o.policy.ContextBudget = 6000 // past compactAt, not at blockAt: the summary is in the background when the turn ends
	var between chan Event
	o.between, between = collect()
	f := newFixture(t, o, turns...)
	evs, err := f.run(t.Context(), "Read every note.")
	if err != nil {
		t.Fatal(err)
	}
	if f.s.compactor.currentJob() == nil && len(f.s.Conversation().Checkpoints()) == 0 {
		t.Fatalf("no summary left running: %v", types(evs))
	}
	usages := ofType(evs, EventUsage)
	before := usages[len(usages)-1].Usage.Used
	if job := f.s.compactor.currentJob(); job != nil {
		<-job.done
	}
	f.s.landing.Wait()
	got := drain(between)
	if len(got) != 2 || got[0].Type != EventCompaction || got[0].Compaction.State != CompactionDone || got[1].Type != EventUsage {
		t.Fatalf("between turns %v: want the compaction done, then the usage", types(got))
	}
	if cps := f.s.Conversation().Checkpoints(); len(cps) != 1 || got[0].Compaction.Checkpoint == nil || got[0].Compaction.Checkpoint.N != 1 {
		t.Fatalf("checkpoints %+v after the landing", cps)
	}
	if after := got[1].Usage.Used; after >= before {
		t.Errorf("usage %d after the landing, %d before: the meter does not show the room freed", after, before)
	}
	evs, err = f.run(t.Context(), "Anything else?")
	if err != nil {
		t.Fatal(err)
	}
	if c := ofType(evs, EventCompaction); len(c) != 0 {
		t.Errorf("the next turn tells the compaction again: %v", types(evs))
	}
	if got := drain(between); len(got) != 0 {
		t.Errorf("between turns after the landing: %v", types(got))
	}
}

// TestCloseWhileASummaryIsAway: a session closed while its background summary is still away
// cancels it; nothing is told between turns after Close returns.
func TestCloseWhileASummaryIsAway(t *testing.T) {
	slowFlex := geminitest.Turn{Match: flexBody, Delay: "60s", Parts: []geminitest.Part{{Text: summaryText}}}
	o, turns := flexScenario(fixtureOpts{}, slowFlex)
	o.policy.ContextBudget = 6000
	var between chan Event
	o.between, between = collect()
	f := newFixture(t, o, turns...)
	if _, err := f.run(t.Context(), "Read every note."); err != nil {
		t.Fatal(err)
	}
	if f.s.compactor.currentJob() == nil {
		t.Fatal("no summary left running on Flex")
	}
	f.s.Close()
	if got := drain(between); len(got) != 0 {
		t.Errorf("told between turns after Close: %v", types(got))
	}
	if n := len(f.s.Conversation().Checkpoints()); n != 0 {
		t.Errorf("%d checkpoints: the cancelled summary landed", n)
	}
}

// TestIdleCacheNoteBetweenTurns: the explicit cache kept alive while the session is idle cannot
// be extended: the user hears it then, as a warning (the next call pays to build it again), and
// the next turn does not repeat it.
func TestIdleCacheNoteBetweenTurns(t *testing.T) {
	refused := &geminitest.Fault{Status: 403, Message: "CachedContent not found (or permission denied)"}
	o, turns := readingOpts(geminitest.Cache{MissRate: 1, Explicit: geminitest.ExplicitFaults{Extend: refused}}, true, "")
	o.simClock, o.policy.ExplicitCacheIdle = true, true
	var between chan Event
	o.between, between = collect()
	f := newFixture(t, o, append(turns, textTurn("nothing new"))...)
	if _, err := f.run(t.Context(), "read the eight files"); err != nil {
		t.Fatal(err)
	}
	f.idle(t, 30*time.Minute)
	<-f.s.caching.keeperDone()
	got := drain(between)
	const note = "could not be kept alive"
	if len(got) != 1 || got[0].Type != EventWarning || !strings.Contains(got[0].Text, note) {
		t.Fatalf("between turns %+v: want a warning that the cache could not be kept alive", got)
	}
	evs, err := f.run(t.Context(), "anything new?")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ofType(evs, EventWarning) {
		if strings.Contains(w.Text, note) {
			t.Errorf("the next turn repeats the note: %q", w.Text)
		}
	}
}
