// Command reprise is an editor backend for an AI coding agent on Gemini: `reprise serve --stdio`
// for editors, `reprise run` headless, `reprise demo` offline.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/reprise-dev/reprise/agent/sandbox"
)

const usage = `reprise — an editor backend for an AI coding agent (Gemini)

Usage:
  reprise serve [--stdio]      the editor backend: JSON-RPC with LSP framing on stdin/stdout
  reprise acp [flags]          an Agent Client Protocol agent on stdin/stdout (Zed, JetBrains, …)
  reprise run [flags] "task"   run the agent headless on a workspace and print the turn table
  reprise demo                 the same, offline: a sample workspace and a scripted model
  reprise sessions [list | show ID | checkpoints ID [N] | fork ID | export ID]   saved sessions of this workspace
  reprise models [--all]       the models this key can use, with prices, cache minimum, thinking
  reprise bench                measure start-up, memory, throughput and the demo's token savings
  reprise doctor cache         measure the model's caching with your key (a few cents): its minimum,
                               its hit rate, implicit hits beside an explicit cache; sessions use it
  reprise version              print the version, the commit and the Go version

Every command takes -h or --help ("reprise run -h" lists the flags of a run). The model is
configured by GEMINI_API_KEY (or GOOGLE_API_KEY, or Vertex AI's GOOGLE_GENAI_USE_VERTEXAI/
GOOGLE_CLOUD_PROJECT/GOOGLE_CLOUD_LOCATION) and GOOGLE_GEMINI_BASE_URL.
`

// errUsage marks a command-line mistake: exit code 2, like the flag package.
var errUsage = errors.New("usage")

func main() {
	sandbox.Init() // first: the binary may have been started as a command's supervisor
	if len(os.Args) > 1 && os.Args[1] == "gocacheprog" {
		os.Exit(gocacheprogCmd(os.Args[2:], os.Stdin, os.Stdout, os.Stderr)) // started by a sandboxed go command
	}
	// Sandboxed go commands read the user's build cache through this binary (sandbox/gocache.go).
	if exe, err := os.Executable(); err == nil {
		sandbox.SetGoCacheProgram(exe, "gocacheprog")
	}
	// The supervisor above never gets here: its environment has no key, and the command it execs
	// is dumpable again anyway.
	if err := makeUndumpable(); err != nil {
		fmt.Fprintln(os.Stderr, "reprise: warning: other processes of this user can read this one's memory and environment:", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}

// run dispatches a subcommand and returns the exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	// What the CLI prints comes from the model, tools and saved sessions as much as from Reprise:
	// all of it is made inert before it reaches a terminal. serve's stdout is the protocol, where
	// JSON escapes control characters itself.
	stderr = inertWriter{stderr}
	if args[0] != "serve" && args[0] != "acp" {
		stdout = inertWriter{stdout}
	}
	if args[0] == "run" || args[0] == "serve" || args[0] == "acp" {
		useFindings(getenv, stderr)
	}
	var err error
	switch args[0] {
	case "doctor":
		err = doctorCmd(ctx, args[1:], stdin, stdout, stderr, getenv)
	case "run":
		err = runCmd(ctx, args[1:], stdin, stdout, stderr, getenv)
	case "serve":
		err = serveCmd(ctx, args[1:], stdin, stdout, stderr, getenv)
	case "acp":
		err = acpCmd(ctx, args[1:], stdin, stdout, stderr, getenv)
	case "demo":
		if askedHelp(args[1:]) {
			err = demoHelp(ctx, stdout, getenv)
			break
		}
		err = demoCmd(ctx, args[1:], stdout, stderr, getenv)
	case "sessions":
		err = sessionsCmd(args[1:], stdout, stderr, getenv)
	case "models":
		err = modelsCmd(ctx, args[1:], stdout, stderr, getenv)
	case "bench":
		err = benchMain(ctx, args[1:], stdout, stderr)
	case "version", "--version", "-v":
		if askedHelp(args[1:]) {
			fmt.Fprint(stdout, "Usage: reprise version\n\nPrints the version, the commit and the Go version Reprise was built with.\n")
			break
		}
		fmt.Fprintln(stdout, currentBuild())
	case "help", "-h", "--help":
		if len(args) > 1 && args[0] == "help" && args[1] != "help" {
			// reprise help run: run's help, as git and go say it.
			return run(ctx, []string{args[1], "--help"}, stdin, stdout, stderr, getenv)
		}
		fmt.Fprint(stdout, usage)
	default:
		what := "command"
		if strings.HasPrefix(args[0], "-") {
			what = "flag"
		}
		fmt.Fprintf(stderr, "reprise: unknown %s %q\nSee 'reprise --help'.\n", what, args[0])
		return 2
	}
	switch {
	case err == nil, errors.Is(err, errHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	case errors.Is(err, errExit1):
		return 1
	default:
		fmt.Fprintln(stderr, "reprise:", err)
		return 1
	}
}
