package export

import (
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/contextwin"
)

func fc(name string, args map[string]any) *genai.Part {
	return &genai.Part{FunctionCall: &genai.FunctionCall{Name: name, Args: args}}
}

func fr(name, out string) *genai.Part {
	return &genai.Part{FunctionResponse: &genai.FunctionResponse{Name: name, Response: map[string]any{"output": out}}}
}

func usage(prompt, cached, out int, cost float64) journal.Record {
	return journal.Record{Kind: journal.KindUsage, Usage: &contextwin.CallUsage{Prompt: prompt, Cached: cached, Candidates: out}, Cost: cost}
}

// TestBuild: two calls without ids in one message are answered and recorded in order (the second
// refused); a summary's and a cache's cost count in their turn; the turns add up to the totals;
// harness notes, plan, compaction, undo and a turn stopped are steps; redact masks every text.
func TestBuild(t *testing.T) {
	recs := []journal.Record{
		{Kind: journal.KindMeta, Meta: &journal.Meta{ID: "s1", Model: "m", Parent: "s0", From: "turn 3"}},
		{Kind: journal.KindTurnStart, Turn: 1, Text: "Read both, key SECRET"},
		{Kind: journal.KindAppend, Content: &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: "Read both, key SECRET"}, {Text: "[a.txt changed on disk]"}}}},
		usage(100, 0, 10, 0.001),
		{Kind: journal.KindAppend, Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{fc("read_file", map[string]any{"path": "a"}), fc("read_file", map[string]any{"path": "b"})}}},
		{Kind: journal.KindTool, Tool: &journal.Tool{Call: "call-1-2", Refused: true}},
		{Kind: journal.KindAppend, Content: &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{fr("read_file", "A ``` text"), fr("read_file", "refused")}}},
		{Kind: journal.KindPlan, Todos: []contextwin.Todo{{Description: "x", Status: "cancelled"}}},
		{Kind: journal.KindSummaryUsage, Usage: &contextwin.CallUsage{Prompt: 50, Candidates: 5}, Cost: 0.0005},
		{Kind: journal.KindCompaction, Compaction: &journal.Compaction{Head: &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: "head"}}}, Split: 1,
			Checkpoint: contextwin.Checkpoint{N: 1, Title: "T", Trigger: "auto", Replaced: 3, TokensBefore: 900, TokensAfter: 300, Summary: "kept SECRET"}}},
		usage(200, 150, 20, 0.002),
		{Kind: journal.KindAppend, Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{Text: "Done, SECRET."}}}},
		{Kind: journal.KindTurnEnd, StopReason: "end_turn"},
		{Kind: journal.KindCache, Cache: &journal.CacheEvent{Op: journal.CacheCreated, Name: "c1", Tokens: 4096}, Cost: 0.0003},
		{Kind: journal.KindTurnStart, Turn: 2, Text: "Again"},
		{Kind: journal.KindCache, Cache: &journal.CacheEvent{Op: journal.CacheExtended, Name: "c1"}, Cost: 0.0001},
		usage(300, 200, 30, 0.003),
		{Kind: journal.KindUndo},
		{Kind: journal.KindTurnEnd, StopReason: "cancelled"},
	}
	d := Build(recs, func(s string) string { return strings.ReplaceAll(s, "SECRET", "[redacted]") })
	if len(d.Turns) != 2 {
		t.Fatalf("%d turns", len(d.Turns))
	}
	var sum contextwin.Totals
	for _, tn := range d.Turns {
		sum.Calls += tn.Totals.Calls
		sum.InputTokens += tn.Totals.InputTokens
		sum.CachedTokens += tn.Totals.CachedTokens
		sum.OutputTokens += tn.Totals.OutputTokens
		sum.Cost += tn.Totals.Cost
	}
	if sum.Calls != d.Totals.Calls || sum.InputTokens != d.Totals.InputTokens || sum.CachedTokens != d.Totals.CachedTokens ||
		sum.OutputTokens != d.Totals.OutputTokens || Figures(sum) != Figures(d.Totals) {
		t.Errorf("the turns add up to %s, the totals are %s", Figures(sum), Figures(d.Totals))
	}
	var kinds []string
	var tools []*Tool
	for _, s := range d.Turns[0].Steps {
		kinds = append(kinds, string(s.Kind))
		if s.Tool != nil {
			tools = append(tools, s.Tool)
		}
	}
	if got := strings.Join(kinds, " "); got != "user note tool tool plan compaction agent" {
		t.Errorf("turn 1's steps: %s", got)
	}
	if len(tools) != 2 || tools[0].Refused || !tools[1].Refused || tools[0].Output != "A ``` text" || tools[1].Output != "refused" {
		t.Errorf("the calls: %+v %+v", tools[0], tools[1])
	}
	md, page := Markdown(d), HTML(d)
	for _, out := range []string{md, page} {
		if strings.Contains(out, "SECRET") {
			t.Errorf("a secret is left:\n%s", out)
		}
	}
	for _, want := range []string{"````\nA ``` text\n````", "forked from session s0 at turn 3", "- [-] ~~x~~", "Checkpoint 1 «T» (auto): 3 messages summarized, 900 → 300 tokens",
		"*The last compaction was undone", "*The turn ended: cancelled.*", "**Tool** `read_file {\"path\":\"b\"} — refused`", "> [a.txt changed on disk]"} {
		if !strings.Contains(md, want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, md)
		}
	}
	if !strings.Contains(page, `<details class="tool bad"><summary>read_file {&#34;path&#34;:&#34;b&#34;} — refused</summary>`) {
		t.Errorf("the page's refused call:\n%s", page)
	}
	if _, err := Render(d, "pdf"); err == nil {
		t.Error("an unknown format was rendered")
	}
}
