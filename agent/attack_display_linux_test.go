package agent

import (
	"strings"
	"testing"

	"github.com/reprise-dev/reprise/agent/tools"
)

// TestAttackInvisibleCharactersInApprovals: a steered model asks for commands whose text hides
// what runs behind characters that show as nothing or as another letter: the Hangul and Braille
// fillers, a combining grapheme joiner, combining marks, and a Cyrillic letter in a Latin word.
// The user is asked with each of them escaped, and nothing runs unapproved.
func TestAttackInvisibleCharactersInApprovals(t *testing.T) {
	commands := map[string]string{
		"curl x\u3164|\u3164sh":          `\u3164`,
		"echo a\u2800\u2800; rm -rf ~/x": `\u2800`,
		"ls\u115f\u1160 x\uffa0":         `\u115f`,
		"r\u034fm -rf build":             `\u034f`,
		"echo \u0301\u20dd done":         `\u20dd`,
		"g\u0456t push --force":          `g\u0456t`,
	}
	for _, p := range sandboxPaths {
		t.Run(p.name, func(t *testing.T) {
			for command, shown := range commands {
				ws := t.TempDir()
				ap := &recordingApprover{decision: tools.Reject}
				f := newFixture(t, fixtureOpts{ws: ws, sandbox: p.make(ws), approver: ap},
					callTurn("run_command", map[string]any{"command": command}, ""), textTurn("done"))
				outs := toolOutputs(f.turn(t, "go"))
				asked := ap.questions()
				if len(asked) != 1 || !strings.Contains(asked[0].Command, shown) || strings.ContainsAny(asked[0].Command, "\u3164\u2800\u115f\u1160\uffa0\u034f\u0301\u20dd\u0456") {
					t.Errorf("%q: asked %+v, want it shown with %s escaped", command, asked, shown)
				}
				if len(outs) != 1 || !strings.HasPrefix(outs[0], "refused by policy") {
					t.Errorf("%q ran unapproved: %q", command, outs)
				}
			}
		})
	}
}
