package acp

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/runner"
	"github.com/reprise-dev/reprise/contextwin"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// The slash commands: Reprise's context management, as the editor's command palette offers them.
var commands = []struct{ name, desc, hint string }{
	{"compact", "Compact the conversation now into a checkpoint summary", "optional focus: what the summary must keep"},
	{"context", "Show how the context window is used, by category, with the largest items", ""},
	{"checkpoints", "List the compaction checkpoints, or show checkpoint N", "optional checkpoint number"},
	{"restore", "Put back the files the agent changed from turn N on (default: the last turn)", "optional turn number"},
	{"undo-compaction", "Undo the last compaction: the messages it replaced come back", ""},
	{"pin", "Pin a file of the workspace or a text: kept verbatim in every prompt, never cleared or summarized", "a path in the workspace, or a text"},
	{"forget", "Delete one of the agent's notes (/context lists them): the agent is told", "the note's key"},
}

func availableCommands() []sdk.AvailableCommand {
	out := make([]sdk.AvailableCommand, 0, len(commands))
	for _, c := range commands {
		ac := sdk.AvailableCommand{Name: c.name, Description: c.desc}
		if c.hint != "" {
			ac.Input = &sdk.AvailableCommandInput{Unstructured: &sdk.UnstructuredCommandInput{Hint: c.hint}}
		}
		out = append(out, ac)
	}
	return out
}

// slash splits "/name arg" when name is one of the commands.
func slash(text string) (name, arg string, ok bool) {
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "/") {
		return "", "", false
	}
	name, arg, _ = strings.Cut(t[1:], " ")
	for _, c := range commands {
		if c.name == name {
			return name, strings.TrimSpace(arg), true
		}
	}
	return "", "", false
}

// command runs a slash command; what it says comes as agent message chunks.
func (s *server) command(ctx context.Context, id string, l *runner.Live, name, arg string) (sdk.PromptResponse, error) {
	say := func(text string) { s.send(ctx, id, sdk.UpdateAgentMessageText(text)) }
	render := s.verbEvents(ctx, id)
	switch name {
	case "compact":
		out, err := s.runner.Do(ctx, l, runner.Verb{Kind: runner.Compact, Focus: arg}, render)
		switch {
		case errors.Is(err, contextwin.ErrNothingToCompact):
			say("Nothing to compact: the conversation is shorter than the turns kept verbatim.")
		case err != nil && ctx.Err() != nil:
			return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
		case err != nil:
			say("The compaction failed: " + err.Error())
		default:
			cp := out.Checkpoint
			say(fmt.Sprintf("Compacted %s → %s tokens. Checkpoint %d: %s.", contextwin.Kilo(out.Before), contextwin.Kilo(out.After), cp.N, cp.Title))
		}
	case "context":
		out, _ := s.runner.Do(ctx, l, runner.Verb{Kind: runner.Context}, render) // never fails
		say(contextMarkdown(out.Report))
	case "checkpoints":
		out, _ := s.runner.Do(ctx, l, runner.Verb{Kind: runner.Checkpoints}, render) // never fails
		say(checkpointsMarkdown(out.Checkpoints, arg))
	case "restore":
		turn := l.Conversation().Turns() // the last turn
		if arg != "" {
			n, err := strconv.Atoi(arg)
			if err != nil || n < 1 {
				say(fmt.Sprintf("/restore takes a turn number (1 or more), got %q.", arg))
				return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
			}
			turn = n
		}
		out, err := s.runner.Do(ctx, l, runner.Verb{Kind: runner.Restore, Turn: turn}, render)
		restored := out.Files
		switch {
		case err != nil:
			say(fmt.Sprintf("Nothing restored: %v", err))
		case len(restored) == 0:
			say(fmt.Sprintf("The agent changed no file from turn %d on.", turn))
		default:
			say(fmt.Sprintf("Restored to before turn %d: %s.", turn, strings.Join(restored, ", ")))
		}
	case "pin":
		say(s.pinCommand(ctx, l, arg, render))
	case "forget":
		out, err := s.runner.Do(ctx, l, runner.Verb{Kind: runner.ForgetNote, NoteKey: arg}, render)
		switch {
		case arg == "":
			say("/forget takes the key of a note: /context lists them.")
		case err != nil:
			say("Nothing deleted: " + err.Error() + ".")
		default:
			say(fmt.Sprintf("Note %q deleted; the agent is told at its next call. %d left.", arg, len(out.Notes)))
		}
	case "undo-compaction":
		out, err := s.runner.Do(ctx, l, runner.Verb{Kind: runner.UndoCompaction}, render)
		if err != nil {
			say("Nothing undone: " + err.Error())
			break
		}
		say(fmt.Sprintf("Checkpoint %d undone: the messages it replaced are back.", out.Checkpoint.N))
	}
	return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
}

