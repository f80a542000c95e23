//go:build !linux && !darwin && !windows

package sandbox

import (
	"context"
	"os/exec"
	"runtime"
)

func probe(Config) string { return "no sandbox is available on " + runtime.GOOS }

// command runs argv unconfined: the caller asks the user about every command instead.
func command(ctx context.Context, sp spec, argv []string) (*Cmd, error) {
	return &Cmd{Cmd: exec.CommandContext(ctx, argv[0], argv[1:]...)}, nil
}

func supervise([]string) int { return fail("no supervisor on this OS") }

func confine([]string) int { return fail("no confining process on this OS") }

// namespacesUnavailable: nothing is confined here.
func namespacesUnavailable() string { return "no sandbox on this OS" }
