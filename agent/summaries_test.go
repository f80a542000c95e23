package agent

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/contextwin"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// flexBody is what a request asking for Flex carries; a scripted turn matching it answers only
// the Flex request.
const flexBody = `"serviceTier":"flex"`

// blockingScenario is TestBlockingCompaction's: the prompt jumps past blockAt, and the loop waits
// for a compaction started there.
func blockingScenario(o fixtureOpts, extra ...geminitest.Turn) (fixtureOpts, []geminitest.Turn) {
	p := contextwin.DefaultPolicy()
	p.ContextBudget, p.KeepRecentTurns, p.CompactAt, p.BlockAt = 4000, 1, 0.5, 0.6
	p.CompactionTier = o.policy.CompactionTier
	o.policy = p
	o.files = notes(3, 600)
	o.files["big.txt"] = strings.Repeat("a big file line\n", 1000)
	turns := append(readTurns(3), callTurn("read_file", map[string]any{"path": "big.txt"}, sig), callTurn("read_file", map[string]any{"path": "big.txt"}, sig), textTurn("done"))
	turns = append(turns, extra...)
	return o, append(turns, summaryTurn(summaryText), summaryTurn(summaryText), summaryTurn(summaryText))
}

// summaryRecords are the journal's summary_usage records.
func summaryRecords(t *testing.T, dir string) []journal.Record {
	t.Helper()
	return slices.DeleteFunc(readRecords(t, dir), func(r journal.Record) bool { return r.Kind != journal.KindSummaryUsage })
}

// TestSummaryOnCompactionModel: with compactionModel set, the summary request goes to that model,
// stand-alone (its cache holds none of the session's prefix, so none is expected cached), and is
// billed at that model's prices: the session's totals match what the API billed, summaries
// apart, and the journal records the model and tier that served each summary.
func TestSummaryOnCompactionModel(t *testing.T) {
	o, turns := blockingScenario(fixtureOpts{compaction: "gemini-3.1-flash-lite", journal: true})
	f := newFixture(t, o, turns...)
	evs, err := f.run(t.Context(), "Read.")
	if err != nil {
		t.Fatal(err)
	}
	sums := summaryRequests(f.srv)
	if len(sums) == 0 || len(f.s.Conversation().Checkpoints()) == 0 {
		t.Fatalf("no summary: %v", types(evs))
	}
	var billed float64
	for _, r := range sums {
		if r.Model != "gemini-3.1-flash-lite" || r.Tools != 0 || firstText(r.SystemInstruction) != contextwin.SummaryInstruction {
			t.Errorf("summary request to %s with %d tools, system %q: want flash-lite, stand-alone", r.Model, r.Tools, firstText(r.SystemInstruction))
		}
		if r.Usage == nil || r.Usage.Cached != 0 || !r.Priced {
			t.Errorf("summary usage %+v: want none of it cached, priced", r.Usage)
			continue
		}
		billed += r.Cost
	}
	for _, r := range mainRequests(f.srv) {
		if r.Model != "gemini-3.8-flash" {
			t.Errorf("a loop call went to %s", r.Model)
		}
	}
	tot := f.s.bill.sum()
	if math.Abs(tot.Summaries.Cost-billed) > 1e-12 || tot.Summaries.Calls != len(sums) || tot.Summaries.CachedTokens != 0 {
		t.Errorf("summaries %+v, the API billed $%g for %d", tot.Summaries, billed, len(sums))
	}
	if all, unpriced := f.srv.Billed(); math.Abs(tot.Cost-all) > 1e-12 || unpriced != 0 {
		t.Errorf("session cost $%g, the API billed $%g", tot.Cost, all)
	}
	recs := summaryRecords(t, f.state)
	if len(recs) != len(sums) {
		t.Fatalf("%d summary records for %d requests", len(recs), len(sums))
	}
	for _, r := range recs {
		if r.Model != "gemini-3.1-flash-lite" || r.Tier != catalog.TierStandard || r.Cost <= 0 {
			t.Errorf("summary record: model %q, tier %q, $%g", r.Model, r.Tier, r.Cost)
		}
	}
}

