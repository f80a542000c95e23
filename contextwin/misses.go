package contextwin

import (
	"fmt"
	"maps"
	"strings"

	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// MissCause says why a loop call read less from the implicit cache than a call that repeats its
// predecessor's prompt would: what the agent did (a rewrite, a prefix under the minimum), where
// the session stood (its first call, a resume), or the cache itself (idle, or a best-effort miss).
type MissCause string

// The causes, in the order they are told.
const (
	MissFirst       MissCause = "first"       // the session's first call: nothing was sent before it
	MissResume      MissCause = "resume"      // the first call of a resumed or forked session
	MissRewritten   MissCause = "rewritten"   // a clearing, a summary or a note changed an early message
	MissTools       MissCause = "tools"       // the instructions or the tools' declarations changed
	MissBelow       MissCause = "below"       // the prefix shared with the last call is under the minimum
	MissIdle        MissCause = "idle"        // expected, after the cache had been idle past its life
	MissUnexplained MissCause = "unexplained" // expected, and not reported: the cache is best-effort
)

var missCauses = []MissCause{MissFirst, MissResume, MissRewritten, MissTools, MissBelow, MissIdle, MissUnexplained}

// Misses counts a session's uncached loop calls by cause: those that read nothing from the
// implicit cache, and those that read less than they were expected to.
type Misses struct {
	Calls map[MissCause]int `json:"calls,omitempty"`
}

// add counts one more miss of cause c. The map is copied first: Totals are handed out by value
// (events, usage, a subagent's figures read by its parent while it runs), and a copy must never
// see the live count change under it.
func (m *Misses) add(c MissCause) {
	if c == "" {
		return
	}
	calls := maps.Clone(m.Calls)
	if calls == nil {
		calls = map[MissCause]int{}
	}
	calls[c]++
	m.Calls = calls
}

// Total is the number of uncached calls.
func (m Misses) Total() int {
	n := 0
	for _, v := range m.Calls {
		n += v
	}
	return n
}

// Text is the misses as users read them, "3 uncached calls: 1 first call, 1 after a clearing or
// summary, 1 under the 4,096-token minimum", the causes in their order; "" without any. cacheMin
// is the session's model's minimum, 0 when unknown.
func (m Misses) Text(cacheMin int) string {
	if m.Total() == 0 {
		return ""
	}
	words := map[MissCause]string{
		MissFirst:       "first call",
		MissResume:      "first after a resume",
		MissRewritten:   "after a clearing or summary",
		MissTools:       "after the tools or instructions changed",
		MissBelow:       "under the cache minimum",
		MissIdle:        "after the cache idled out",
		MissUnexplained: "missed by the API (best-effort)",
	}
	if cacheMin > 0 {
		words[MissBelow] = fmt.Sprintf("under the %s-token minimum", catalog.Commas(cacheMin))
	}
	var parts []string
	for _, c := range missCauses {
		if n := m.Calls[c]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, words[c]))
		}
	}
	n := m.Total()
	return fmt.Sprintf("%d uncached %s: %s", n, plural(n, "call", "calls"), strings.Join(parts, ", "))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
