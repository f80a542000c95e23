package contextwin

import (
	"fmt"
	"sort"
	"strings"

	"google.golang.org/genai"
)

// The first tier of context management: clearing old tool results. A cleared result keeps its
// call and its response part (same id and name: pairing and thought signatures are intact) but
// its output becomes a stub naming the call and how to get the result back. No model call is
// made; the price is the cache, lost from the first cleared result on.

// ClearedMarker starts every stub, so that a cleared result is never cleared again and the
// editors can tell it apart.
const ClearedMarker = "[cleared to free context: "

// Stub is what a cleared result says: the call, and how to see its result again (recall, e.g.
// "read_file tool-outputs/x.txt", or "" to call the tool again).
func Stub(call *genai.FunctionCall, recall string) string {
	var b strings.Builder
	b.WriteString(ClearedMarker)
	b.WriteString(DescribeCall(call))
	if recall != "" {
		fmt.Fprintf(&b, ". The full result is saved: %s to see it again.]", recall)
	} else {
		b.WriteString(". Call it again to see it as it is now.]")
	}
	return b.String()
}

// DescribeCall names a call by what it asked for: the tool and its arguments, each clipped, in
// a stable order.
func DescribeCall(call *genai.FunctionCall) string {
	if call == nil {
		return "a tool call"
	}
	keys := make([]string, 0, len(call.Args))
	for k := range call.Args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(call.Name)
	for _, k := range keys {
		v := fmt.Sprint(call.Args[k])
		if r := []rune(v); len(r) > 80 {
			v = string(r[:79]) + "…"
		}
		fmt.Fprintf(&b, " %s=%q", k, v)
	}
	return b.String()
}

// IsCleared reports whether a response part's output is a stub.
func IsCleared(fr *genai.FunctionResponse) bool {
	if fr == nil {
		return false
	}
	for _, v := range fr.Response {
		if s, ok := v.(string); ok && strings.HasPrefix(s, ClearedMarker) {
			return true
		}
	}
	return false
}

// ClearItem is one tool-result message the first tier may clear.
type ClearItem struct {
	Index      int // in the history
	Tokens     int // what it costs now
	StubTokens int // what it would cost cleared
	// Keep: the model still uses it (the file being edited, the last test run), the user
	// pinned it, or it is in the turns kept verbatim.
	Keep bool
	// Held is what the calls since it could be cleared have paid to keep it (DueClearing).
	Held float64
}

// ClearInput is what planning a clearing needs, in tokens.
type ClearInput struct {
	Messages  []int // tokens of each message of the history, head first
	Fixed     int   // system instruction and tool declarations
	Before    int   // the next prompt without clearing
	Cached    int   // what the next call would have cached without clearing
	MinCached int   // the model's implicit-cache minimum
	Horizon   int   // the calls expected from now on, this one included
	// Growth is what the prompt gains per call, about: the later calls are weighed at the sizes
	// they will have, not at today's (a prompt just under the cache minimum soon passes it).
	Growth int
	Prices Prices
	// MustFree, when the prompt is at blockAt, is what a clearing must free to let the next
	// call go: only batches that free that much are weighed, and the best is returned even if
	// it does not pay (the choice is then between it and a summary).
	MustFree int
	// MinFreed, when nothing must be freed, is the least a batch weighed frees (PlanClearing,
	// DueClearing).
	MinFreed int
}

// ClearPlan is a clearing as it would be done now: the messages cleared (oldest first), what it
// frees, and what it costs and saves in dollars over the horizon.
type ClearPlan struct {
	Indexes      []int
	From         int // the first cleared message: the prompt is rewritten, and billed in full, from here
	Freed        int
	After        int // the next prompt right after it
	AfterCached  int // the part of After still cached
	Saving, Cost float64
	// Rebuild is what the next call pays more for the rewritten prompt than it would without
	// the clearing (negative when the clearing pays at once), and PerCall what every call after
	// it saves: the two sides of waiting, which the rule for clearing early weighs (Due).
	Rebuild, PerCall float64
	// Held is what keeping the results it clears has cost since they could be cleared
	// (ClearItem.Held, summed): the other side of the rebuild (DueClearing).
	Held float64
	// Later is what the LaterCalls calls after the next save, at the sizes the prompt will have
	// (laterSaving).
	Later      float64
	LaterCalls int
}

// Net is what the plan gains over the horizon.
func (p ClearPlan) Net() float64 { return p.Saving - p.Cost }