// TestBlockingSummaryNeverOnFlex: with compactionTier flex, a compaction started at blockAt (the
// agent waits for it) asks the standard tier only.
func TestBlockingSummaryNeverOnFlex(t *testing.T) {
	o, turns := blockingScenario(fixtureOpts{policy: contextwin.Policy{CompactionTier: catalog.TierFlex}})
	f := newFixture(t, o, turns...)
	evs, err := f.run(t.Context(), "Read.")
	if err != nil {
		t.Fatal(err)
	}
	running := ofType(evs, EventCompaction)
	if len(running) == 0 || running[0].Compaction.State != CompactionRunning || !strings.Contains(running[0].Compaction.Note, "≥") {
		t.Fatalf("want a compaction started at blockAt: %+v", running)
	}
	sums := summaryRequests(f.srv)
	if len(sums) == 0 {
		t.Fatal("no summary")
	}
	for _, r := range sums {
		if r.Tier != "" || strings.Contains(string(r.Body), flexBody) {
			t.Errorf("a summary the agent waits for asked for tier %q", r.Tier)
		}
	}
	for _, w := range ofType(evs, EventWarning) {
		if strings.Contains(w.Text, "Flex") {
			t.Errorf("warning %q", w.Text)
		}
	}
}

// flexScenario is TestBackgroundCompaction's: past compactAt, at prices where the cache gives no
// discount and output is free, a compaction pays early and starts in the background.
func flexScenario(o fixtureOpts, extra ...geminitest.Turn) (fixtureOpts, []geminitest.Turn) {
	p := contextwin.DefaultPolicy()
	p.ContextBudget, p.KeepRecentTurns, p.CompactionTier = 5000, 2, catalog.TierFlex
	o.policy, o.files, o.cacheMin = p, notes(16, 800), 1024
	o.prices = contextwin.PriceTable{"gemini": {Input: 1, CachedInput: 1, Output: 0}}
	turns := append(readTurns(16), textTurn("read them all"))
	turns = append(turns, extra...)
	return o, append(turns, summaryTurn(summaryText), summaryTurn(summaryText), summaryTurn(summaryText))
}

