package lsp

import (
	"fmt"
	"strings"
	"testing"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/contextwin"
	"github.com/reprise-dev/reprise/contextwin/catalog"
	"github.com/reprise-dev/reprise/lsp/lsptest"
)

// TestCompactionSettings: compactionModel and compactionTier are checked as they are applied; a
// bad value is refused with the setting's name and the settings in force stay.
func TestCompactionSettings(t *testing.T) {
	c := config{policy: contextwin.DefaultPolicy()}
	model, flex := "models/gemini-3.1-flash-lite", "Flex"
	n, err := c.apply(Settings{CompactionModel: &model, CompactionTier: &flex})
	if err != nil || n.compactionModel != "gemini-3.1-flash-lite" || n.policy.CompactionTier != catalog.TierFlex {
		t.Fatalf("apply: %v, model %q, tier %q", err, n.compactionModel, n.policy.CompactionTier)
	}
	for _, bad := range []Settings{
		{CompactionTier: ptr("batch")},
		{CompactionModel: ptr("gemini 3")},
		{CompactionModel: ptr("x:generateContent")},
	} {
		kept, err := n.apply(bad)
		name := "compactionTier"
		if bad.CompactionModel != nil {
			name = "compactionModel"
		}
		if err == nil || !strings.HasPrefix(err.Error(), name+":") || kept.compactionModel != n.compactionModel || kept.policy != n.policy {
			t.Errorf("%s: %v; kept %q, %q", name, err, kept.compactionModel, kept.policy.CompactionTier)
		}
	}
	back, err := n.apply(Settings{CompactionModel: ptr(""), CompactionTier: ptr("standard")})
	if err != nil || back.compactionModel != "" || back.policy.CompactionTier != "" || back.policy != c.policy {
		t.Errorf("back to the defaults: %v, %q, %q", err, back.compactionModel, back.policy.CompactionTier)
	}
}

// TestCompactionModelThroughTheServer: an editor that sets compactionModel gets its sessions'
// summaries from that model, and /context shows what they cost and where they go.
func TestCompactionModelThroughTheServer(t *testing.T) {
	var turns []geminitest.Turn
	files := map[string]string{}
	for i := range 5 {
		name := fmt.Sprintf("f%d.txt", i)
		files[name] = strings.Repeat("some file content\n", 100)
		turns = append(turns, call("read_file", map[string]any{"path": name}))
	}
	turns = append(turns, text("listed"), geminitest.Turn{Match: contextwin.SummaryMarker, Parts: []geminitest.Part{{Text: "**Objective:**\nList the files"}}})
	settings := map[string]any{"compactionModel": "gemini-3.1-flash-lite", "compactionTier": "flex"}
	e := newEnv(t, envOpts{editor: lsptest.Options{Experimental: true, InitializationOptions: settings}, files: files}, turns...)
	id := e.ask("list files five times", "")
	e.turnEnd(id)
	var res compactResult
	if err := e.ed.Execute(e.ctx, CommandCompact, compactArgs{SessionID: id}, &res); err != nil {
		t.Fatal(err)
	}
	var sums int
	for _, r := range e.srv.Requests() {
		if !strings.Contains(string(r.Body), contextwin.SummaryMarker) {
			continue
		}
		sums++
		if r.Model != "gemini-3.1-flash-lite" || r.Tier != "" {
			t.Errorf("summary to %s on tier %q: want flash-lite, standard (the user waits for a manual compaction)", r.Model, r.Tier)
		}
	}
	if sums != 1 {
		t.Fatalf("%d summary requests", sums)
	}
	var ctx contextResult
	if err := e.ed.Execute(e.ctx, CommandContext, SessionArgs{SessionID: id}, &ctx); err != nil {
		t.Fatal(err)
	}
	s := ctx.Totals.Summaries
	if s == nil || s.Calls != 1 || s.CachedTokens != 0 || s.Cost.Amount <= 0 || ctx.CompactionModel != "gemini-3.1-flash-lite" || ctx.CompactionTier != "flex" {
		t.Fatalf("context: summaries %+v, compaction model %q, tier %q", s, ctx.CompactionModel, ctx.CompactionTier)
	}
	want := "Summaries: 1 summary $" + fmt.Sprintf("%.4f", s.Cost.Amount)
	if !strings.Contains(ctx.Text, want) || !strings.Contains(ctx.Text, "· on gemini-3.1-flash-lite · Flex for background summaries") {
		t.Errorf("context text lacks %q and where summaries go:\n%s", want, ctx.Text)
	}
}
