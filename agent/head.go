package agent

import (
	"context"
	_ "embed"
	"strings"
	"time"

	"github.com/reprise-dev/reprise/agent/tools"
)

// The head is what the system instruction holds besides the short prompt and the workspace's
// instructions: a guide to the tools, then a map of the workspace, sized together so that the
// fixed part of every request reaches the model's cache minimum with a margin. Under that minimum
// no call is cached, whatever the policy: with today's 4,096-token minimum and a fixed part of
// about 1,000 tokens, a session's first calls were all billed in full. The guide never changes,
// the map is built once per session (ReloadInstructions keeps it), and both come before the
// messages, so a clearing or a summary never rewrites them (docs/decisions.md, "A head worth
// caching").

//go:embed toolguide.md
var toolGuide string

// headMargin is the share of the cache minimum the head aims above it: the local estimate of
// the fixed part is not the model's count.
const headMargin = 8

// mapTimeout bounds the walk that builds the map: a slow or huge tree gets no map rather than
// a late first call.
const mapTimeout = 3 * time.Second

// buildHead returns the head of a session: none for a subagent (its own short prompt), a local
// model (no cache to fill), with PlainHead, when the target is more than a quarter of the context
// budget (the messages would have too little room left: every call would cross compactAt and
// clear the result that just aged out), or when the workspace is too small for the
// head to reach the cache minimum; otherwise the guide, and a map that fills what the prompt, the
// instructions, the guide and the tools leave of the target.
func buildHead(o *Options, env *tools.Env, instructions string) head {
	least := o.Catalog.CacheMin(servedBy(o))
	target := float64(least + least/headMargin)
	if o.parent != nil || o.ContextPolicy.PlainHead || isLocal(o.Model) || headShare*target > float64(o.window(o.ContextPolicy)) {
		return head{}
	}
	h := head{guide: "\n\n" + guideFor(o)}
	fixed := buildSystemPrompt(o, instructions, h).estimate()
	// The map is ASCII but for names: a quarter token per character. Under 200 characters, the
	// guide and the instructions reach the target without it.
	chars := int((target - fixed) * 4)
	if chars < 200 {
		return h
	}
	ctx, cancel := context.WithTimeout(context.Background(), mapTimeout)
	defer cancel()
	if m := env.WorkspaceMap(ctx, chars); m != "" {
		h.workmap = "\n\n" + o.Secrets.String(m)
	}
	// A head that stays under the minimum is never cached: it would only make every call dearer.
	est := buildSystemPrompt(o, instructions, h).estimate()
	if est < float64(least+least/headReach) {
		o.Logger.Debug("no head: the workspace is too small for it to reach the cache minimum", "tokens", int(est), "minimum", least)
		return head{}
	}
	o.Logger.Debug("head", "tokens", int(est), "minimum", least, "map", len(h.workmap))
	return h
}

// servedBy is the model that will answer the session's requests, as the catalogue knows it: the
// one a retired model's requests are routed to (gemini-2.5-pro's go to gemini-3.8-flash, whose
// cache minimum is twice as large), else the model asked for. The billing follows the model
// that answered once one has; the head is built before any.
func servedBy(o *Options) string {
	if m, ok := o.Catalog.Lookup(o.ModelName); ok && m.RoutedTo != "" && m.RetiredAt(o.Now()) {
		return m.RoutedTo
	}
	return o.ModelName
}

// guideFor is the tool guide for the session's tools: without subagents, nothing of task.
func guideFor(o *Options) string {
	if !o.Subagents.Off {
		return toolGuide
	}
	var b strings.Builder
	for line := range strings.Lines(toolGuide) {
		if !strings.HasPrefix(line, "- task ") {
			b.WriteString(line)
		}
	}
	return strings.Replace(b.String(), "## Plans, notes and subagents", "## Plans and notes", 1)
}

// headShare: the head takes at most a quarter of the context budget.
const headShare = 4

// headReach: the head is kept only when its estimate passes the minimum by a 32nd of it.
const headReach = 32
