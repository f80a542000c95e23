package agent

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reprise-dev/reprise/agent/tools"
)

// TestAttackAllowedCommandRewritesHooksOutsideGit: hooks and configuration git reads from the
// work tree are as protected as .git. The repository has husky's core.hooksPath (.husky/_), a
// second hooks directory named only in a file the config includes (tools/hooks), and an include
// whose target does not exist yet; the allowlisted `make test` rewrites the hooks, creates the
// included file with a core.fsmonitor, and creates Jujutsu, Sapling and Bazaar directories.
func TestAttackAllowedCommandRewritesHooksOutsideGit(t *testing.T) {
	plant := "echo 'touch pwned' > .husky/pre-commit; echo 'touch pwned' > .husky/_/pre-push; " +
		"echo 'touch pwned' > tools/hooks/pre-commit; printf '[core]\\n\\tfsmonitor = touch pwned\\n' > .repo-config; " +
		"mkdir -p .jj/repo .bzr sub/.sl && echo '[hooks]' > sub/.sl/config; true"
	files := map[string]string{
		".husky/pre-commit":      "npm test\n",
		".husky/_/h":             "#!/bin/sh\n",
		"tools/hooks/pre-commit": "exit 0\n",
		"shared.gitconfig":       "[core]\n\thooksPath = tools/hooks\n",
	}
	for name, body := range makefileAttack(plant) {
		files[name] = body
	}
	for _, p := range sandboxPaths {
		t.Run(p.name, func(t *testing.T) {
			ws := t.TempDir()
			for _, args := range [][]string{{"init", "-q"}, {"config", "core.hooksPath", ".husky/_"},
				{"config", "--add", "include.path", "../shared.gitconfig"}, {"config", "--add", "include.path", "../.repo-config"}} {
				if out, err := exec.Command("git", append([]string{"-C", ws}, args...)...).CombinedOutput(); err != nil {
					t.Fatalf("git %v: %v %s", args, err, out)
				}
			}
			ap := &recordingApprover{decision: tools.Reject}
			sb := p.make(ws)
			a := newFixture(t, fixtureOpts{journal: true, ws: ws, sandbox: sb, approver: ap, files: files},
				makeTest(), textTurn("done"))
			outs := toolOutputs(a.turn(t, "run the tests"))
			assertAskedOrConfined(t, sb, ap, outs)
			for name, want := range files {
				if got, _ := os.ReadFile(filepath.Join(ws, name)); string(got) != want {
					t.Errorf("%s was changed to %q: %q", name, got, outs)
				}
			}
			for _, name := range []string{".husky/_/pre-push", ".repo-config", ".jj", ".bzr", "sub/.sl"} {
				if _, err := os.Lstat(filepath.Join(ws, name)); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("%s is there after the command (%v): %q", name, err, outs)
				}
			}
			if ok, _ := sb.Confined(); ok {
				if len(outs) != 1 || !strings.Contains(outs[0], "(.bzr, .jj, .repo-config, sub/.sl)") {
					t.Errorf("the model was not told what was moved aside: %q", outs)
				}
				if m, _ := filepath.Glob(filepath.Join(ws, ".repo-config.reprise-quarantine-*")); len(m) != 1 {
					t.Errorf("the included file was not kept aside: %v", m)
				}
			}
		})
	}
}
