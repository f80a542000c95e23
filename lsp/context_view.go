package lsp

import (
	"context"
	"fmt"
	"strings"

	"github.com/reprise-dev/reprise/agent/runner"
	"github.com/reprise-dev/reprise/contextwin"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// contextReport is the /context view of a session, structured and as text.
func (s *server) contextReport(l *runner.Live) contextResult {
	did, _ := s.sessions.runner.Do(context.Background(), l, runner.Verb{Kind: runner.Context}, nil) // never fails
	r := did.Report
	out := contextResult{
		contextUsageParams: usageParams(r.SessionID, r.Usage),
		Model:              r.Model,
		ServedModel:        r.ServedModel,
		CompactionModel:    r.CompactionModel,
		CompactionTier:     string(r.CompactionTier),
		LastPrompt:         r.LastPrompt,
		Turns:              r.Turns,
		Calls:              r.Calls,
		Rereads:            r.Rereads,
		Checkpoints:        r.Checkpoints,
		State:              r.State,
		Status:             wire(statusNames, r.Status),
		FixedTokens:        r.FixedTokens,
		Largest:            []largeItem{},
		MCP:                mcpShares(l.External),
		Pins:               contextwin.PinInfos(r.Pins),
		PinnedTokens:       contextwin.PinnedTokens(r.Pins),
	}
	for _, it := range r.Largest {
		out.Largest = append(out.Largest, largeItem{Item: it, Stale: it.Path != "" && l.Files().Stale(it.Path)})
	}
	if m := out.Totals.Misses; m != nil { // with the model's own minimum, which the view knows
		m.Text = r.Usage.Totals.Misses.Text(catalog.Builtin().CacheMin(r.Model))
	}
	out.Text = renderContext(out)
	return out
}

// renderContext writes the view like Copilot's /context: the window, each category with its share,
// then the largest items and the session's totals.
func renderContext(c contextResult) string {
	var b strings.Builder
	model := c.Model
	if c.ServedModel != "" {
		model += " (answered by " + c.ServedModel + ")"
	}
	fmt.Fprintf(&b, "%s · %s/%s tokens (%.1f%%, %s)\n", model, contextwin.Kilo(c.Used), contextwin.Kilo(c.Size), c.Percent, c.Source)
	row := func(name string, n int) {
		fmt.Fprintf(&b, "  %-20s %7s  %5.1f%%\n", name, contextwin.Kilo(n), 100*float64(n)/float64(max(c.Size, 1)))
	}
	bd := c.Breakdown
	row("System prompt", bd.SystemPrompt)
	if bd.CustomInstructions > 0 {
		row("Custom instructions", bd.CustomInstructions)
	}
	if bd.WorkspaceMap > 0 {
		row("Workspace map", bd.WorkspaceMap)
	}
	row("System tools", bd.Tools)
	row("MCP tools", bd.MCPTools)
	for _, m := range c.MCP {
		name := m.Server
		if name == "" {
			name = "(catalogue)"
		}
		label := fmt.Sprintf("%d tools", m.Tools)
		if m.Deferred > 0 {
			label += fmt.Sprintf(", %d via catalogue", m.Deferred)
		}
		fmt.Fprintf(&b, "    %-18s %7s  %s\n", clip(name, 18), contextwin.Kilo(m.Tokens), label)
	}
	row("Messages", bd.Messages)
	row("Free space", bd.Free)
	row("Buffer", bd.Buffer)
	if len(c.Pins) > 0 {
		fmt.Fprintf(&b, "Pinned: %d %s, %s tokens (counted in messages)\n", len(c.Pins), plural(len(c.Pins), "item", "items"), catalog.Commas(c.PinnedTokens))
		for _, p := range c.Pins {
			fmt.Fprintf(&b, "  %-40s %7s\n", clip(p.ID+" "+p.Label, 40), contextwin.Kilo(p.Tokens))
		}
	}
	writeMemo(&b, c.State)
	if len(c.Largest) > 0 {
		b.WriteString("Largest items in messages:\n")
		for _, it := range c.Largest {
			stale := ""
			if it.Stale {
				stale = "  (changed on disk since read)"
			}
			fmt.Fprintf(&b, "  %-40s %7s%s\n", clip(it.Label, 40), contextwin.Kilo(it.Tokens), stale)
		}
	}
	t := c.Totals
	fmt.Fprintf(&b, "Session: %s · %s input (%s cached) · %s output · %s · %d compactions · compaction %s at %.0f%%\n",
		turnsAndCalls(c.Turns, c.Calls), contextwin.Kilo(t.InputTokens), contextwin.Kilo(t.CachedTokens), contextwin.Kilo(t.OutputTokens), t.Cost.Text, c.Compaction.Count, c.Compaction.State, 100*c.CompactAt)
	if line := summariesLine(c); line != "" {
		b.WriteString(line + "\n")
	}
	if s := t.Subagents; s != nil {
		b.WriteString("Subagents: " + s.Text + " (in the session's figures above)\n")
	}
	if h := c.Cache; h != nil {
		fmt.Fprintf(&b, "Cache: %s of %s expected cached tokens reported (%s)\n", contextwin.Kilo(h.Reported), contextwin.Kilo(h.Expected), h.Text())
	}
	if m := t.Misses; m != nil {
		b.WriteString(m.Text + "\n")
	}
	return b.String()
}

// writeMemo writes the agent's plan (its progress and the item in progress) and its notes, each
// key with the start of its value: what the head restates after every compaction.
func writeMemo(b *strings.Builder, st contextwin.State) {
	if len(st.Plan) > 0 {
		done, now := 0, ""
		for _, t := range st.Plan {
			switch t.Status {
			case contextwin.TodoCompleted:
				done++
			case contextwin.TodoInProgress:
				now = " · now: " + t.Description
			}
		}
		fmt.Fprintf(b, "Plan: %d of %d done%s\n", done, len(st.Plan), clip(now, 60))
	}
	if len(st.Notes) > 0 {
		chars := 0
		for _, n := range st.Notes {
			chars += len([]rune(n.Key)) + len([]rune(n.Value))
		}
		fmt.Fprintf(b, "Notes: %d, %s characters (restated after each compaction)\n", len(st.Notes), catalog.Commas(chars))
		for _, n := range st.Notes {
			fmt.Fprintf(b, "  %-24s %s\n", clip(n.Key, 24), clip(strings.Join(strings.Fields(n.Value), " "), 50))
		}
	}
}

// summariesLine says what the compaction summaries cost and where they go, once there is a
// summary or a setting other than the default: "Summaries: 1 summary $0.0009 (…) · on
// gemini-3.1-flash-lite · Flex for background summaries".
func summariesLine(c contextResult) string {
	var parts []string
	if s := c.Totals.Summaries; s != nil {
		parts = append(parts, s.Text)
	}
	if c.CompactionModel != "" {
		parts = append(parts, "on "+c.CompactionModel)
	}
	if c.CompactionTier == "flex" {
		parts = append(parts, "Flex for background summaries")
	}
	if len(parts) == 0 {
		return ""
	}
	return "Summaries: " + strings.Join(parts, " · ")
}

// turnsAndCalls says how many prompts a session answered and how many model calls they took,
// which differ as soon as a turn calls a tool.
func turnsAndCalls(turns, calls int) string {
	return fmt.Sprintf("%d %s · %d model %s", turns, plural(turns, "turn", "turns"), calls, plural(calls, "call", "calls"))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// mcpShares lists what each MCP server's declared tools cost a session, in declaration order.
func mcpShares(m runner.External) []mcpShare {
	out := []mcpShare{}
	if m == nil {
		return out
	}
	if n := m.CatalogTokens(); n > 0 {
		out = append(out, mcpShare{Server: "", Tools: 2, Tokens: n})
	}
	for _, st := range m.Servers() {
		sh := mcpShare{Server: st.Name}
		for _, t := range st.Tools {
			if t.Deferred {
				sh.Deferred++
				continue
			}
			sh.Tools++
			sh.Tokens += t.Tokens
		}
		out = append(out, sh)
	}
	return out
}
