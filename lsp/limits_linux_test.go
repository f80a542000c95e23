package lsp

import (
	"os"
	"strings"
	"testing"

	"github.com/reprise-dev/reprise/agent/sandbox"
	"github.com/reprise-dev/reprise/lsp/lsptest"
)

// TestAttackSandboxNoProcessLimit: as root in a container whose cgroups are read-only, commands
// ran with no process limit and only Sandbox.Limits knew it. The user is warned once per
// connection (window/showMessage, and the log). An ordinary user keeps RLIMIT_NPROC there: no
// warning.
func TestAttackSandboxNoProcessLimit(t *testing.T) {
	t.Setenv(sandbox.NoCgroupEnv, "simulated: read-only cgroups")
	e := newEnv(t, envOpts{editor: lsptest.Options{Experimental: true}}, text("one"), text("two"))
	for _, prompt := range []string{"one", "two"} {
		e.turnEnd(e.ask(prompt, ""))
	}
	want := 0
	if os.Getuid() == 0 {
		want = 1
	}
	var told int
	for _, raw := range e.ed.Notifications("window/showMessage") {
		if strings.Contains(string(raw), "without a process limit") && strings.Contains(string(raw), sandbox.NoCgroupEnv) {
			told++
		}
	}
	if told != want {
		t.Errorf("told %d times that commands get no process limit (uid %d), want %d", told, os.Getuid(), want)
	}
}
