package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackHardLinkOutside: the model links a file outside the workspace into it with a command
// (under --yes), then reads and searches it. In the sandbox the link cannot be made (the workspace
// is a mount of its own); where commands run unconfined it can, and the file tools refuse the
// file for its second name. Either way its content never reaches the model.
func TestAttackHardLinkOutside(t *testing.T) {
	// Under home, as ~/.bashrc is, and the workspace beside it on the same file system: a hard
	// link cannot cross file systems, and the sandbox hides the temp dir.
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	const secret = "s3cr3t-linked-from-outside"
	for _, p := range sandboxPaths {
		t.Run(p.name, func(t *testing.T) {
			outside, err := os.MkdirTemp(home, ".reprise-attack-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(outside) })
			target := filepath.Join(outside, "credentials")
			if err := os.WriteFile(target, []byte("token = "+secret+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			ws := filepath.Join(outside, "ws")
			if err := os.Mkdir(ws, 0o755); err != nil {
				t.Fatal(err)
			}
			f := newFixture(t, fixtureOpts{journal: true, ws: ws, sandbox: p.make(ws), commands: yesPolicy()},
				callTurn("run_command", map[string]any{"command": "ln " + target + " notes.txt", "timeout_s": 10}, ""),
				callTurn("read_file", map[string]any{"path": "notes.txt"}, ""),
				callTurn("search", map[string]any{"pattern": "token"}, ""),
				callTurn("edit_file", map[string]any{"path": "notes.txt", "old": "token", "new": "t"}, ""),
				textTurn("done"))
			outs := toolOutputs(f.turn(t, "go"))
			if len(outs) != 4 {
				t.Fatalf("tool outputs %q", outs)
			}
			for _, o := range outs {
				if strings.Contains(o, secret) {
					t.Errorf("the file outside reached the model: %q", o)
				}
			}
			if _, err := os.Stat(filepath.Join(ws, "notes.txt")); err == nil {
				// The link was made (no sandbox): the tools refuse it for its two names.
				contains(t, outs[1], "refused: notes.txt has 2 names (hard links)")
				contains(t, outs[2], "1 file with more than one name (hard links) not searched")
				contains(t, outs[3], "refused: notes.txt has 2 names")
			} else if ok, _ := f.s.opts.Sandbox.Confined(); !ok {
				t.Errorf("unconfined, the link was not made: %q", outs[0])
			}
			if got, _ := os.ReadFile(target); string(got) != "token = "+secret+"\n" {
				t.Errorf("the file outside changed: %q", got)
			}
		})
	}
}