// contextMarkdown is the /context view: the window by category, the largest items, the totals.
func contextMarkdown(r agent.Report) string {
	var b strings.Builder
	model := r.Model
	if r.ServedModel != "" {
		model += " (answered by " + r.ServedModel + ")"
	}
	fmt.Fprintf(&b, "**Context** · %s · %s/%s tokens (%.1f%%, %s)\n\n| | tokens | share |\n|---|---:|---:|\n", model, contextwin.Kilo(r.Used), contextwin.Kilo(r.Size), r.Percent, r.Source)
	bd := r.Breakdown
	for _, row := range []struct {
		name string
		n    int
	}{{"System prompt", bd.SystemPrompt}, {"Custom instructions", bd.CustomInstructions}, {"Workspace map", bd.WorkspaceMap}, {"System tools", bd.Tools}, {"MCP tools", bd.MCPTools},
		{"Messages", bd.Messages}, {"Free space", bd.Free}, {"Buffer", bd.Buffer}} {
		if row.n == 0 && row.name == "Workspace map" {
			continue // a row only when the head has a map
		}
		fmt.Fprintf(&b, "| %s | %s | %.1f%% |\n", row.name, contextwin.Kilo(row.n), 100*float64(row.n)/float64(max(r.Size, 1)))
	}
	if p := r.State.Plan; len(p) > 0 {
		b.WriteString("\n**Plan**\n\n" + contextwin.RenderPlan(p))
	}
	if n := r.State.Notes; len(n) > 0 {
		b.WriteString("\n**Notes** (restated after each compaction; /forget KEY deletes one)\n\n" + contextwin.RenderNotes(n))
	}
	if len(r.Largest) > 0 {
		b.WriteString("\n**Largest items**\n\n")
		for _, it := range r.Largest {
			fmt.Fprintf(&b, "- %s: %s tokens\n", it.Label, contextwin.Kilo(it.Tokens))
		}
	}
	t := r.Totals
	fmt.Fprintf(&b, "\nSession: %d turn(s) · %d model call(s) · %s input (%s cached) · %s output · %s · %d compaction(s)\n",
		r.Turns, r.Calls, contextwin.Kilo(t.InputTokens), contextwin.Kilo(t.CachedTokens), contextwin.Kilo(t.OutputTokens), t.CostTextUnknown(r.CostUnknown), r.Compactions)
	if line := t.Summaries.Text(); line != "" || r.CompactionModel != "" {
		if r.CompactionModel != "" {
			line = strings.TrimPrefix(line+" · on "+r.CompactionModel, " · ")
		}
		fmt.Fprintf(&b, "\nSummaries: %s\n", line)
	}
	if line := t.Subagents.Text(); line != "" {
		fmt.Fprintf(&b, "\nSubagents: %s (in the session's figures above)\n", line)
	}
	if h, ok := t.Cache(); ok {
		fmt.Fprintf(&b, "\nCache: %s of %s expected cached tokens reported (%s)\n", contextwin.Kilo(h.Reported), contextwin.Kilo(h.Expected), h.Text())
	}
	if line := t.Misses.Text(catalog.Builtin().CacheMin(r.Model)); line != "" {
		fmt.Fprintf(&b, "\n%s\n", line)
	}
	return b.String()
}

// checkpointsMarkdown lists the checkpoints, or shows one whole.
func checkpointsMarkdown(cps []contextwin.Checkpoint, arg string) string {
	if len(cps) == 0 {
		return "No checkpoint yet: /compact makes one."
	}
	if arg != "" {
		n, err := strconv.Atoi(arg)
		if err != nil {
			return fmt.Sprintf("/checkpoints takes a checkpoint number, got %q.", arg)
		}
		for _, cp := range cps {
			if cp.N == n {
				return cp.Markdown()
			}
		}
		return fmt.Sprintf("No checkpoint %d: there are %d.", n, len(cps))
	}
	var b strings.Builder
	for _, cp := range cps {
		fmt.Fprintf(&b, "- Checkpoint %d: %s (%s, %s → %s tokens, %d messages)\n", cp.N, cp.Title, cp.Trigger, contextwin.Kilo(cp.TokensBefore), contextwin.Kilo(cp.TokensAfter), cp.Replaced)
	}
	return b.String()
}