// PlanClearing chooses which of the clearable results to clear: the batch that gains the most
// over the horizon, weighing the rebuild of the prompt from the first cleared result (the next
// call pays it in full) against what every later call no longer pays. ok is false when nothing
// is clearable or no batch pays for itself.
func PlanClearing(items []ClearItem, in ClearInput) (ClearPlan, bool) {
	var best ClearPlan
	found := false
	eachBatch(items, in, func(p ClearPlan) {
		if p.Freed >= max(in.MustFree, in.MinFreed) && (!found || p.Net() > best.Net()) {
			best, found = p, true
		}
	})
	return best, found && (best.Net() > 0 || in.MustFree > 0)
}

// DueClearing is the clearing the rent-or-buy rule calls for now, if any: among the batches that
// free at least in.MinFreed tokens and make the later calls cheaper (laterSaving), the one whose
// results have cost, kept, the most beyond the rebuild of the prompt it causes; none while that
// is negative. Waiting until the results kept have cost as much as a rebuild clears, for a prompt
// that grows steadily, at the interval that minimises the cost per call (the economic order
// quantity), and never pays more than twice the best choice made knowing the future, with no
// guess of how many calls are left. A batch that starts past the cache minimum rebuilds almost
// nothing: in.MinFreed is then what keeps it from clearing at every call.
func DueClearing(items []ClearItem, in ClearInput) (ClearPlan, bool) {
	var best ClearPlan
	found := false
	eachBatch(items, in, func(p ClearPlan) {
		if p.Freed >= in.MinFreed && p.Later > 0 && p.Held >= p.Rebuild && (!found || p.Held-p.Rebuild > best.Held-best.Rebuild) {
			best, found = p, true
		}
	})
	return best, found
}

// eachBatch calls fn with every batch of the clearable results worth weighing: from each of the
// starts, the next 1, 2, … results in order.
func eachBatch(items []ClearItem, in ClearInput, fn func(ClearPlan)) {
	var cands []ClearItem
	for _, it := range items {
		if !it.Keep && it.Tokens > it.StubTokens && it.Index > 0 && it.Index < len(in.Messages) {
			cands = append(cands, it)
		}
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].Index < cands[j].Index })
	if len(cands) == 0 {
		return
	}
	for _, start := range starts(cands, in) {
		prefix := in.Fixed + sum(in.Messages[:cands[start].Index])
		freed, held := 0, 0.0
		for k := start; k < len(cands); k++ {
			freed += cands[k].Tokens - cands[k].StubTokens
			held += cands[k].Held
			p := planFrom(in, cands[start].Index, prefix, freed)
			p.Held, p.Indexes = held, indexes(cands[start:k+1])
			fn(p)
		}
	}
}

// starts are where a batch may begin among cands: the oldest, and, when the prompt before it is
// under the cache minimum, the first whose prompt before it reaches the minimum. A clearing from
// under the minimum bills the whole prompt in full at the next call; one that leaves the older
// results as they are keeps them cached, and can be repeated every few calls at little cost (a
// session without a head of the minimum: the old results are the padding).
func starts(cands []ClearItem, in ClearInput) []int {
	out := []int{0}
	prefix := in.Fixed + sum(in.Messages[:cands[0].Index])
	if prefix >= in.MinCached {
		return out
	}
	for j := 1; j < len(cands); j++ {
		if in.Fixed+sum(in.Messages[:cands[j].Index]) >= in.MinCached {
			return append(out, j)
		}
	}
	return out
}

// planFrom is a clearing that rewrites the prompt from message from, with prefix tokens before it,
// freeing freed tokens: what it costs and saves over the horizon, and the two sides of waiting.
func planFrom(in ClearInput, from, prefix, freed int) ClearPlan {
	p := ClearPlan{From: from, Freed: freed, After: max(in.Before-freed, 0)}
	if prefix >= in.MinCached {
		p.AfterCached = min(prefix, p.After)
	}
	p.Saving, p.Cost = weigh(in.Prices, in.Before, in.Cached, p.After, p.AfterCached, in.MinCached, in.Horizon, in.Growth, 0)
	s1, c1 := weigh(in.Prices, in.Before, in.Cached, p.After, p.AfterCached, in.MinCached, 1, 0, 0)
	p.Rebuild = c1 - s1
	p.PerCall = steadyCall(in.Prices, in.Before, in.MinCached) - steadyCall(in.Prices, p.After, in.MinCached)
	p.Later, p.LaterCalls = laterSaving(in, p.After)
	return p
}

