package agent

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/contextwin"
)

// TestUserInstructionsSurviveCompactions: a constraint the user gives in turn 2 is in the head,
// byte for byte, after each of three compactions that summarized the turn it came in, whatever
// the summaries say (here they never mention it).
func TestUserInstructionsSurviveCompactions(t *testing.T) {
	const constraint = "Never touch the migrations folder: db/migrations is generated and must stay as it is."
	p := contextwin.DefaultPolicy()
	p.ContextBudget, p.KeepRecentTurns = 5000, 1
	reads := func(from, n int) []geminitest.Turn {
		var out []geminitest.Turn
		for i := from; i < from+n; i++ {
			out = append(out, callTurn("read_file", map[string]any{"path": fmt.Sprintf("notes/%d.txt", i)}, sig))
		}
		return out
	}
	var turns []geminitest.Turn
	turns = append(turns, reads(0, 4)...)
	turns = append(turns, textTurn("read the first four"))
	turns = append(turns, reads(4, 6)...)
	turns = append(turns, textTurn("read six more"))
	turns = append(turns, reads(10, 12)...)
	turns = append(turns, textTurn("read the rest"))
	for range 16 { // the pasted log makes the history larger: more compactions, at times
		turns = append(turns, summaryTurn(summaryText))
	}
	f := newFixture(t, fixtureOpts{policy: p, files: notes(22, 2400)}, turns...)
	before := 0
	// The second request carries a pasted log: the head keeps its start (the constraint) and its
	// end, and the whole of it is saved where the head says.
	pasted := "\nThe log:\n" + strings.Repeat("build step ok\n", 600) + "LAST LINE OF THE LOG"
	for i, ask := range []string{"Read the first four notes.", constraint + " Now read six more notes." + pasted, "Read the rest of the notes."} {
		if _, err := f.run(t.Context(), ask); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			before = len(f.s.Conversation().Checkpoints())
		}
	}
	cps := f.s.Conversation().Checkpoints()
	if after := len(cps) - before; after < 3 {
		t.Fatalf("%d compactions, want at least 3 after the constraint (checkpoints %d)", after, len(cps))
	}
	head := contextwin.HeadText(f.s.Conversation().History()[0])
	if !strings.Contains(head, "- "+constraint+" Now read six more notes.") {
		t.Errorf("the head lost the user's constraint:\n%s", head)
	}
	if strings.Count(head, constraint) != 1 {
		t.Errorf("the constraint appears %d times in the head", strings.Count(head, constraint))
	}
	m := regexp.MustCompile(`the whole request is saved: read_file path="([^"]+)" to read it …\]\n`).FindStringSubmatch(head)
	if m == nil || !strings.Contains(head, "LAST LINE OF THE LOG") || strings.Count(head, "build step ok") > 400 {
		t.Fatalf("the pasted log is not capped in the head, or says not where it is saved:\n%.3000s", head)
	}
	saved, err := os.ReadFile(m[1])
	if err != nil || string(saved) != constraint+" Now read six more notes."+pasted {
		t.Errorf("the saved request (%v) is not the whole of it: %d bytes", err, len(saved))
	}
}
