// Package sandboxtest sets up a test binary whose tests run commands: it plays the sandbox's
// supervisor (sandbox.Init), is as undumpable as the real binary, and gives the sandbox a cache
// directory of its own, removed at the end, so that tests leave no build cache per workspace in
// the user's ~/.cache.
package sandboxtest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/reprise-dev/reprise/agent/sandbox"
)

// Main is TestMain's body: os.Exit(sandboxtest.Main(m)).
func Main(m *testing.M) int {
	sandbox.Init()
	if err := undumpable(); err != nil {
		fmt.Fprintln(os.Stderr, "sandboxtest:", err)
		return 1
	}
	if os.Getenv("REPRISE_TEST_KEEP_CACHE") == "" {
		// Go's own build cache stays where `go test` found it: a test that builds the binary
		// (go build) would otherwise start from an empty cache, 40 s on two cores.
		if os.Getenv("GOCACHE") == "" {
			if d, err := os.UserCacheDir(); err == nil {
				if err := os.Setenv("GOCACHE", filepath.Join(d, "go-build")); err != nil {
					fmt.Fprintln(os.Stderr, "sandboxtest:", err)
					return 1
				}
			}
		}
		dir, err := os.MkdirTemp("", "reprise-test-cache-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "sandboxtest:", err)
			return 1
		}
		defer os.RemoveAll(dir)
		if err := os.Setenv("XDG_CACHE_HOME", dir); err != nil {
			fmt.Fprintln(os.Stderr, "sandboxtest:", err)
			return 1
		}
	}
	return m.Run()
}