// TestFlexBackgroundSummary: a background summary asks for Flex, is served on Flex and billed at
// half the price the same tokens cost on the standard tier, by the fake as by the session. On a
// loaded machine the turn may reach blockAt before the background summary lands: the agent then
// waits, gives the Flex request up for a standard one and says so, and only then.
func TestFlexBackgroundSummary(t *testing.T) {
	o, turns := flexScenario(fixtureOpts{journal: true})
	f := newFixture(t, o, turns...)
	evs, err := f.run(t.Context(), "Read every note.")
	if err != nil {
		t.Fatal(err)
	}
	waited := slices.ContainsFunc(ofType(evs, EventCompaction), func(ev Event) bool { return ev.Compaction.State == CompactionBlocking })
	f.srv.Idle() // a Flex request given up is recorded unanswered once its handler has seen it
	sums := summaryRequests(f.srv)
	if len(sums) == 0 {
		t.Fatalf("no summary: %v", types(evs))
	}
	if sums[0].Tier != "flex" {
		t.Fatalf("the background summary asked %q, want flex", sums[0].Tier)
	}
	for i, r := range sums {
		switch {
		case r.Tier != "flex" && (!waited || r.ServedTier != catalog.TierStandard):
			t.Fatalf("summary %d asked %q, served %q (the agent waited: %v)", i+1, r.Tier, r.ServedTier, waited)
		case r.Tier == "flex" && r.Usage != nil:
			if r.ServedTier != catalog.TierFlex {
				t.Fatalf("summary asked flex, served %q", r.ServedTier)
			}
			standard, _ := contextwin.Pricing{}.At(r.Model, f.s.opts.Now(), r.Usage.Prompt)
			u := contextwin.CallUsage{Prompt: r.Usage.Prompt, Cached: r.Usage.Cached, Candidates: r.Usage.Candidates, Thoughts: r.Usage.Thoughts}
			if math.Abs(r.Cost-u.Cost(standard)/2) > 1e-12 {
				t.Errorf("the fake billed $%g, want half of $%g", r.Cost, u.Cost(standard))
			}
		}
	}
	noDiscount := contextwin.Prices{Input: 1, CachedInput: 1, Output: 0}
	records := summaryRecords(t, f.state)
	for _, r := range records {
		if r.Tier == catalog.TierFlex && math.Abs(r.Cost-r.Usage.Cost(noDiscount)/2) > 1e-12 || r.Tier != catalog.TierFlex && !waited {
			t.Errorf("summary record on %q at $%g, want Flex at half of $%g", r.Tier, r.Cost, r.Usage.Cost(noDiscount))
		}
	}
	flex := 0
	for _, r := range records {
		if r.Tier == catalog.TierFlex {
			flex++
		}
	}
	if s := f.s.bill.sum().Summaries; s.Flex != flex || s.Calls != len(records) || !waited && s.Flex != len(sums) {
		t.Errorf("summaries %+v, want %d of %d on Flex (%d asked)", s, flex, len(records), len(sums))
	}
	for _, w := range ofType(evs, EventWarning) {
		if !waited || !strings.Contains(w.Text, "asked again on the standard tier") {
			t.Errorf("warning %q (the agent waited: %v)", w.Text, waited)
		}
	}
	if comp := ofType(evs, EventCompaction); !strings.Contains(comp[0].Compaction.Note, "Flex") {
		t.Errorf("the compaction does not say it asked Flex: %q", comp[0].Compaction.Note)
	}
}

// TestFlexShedFallsBackOnce: a shed Flex request is asked again once, on the standard tier, not
// again on Flex; the user is told once, however many compactions it happens to.
func TestFlexShedFallsBackOnce(t *testing.T) {
	o, turns := flexScenario(fixtureOpts{journal: true})
	o.script.Flex = geminitest.Flex{Shed: 10}
	f := newFixture(t, o, turns...)
	evs, err := f.run(t.Context(), "Read every note.")
	if err != nil {
		t.Fatal(err)
	}
	sums := summaryRequests(f.srv)
	if len(sums) < 2 || len(f.s.Conversation().Checkpoints()) == 0 {
		t.Fatalf("%d summary requests: %v", len(sums), types(evs))
	}
	for i := 0; i+1 < len(sums); i += 2 {
		shed, retry := sums[i], sums[i+1]
		if shed.Tier != "flex" || shed.Usage != nil || retry.Tier != "" || retry.Usage == nil || retry.ServedTier != catalog.TierStandard {
			t.Errorf("requests %d, %d: asked %q (usage %v) then %q (usage %v): want Flex shed, then standard", i, i+1, shed.Tier, shed.Usage != nil, retry.Tier, retry.Usage != nil)
		}
	}
	if len(sums)%2 != 0 {
		t.Errorf("%d summary requests: want a Flex one and a standard one per summary", len(sums))
	}
	warnings := ofType(evs, EventWarning)
	if len(warnings) != 1 || !strings.Contains(warnings[0].Text, "Flex capacity was shed") || !strings.Contains(warnings[0].Text, "429") {
		t.Errorf("warnings %+v: want one, saying Flex was shed", warnings)
	}
	if cp := f.s.Conversation().Checkpoints()[0]; cp.Fallback != "" {
		t.Errorf("the summary fell back to the deterministic one: %s", cp.Fallback)
	}
	for _, r := range summaryRecords(t, f.state) {
		if r.Tier != catalog.TierStandard {
			t.Errorf("a summary billed on %q", r.Tier)
		}
	}
	if s := f.s.bill.sum().Summaries; s.Flex != 0 || s.Calls != len(sums)/2 {
		t.Errorf("summaries %+v", s)
	}
}

