package acp

import (
	"regexp"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reprise-dev/reprise/contextwin"
)

// listItem matches "- x", "* x" and "1. x".
var listItem = regexp.MustCompile(`^\s*(?:[-*•]|\d+[.)])\s+(.*\S)`)

// planOf reads the "Remaining work" section of a compaction's summary as ACP plan entries: the
// list items, or the paragraph as one entry. The first is the one the agent goes on with.
func planOf(summary string) []sdk.PlanEntry {
	var section []string
	in := false
	for _, line := range strings.Split(summary, "\n") {
		t := strings.TrimSpace(line)
		if title, rest, ok := heading(t); ok {
			in = strings.EqualFold(title, "Remaining work")
			if in && rest != "" {
				section = append(section, rest)
			}
			continue
		}
		if in && t != "" {
			section = append(section, line)
		}
	}
	var items []string
	for _, l := range section {
		if m := listItem.FindStringSubmatch(l); m != nil {
			items = append(items, m[1])
		}
	}
	if len(items) == 0 && len(section) > 0 {
		items = []string{strings.TrimSpace(strings.Join(section, " "))}
	}
	out := make([]sdk.PlanEntry, 0, len(items))
	for i, it := range items {
		e := sdk.PlanEntry{Content: it, Priority: sdk.PlanEntryPriorityMedium, Status: sdk.PlanEntryStatusPending}
		if i == 0 {
			e.Priority, e.Status = sdk.PlanEntryPriorityHigh, sdk.PlanEntryStatusInProgress
		}
		out = append(out, e)
	}
	return out
}

// heading reads a section title of a summary: "**Remaining work:** text", "## Remaining work"
// or a short "Remaining work:" line; rest is the text after a bold title.
func heading(t string) (title, rest string, ok bool) {
	switch {
	case strings.HasPrefix(t, "#"):
		return strings.TrimSuffix(strings.TrimSpace(strings.TrimLeft(t, "#")), ":"), "", true
	case strings.HasPrefix(t, "**"):
		end := strings.Index(t[2:], "**")
		if end < 0 {
			return "", "", false
		}
		title = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(t[2:2+end]), ":"))
		rest = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(t[2+end+2:]), ":"))
		return title, rest, true
	case strings.HasSuffix(t, ":") && len(t) < 40 && !listItem.MatchString(t):
		return strings.TrimSuffix(t, ":"), "", true
	}
	return "", "", false
}

// planEntries are the agent's own plan (write_todos) as ACP plan entries. ACP has no cancelled
// status: a cancelled item shows as completed, its content saying so. The item in progress is the
// one of high priority.
func planEntries(todos []contextwin.Todo) []sdk.PlanEntry {
	out := make([]sdk.PlanEntry, 0, len(todos))
	for _, t := range todos {
		e := sdk.PlanEntry{Content: t.Description, Priority: sdk.PlanEntryPriorityMedium, Status: sdk.PlanEntryStatusPending}
		switch t.Status {
		case contextwin.TodoInProgress:
			e.Priority, e.Status = sdk.PlanEntryPriorityHigh, sdk.PlanEntryStatusInProgress
		case contextwin.TodoCompleted:
			e.Status = sdk.PlanEntryStatusCompleted
		case contextwin.TodoCancelled:
			e.Content, e.Status = t.Description+" (cancelled)", sdk.PlanEntryStatusCompleted
		}
		out = append(out, e)
	}
	return out
}
