package agent

import (
	"os"
	"testing"

	"github.com/reprise-dev/reprise/agent/sandbox/sandboxtest"
)

// TestMain lets the test binary play the sandbox's supervisor for the commands the tests run.
func TestMain(m *testing.M) {
	os.Exit(sandboxtest.Main(m))
}