// TestFlexSummaryOutlivesItsTurn: a background summary still on Flex when the turn ends is not
// waited for: the turn ends, the summary goes on at half price between turns and lands at the
// next turn's first call, with no fallback and no warning.
func TestFlexSummaryOutlivesItsTurn(t *testing.T) {
	slowFlex := geminitest.Turn{Match: flexBody, Delay: "1s", Parts: []geminitest.Part{{Text: summaryText}}}
	o, turns := flexScenario(fixtureOpts{}, slowFlex, textTurn("nothing more to read"))
	o.policy.ContextBudget = 6000 // past compactAt, not at blockAt: the summary is in the background when the turn ends
	f := newFixture(t, o, turns...)
	evs, err := f.run(t.Context(), "Read every note.")
	if err != nil {
		t.Fatal(err)
	}
	job := f.s.compactor.currentJob()
	if job == nil || len(f.s.Conversation().Checkpoints()) != 0 {
		t.Fatalf("the turn waited for its Flex summary: job %v, checkpoints %d, %v", job != nil, len(f.s.Conversation().Checkpoints()), types(evs))
	}
	<-job.done // between turns, the summary comes back
	evs, err = f.run(t.Context(), "Anything else?")
	if err != nil {
		t.Fatal(err)
	}
	sums := summaryRequests(f.srv)
	if len(sums) != 1 || sums[0].Tier != "flex" || sums[0].ServedTier != catalog.TierFlex || sums[0].Usage == nil {
		t.Fatalf("summary requests %+v: want one, served on Flex", sums)
	}
	if len(f.s.Conversation().Checkpoints()) != 1 {
		t.Errorf("checkpoints %+v: the summary did not land at the next turn", f.s.Conversation().Checkpoints())
	}
	done := ofType(evs, EventCompaction)
	if len(done) == 0 || done[0].Compaction.State != CompactionDone {
		t.Errorf("the next turn does not report the compaction done: %v", types(evs))
	}
	if w := ofType(evs, EventWarning); len(w) != 0 {
		t.Errorf("warnings %+v", w)
	}
	if s := f.s.bill.sum().Summaries; s.Flex != 1 {
		t.Errorf("summaries %+v, want 1 on Flex", s)
	}
}

// TestFlexSummaryCompactWaitsFor: a Flex summary left running by its turn, when /compact comes
// to wait for it, is asked again on the standard tier rather than waited for for minutes.
func TestFlexSummaryCompactWaitsFor(t *testing.T) {
	slowFlex := geminitest.Turn{Match: flexBody, Delay: "60s", Parts: []geminitest.Part{{Text: summaryText}}}
	o, turns := flexScenario(fixtureOpts{}, slowFlex)
	o.policy.ContextBudget = 6000 // past compactAt, not at blockAt: the summary is in the background when the turn ends
	f := newFixture(t, o, turns...)
	if _, err := f.run(t.Context(), "Read every note."); err != nil {
		t.Fatal(err)
	}
	if f.s.compactor.currentJob() == nil {
		t.Fatal("no summary left running on Flex")
	}
	// On a loaded machine the job may not have sent its Flex request yet: /compact would then
	// give it up before it was asked, and there would be nothing to see given up.
	for !slices.ContainsFunc(summaryRequests(f.srv), func(r geminitest.Request) bool { return r.Tier == "flex" }) {
		if t.Context().Err() != nil {
			t.Fatal("the Flex summary was never asked")
		}
		time.Sleep(time.Millisecond)
	}
	if _, err := f.s.Compact(t.Context(), ""); err != nil {
		t.Fatal(err)
	}
	f.srv.Idle() // the Flex request given up is recorded unanswered once its handler has seen it
	sums := summaryRequests(f.srv)
	// Then /compact's own summary, standard too.
	if len(sums) != 3 || sums[0].Tier != "flex" || sums[0].Usage != nil || sums[1].Tier != "" || sums[1].Usage == nil || sums[2].Tier != "" {
		for _, r := range sums {
			t.Logf("asked %q, turn %d, usage %+v", r.Tier, r.Turn, r.Usage)
		}
		t.Fatalf("summary requests %d: want the Flex one given up, then a standard one, then /compact's", len(sums))
	}
	if len(f.s.Conversation().Checkpoints()) != 2 {
		t.Errorf("checkpoints %+v", f.s.Conversation().Checkpoints())
	}
	if s := f.s.bill.sum().Summaries; s.Flex != 0 || s.Calls != 2 {
		t.Errorf("summaries %+v, want 2 on the standard tier", s)
	}
}

