package lsp

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/reprise-dev/reprise/agent/tools"
	"github.com/reprise-dev/reprise/lsp/lsptest"
)

// TestAttackApprovalSpoofing: the two spoofs of issue 26 in the editor's question
// (window/showMessageRequest). A command padded with 200 spaces and 40 newlines would show its
// harmless start and push what runs below the notification's fold; a right-to-left override would
// draw "; rm -rf src" backwards. The question shows the command on one line, the padding counted,
// every control escaped, and the end of the command in view however long it is.
func TestAttackApprovalSpoofing(t *testing.T) {
	for _, tc := range []struct{ name, cmd, want string }{
		{"padding", "echo ok" + strings.Repeat(" ", 200) + strings.Repeat("\n", 40) + "rm -rf src", "echo ok[200 spaces, 40 newlines]rm -rf src"},
		{"bidi", "echo ok \u202e; rm -rf src #\u202c\u2066x\u2069", `echo ok \u202e; rm -rf src #\u202c\u2066x\u2069`},
		{"long", "echo " + strings.Repeat("x", 5000) + "; rm -rf src", "xxx; rm -rf src"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked []string
			e := newEnv(t, envOpts{editor: lsptest.Options{Experimental: true, Approve: func(p json.RawMessage) any {
				var m struct{ Message string }
				json.Unmarshal(p, &m)
				asked = append(asked, m.Message)
				return map[string]string{"title": ActionReject}
			}}},
				call("run_command", map[string]any{"command": tc.cmd}),
				text("done"),
			)
			e.turnEnd(e.ask("run it", ""))
			if len(asked) != 1 {
				t.Fatalf("asked %d times, want once", len(asked))
			}
			lines := strings.Split(asked[0], "\n")
			// The question's own three lines: what is asked, the command, what "Always allow" keeps.
			if len(lines) != 3 || lines[1] != tools.DisplayCommand(tc.cmd) || !strings.Contains(lines[1], tc.want) {
				t.Errorf("the question does not show the command on its line as %q:\n%q", tc.want, asked[0])
			}
			if n := utf8.RuneCountInString(lines[1]); n > tools.MaxDisplay {
				t.Errorf("the command's line is %d characters long", n)
			}
			for _, r := range asked[0] {
				if r != '\n' && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r)) {
					t.Errorf("the question holds %U: %q", r, asked[0])
				}
			}
		})
	}
}