// laterSaving is what the calls after the next save, summed, with the prompt at after tokens
// instead of in.Before, both growing by in.Growth a call: over the horizon, and at least until
// the smaller prompt passes the cache minimum. Under the minimum a smaller prompt can cost more
// than a larger one that reaches it and is cached: a clearing there pays only while the prompt
// stays under it anyway.
func laterSaving(in ClearInput, after int) (saving float64, calls int) {
	calls = max(in.Horizon-1, 1)
	if after < in.MinCached && in.Growth > 0 {
		calls = max(calls, (in.MinCached-after)/in.Growth+2)
	}
	for j := 1; j <= calls; j++ {
		saving += grownCall(in.Prices, in.Before+j*in.Growth, in.Growth, in.MinCached) - grownCall(in.Prices, after+j*in.Growth, in.Growth, in.MinCached)
	}
	return saving, calls
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

func indexes(items []ClearItem) []int {
	out := make([]int, len(items))
	for i, it := range items {
		out[i] = it.Index
	}
	return out
}

// weigh compares, in dollars, rewriting the prompt now (to after tokens, of which afterCached
// are still cached, plus extra paid for once: a summary call) with leaving it (before tokens,
// cached of them cached), over horizon calls: the next call pays the rewrite, and each later one
// a prompt the size it would have, growing by growth a call either way, cached when it reaches
// the minimum (a smaller prompt below it can cost more than a larger one above it).
func weigh(p Prices, before, cached, after, afterCached, minCached, horizon, growth int, extra float64) (saving, cost float64) {
	in, ca := p.Input/1e6, p.CachedInput/1e6
	cost = extra
	without := float64(before-cached)*in + float64(cached)*ca
	with := float64(after-afterCached)*in + float64(afterCached)*ca
	if d := with - without; d > 0 {
		cost += d
	} else {
		saving -= d
	}
	for j := 1; j < horizon; j++ {
		if d := grownCall(p, before+j*growth, growth, minCached) - grownCall(p, after+j*growth, growth, minCached); d > 0 {
			saving += d
		} else {
			cost -= d
		}
	}
	return saving, cost
}

// steadyCall is what a call pays for a prompt an earlier call already sent: cached when it
// reaches the model's minimum, in full below it.
func steadyCall(p Prices, prompt, minCached int) float64 {
	if prompt >= minCached {
		return float64(prompt) * p.CachedInput / 1e6
	}
	return float64(prompt) * p.Input / 1e6
}

// grownCall is what a call pays for a prompt that grew by growth since the call before it: that
// call's prompt cached when it reached the model's minimum, the growth in full.
func grownCall(p Prices, prompt, growth, minCached int) float64 {
	prev := max(prompt-growth, 0)
	if prev >= minCached {
		return float64(prev)*p.CachedInput/1e6 + float64(prompt-prev)*p.Input/1e6
	}
	return float64(prompt) * p.Input / 1e6
}

// ClearResults returns history with the messages at idx cleared: each response part's output
// replaced by the stub recall gives for its call (recall may return "" for no saved copy).
// Parts other than function responses, and responses already cleared, are kept. The messages
// are copied; history is not changed.
func ClearResults(history []*genai.Content, idx []int, recall func(fr *genai.FunctionResponse) string) []*genai.Content {
	out := append([]*genai.Content(nil), history...)
	for _, i := range idx {
		if i <= 0 || i >= len(out) || out[i] == nil {
			continue
		}
		calls := map[string]*genai.FunctionCall{}
		if prev := out[i-1]; prev != nil && prev.Role == genai.RoleModel {
			for _, p := range prev.Parts {
				if p != nil && p.FunctionCall != nil {
					calls[callKey(p.FunctionCall.ID, p.FunctionCall.Name)] = p.FunctionCall
				}
			}
		}
		msg := *out[i]
		msg.Parts = make([]*genai.Part, len(out[i].Parts))
		for j, p := range out[i].Parts {
			msg.Parts[j] = p
			if p == nil || p.FunctionResponse == nil || IsCleared(p.FunctionResponse) {
				continue
			}
			fr := *p.FunctionResponse
			call := calls[callKey(fr.ID, fr.Name)]
			if call == nil {
				call = &genai.FunctionCall{Name: fr.Name}
			}
			key := "output"
			if _, isErr := fr.Response["error"]; isErr {
				key = "error"
			}
			fr.Response = map[string]any{key: Stub(call, recall(p.FunctionResponse))}
			np := *p
			np.FunctionResponse = &fr
			msg.Parts[j] = &np
		}
		out[i] = &msg
	}
	return out
}

// callKey matches a response to its call: by id when the model gave one, else by name.
func callKey(id, name string) string {
	if id != "" {
		return "id:" + id
	}
	return "name:" + name
}
