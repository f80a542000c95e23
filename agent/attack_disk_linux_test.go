package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reprise-dev/reprise/agent/sandbox"
	"github.com/reprise-dev/reprise/agent/tools"
)

// TestAttackAllowedCommandFillsTheDisk: an unasked `make test` writes its temp dir past the
// sandbox's bound (a loop that would fill the disk): it is killed, the dir emptied, the model told;
// the session's temp dir is gone once the session ends, and nothing is left in the cache.
func TestAttackAllowedCommandFillsTheDisk(t *testing.T) {
	for _, p := range sandboxPaths {
		t.Run(p.name, func(t *testing.T) {
			ws, cache := t.TempDir(), t.TempDir()
			cfg := sandbox.Config{Mode: sandbox.WorkspaceWrite, Workspace: ws, Cache: cache, MaxTemp: 16 << 20}
			sb := sandbox.New(cfg)
			if p.name == "unavailable" {
				sb = sandbox.Unavailable(cfg, "simulated: Landlock missing")
			}
			ap := &recordingApprover{decision: tools.Reject}
			f := newFixture(t, fixtureOpts{journal: true, ws: ws, sandbox: sb, approver: ap,
				files: makefileAttack("echo start > $$TMPDIR/marker; while :; do head -c 1000000 /dev/zero >> $$TMPDIR/fill; done")},
				makeTest(), textTurn("done"))
			outs := toolOutputs(f.turn(t, "run the tests"))
			assertAskedOrConfined(t, sb, ap, outs)
			if ok, _ := sb.Confined(); !ok {
				return
			}
			if len(outs) != 1 || !strings.Contains(outs[0], "filled its private temp dir (/tmp) past the sandbox's bound of 16,777,216 bytes: it was killed") {
				t.Fatalf("tool outputs %q", outs)
			}
			tmps, _ := filepath.Glob(filepath.Join(cache, "tmp", "*"))
			if len(tmps) != 1 || filepath.Base(tmps[0]) != f.s.ID() {
				t.Fatalf("temp dirs %v, want the session's", tmps)
			}
			if left, _ := os.ReadDir(tmps[0]); len(left) != 0 {
				t.Errorf("the temp dir holds %d entries after the kill", len(left))
			}
			f.s.Close()
			if _, err := os.Stat(tmps[0]); !os.IsNotExist(err) {
				t.Errorf("the session's temp dir outlived it: %v", err)
			}
		})
	}
}
