package lsp

import (
	"os"
	"testing"

	"github.com/reprise-dev/reprise/agent/mcp/mcptest"
	"github.com/reprise-dev/reprise/agent/sandbox/sandboxtest"
)

// TestMain lets the test binary play the sandbox's supervisor for the commands the tests run.
// It is also the MCP server of the MCP tests, when started as one.
func TestMain(m *testing.M) {
	mcptest.Serve()
	os.Exit(sandboxtest.Main(m))
}