// TestPlanWeighsTheSummaryModel: the plan prices a summary where it would go: on another model,
// its input is the rendered transcript, none of it cached, at that model's prices (standard ones,
// even with Flex asked: worth does not count on its discount).
func TestPlanWeighsTheSummaryModel(t *testing.T) {
	p := contextwin.DefaultPolicy()
	p.CompactionTier = catalog.TierFlex
	plans := map[string]contextwin.Plan{}
	var facts planFacts
	for _, model := range []string{"", "gemini-3.1-flash-lite"} {
		f := newFixture(t, fixtureOpts{policy: p, files: notes(4, 4000), compaction: model, cacheMin: 1024}, append(readTurns(4), textTurn("read"))...)
		if _, err := f.run(t.Context(), "Read."); err != nil {
			t.Fatal(err)
		}
		facts = f.s.planFacts()
		f.s.conv.mu.Lock()
		plans[model], _ = f.s.conv.planLocked(facts, 0)
		f.s.conv.mu.Unlock()
	}
	warm, cold := plans[""], plans["gemini-3.1-flash-lite"]
	if !facts.cold || facts.summaryModel != "gemini-3.1-flash-lite" || !facts.flexOK {
		t.Fatalf("facts %+v", facts)
	}
	if warm.SummaryCached == 0 || cold.SummaryCached != 0 || cold.SummaryInput >= warm.SummaryInput {
		t.Errorf("warm summary %d (%d cached), cold %d (%d cached): want the cold one uncached and smaller (tool outputs cut)",
			warm.SummaryInput, warm.SummaryCached, cold.SummaryInput, cold.SummaryCached)
	}
	lite, _ := contextwin.Pricing{}.At("gemini-3.1-flash-lite", time.Now(), 0)
	if facts.summary != lite {
		t.Errorf("summary prices %+v, want flash-lite's %+v", facts.summary, lite)
	}
}

// TestCompactionModelWarnings: the user hears, once, that the compaction model has no known price
// (its summaries' cost is unknown), that it is retired, or that Flex was asked of a model the
// catalogue does not list on it.
func TestCompactionModelWarnings(t *testing.T) {
	p := contextwin.DefaultPolicy()
	p.CompactionTier = catalog.TierFlex
	for model, want := range map[string][]string{
		"acme-summarizer":  {"compactionModel acme-summarizer has no known price: the summaries' cost is unknown", "does not list acme-summarizer on the Flex tier"},
		"gemini-2.5-flash": {"compactionModel gemini-2.5-flash was shut down on 2026-12-01", "use gemini-3.5-flash-lite instead"},
		"gemini-4-argon":   {"does not list gemini-4-argon on the Flex tier", `{"gemini-4-argon": {"flex": true}}`},
	} {
		f := newFixture(t, fixtureOpts{policy: p, compaction: model}, textTurn("hi"), textTurn("again"))
		evs, err := f.run(t.Context(), "Say hi.")
		if err != nil {
			t.Fatal(err)
		}
		var text string
		for _, w := range ofType(evs, EventWarning) {
			text += w.Text + "\n"
		}
		for _, w := range want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: warnings lack %q:\n%s", model, w, text)
			}
		}
		evs, _ = f.run(t.Context(), "Again.")
		if w := ofType(evs, EventWarning); len(w) != 0 {
			t.Errorf("%s: warned again on the next turn: %v", model, w)
		}
	}
}
