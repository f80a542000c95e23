// Package mcptest is a small MCP server built with the official SDK, for the tests of the
// packages that run MCP servers (the server, the CLI): a test binary becomes the server when
// started with Env set, so that tests run a real stdio server without building anything.
package mcptest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Env names the variable that, set to "stdio" in a test binary's environment, makes Serve run
// the server.
const Env = "REPRISE_MCPTEST_SERVER"

// LeakEnv names a variable whose value the leak tool returns: a test sets it to a secret and
// checks that the model never gets it.
const LeakEnv = "REPRISE_MCPTEST_LEAK"

type textIn struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

type linesIn struct {
	Lines int `json:"lines" jsonschema:"how many lines to print"`
}

type addIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

type addOut struct {
	Sum int `json:"sum"`
}

// NewServer is the server: echo, add, lines (a long output), leak (a secret in its output) and
// pid (its process id, to kill it).
func NewServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "reprise-mcptest", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes its text."},
		func(_ context.Context, _ *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, any, error) {
			return text("echo: " + in.Text), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Adds a and b."},
		func(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, addOut, error) {
			return nil, addOut{Sum: in.A + in.B}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "lines", Description: "Prints numbered lines."},
		func(_ context.Context, _ *mcp.CallToolRequest, in linesIn) (*mcp.CallToolResult, any, error) {
			var b strings.Builder
			for i := 1; i <= in.Lines; i++ {
				fmt.Fprintf(&b, "line %d of the report\n", i)
			}
			return text(b.String()), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "leak", Description: "Prints a configuration value."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return text("the token is " + os.Getenv(LeakEnv)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "pid", Description: "Prints the server's process id."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return text(fmt.Sprint(os.Getpid())), nil, nil
		})
	return s
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// Serve runs the server over stdin and stdout and exits when Env asks for it; otherwise it
// returns at once. Call it first in TestMain.
func Serve() {
	if os.Getenv(Env) != "stdio" {
		return
	}
	if err := NewServer().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "mcptest:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// JSON configures the running test binary as a stdio server, as an entry of an mcp.json
// "servers" object, with extra environment variables.
func JSON(env map[string]string) map[string]any {
	e := map[string]any{Env: "stdio"}
	for k, v := range env {
		e[k] = v
	}
	return map[string]any{"type": "stdio", "command": os.Args[0], "env": e}
}

// RequireAllEnv names the variable that, set to "1", turns the skip of a test whose outside
// dependency (node, the reference MCP server) is missing into a failure. scripts/test sets it: it
// installs them, so a missing one there is a broken install step, not a machine with only Go.
const RequireAllEnv = "REPRISE_REQUIRE_ALL"

// Everything returns the script of the reference server @modelcontextprotocol/server-everything,
// which scripts/setup installs: $REPRISE_MCP_EVERYTHING, or its place in the npm cache
// ($REPRISE_NPM_CACHE, else ~/.cache/reprise-npm). Without node or the server, t is skipped with
// the line that installs them (failed under REPRISE_REQUIRE_ALL=1): `go test ./...` needs only Go.
func Everything(t testing.TB) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		missing(t, "node is not on PATH: install Node.js 20 or later, then run scripts/setup")
	}
	path, err := everythingPath()
	if err != nil {
		missing(t, fmt.Sprintf("the reference MCP server is not installed: run scripts/setup, or set REPRISE_MCP_EVERYTHING to its dist/index.js (%v)", err))
	}
	return path
}

// missing skips t for a dependency that is not installed, or fails it under RequireAllEnv.
func missing(t testing.TB, why string) {
	t.Helper()
	if os.Getenv(RequireAllEnv) == "1" {
		t.Fatalf("%s (%s=1: the dependencies were to be installed)", why, RequireAllEnv)
	}
	t.Skip(why)
}

func everythingPath() (string, error) {
	path := os.Getenv("REPRISE_MCP_EVERYTHING")
	if path == "" {
		cache := os.Getenv("REPRISE_NPM_CACHE")
		if cache == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", err
			}
			cache = filepath.Join(home, ".cache", "reprise-npm")
		}
		path = filepath.Join(cache, "mcp-everything", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	}
	if _, err := os.Stat(path); err != nil {
		return "", err
	}
	return path, nil
}
