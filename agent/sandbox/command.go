package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Cmd is a command prepared to run supervised, and confined when the sandbox is. The caller sets
// Dir, Env, Stdout, Stderr and WaitDelay on the embedded exec.Cmd, then calls Start and Wait.
type Cmd struct {
	*exec.Cmd
	// VCS is the workspace's version-control and editor entries before the command, when it
	// runs unasked and confined (they are read-only to it): what QuarantineNew compares with.
	VCS    map[string]bool
	status *os.File // read end of the supervisor's report; nil when there is no supervisor
	report *os.File // its write end, handed to the supervisor
	// started finishes Start where the process must exist before it may run: Windows puts the
	// suspended process in its job, then resumes it. Nil elsewhere.
	started func() error
	// ended runs once the command has exited, or failed to start: it kills whatever the command
	// left running where no supervisor does that work (Windows, macOS), or where the supervisor
	// was killed before it could (Linux). killed reports whether Cancel killed the command
	// itself, which Windows's exit status cannot tell.
	ended func() (killed bool)
	// limitHit: ended found that the command met its process bound, which the supervisor killed
	// before its report would have said (Linux).
	limitHit bool
}

// Status is how the command (not its supervisor) ended.
type Status struct {
	Code int // exit status; -1 when killed by a signal
	// Signal is the signal that ended it, if any. Windows has no signals: a command whose job
	// Reprise terminated reports SIGKILL, what the same act is on Unix.
	Signal syscall.Signal
	// Left is how many of its processes were still running when it ended or was stopped, and
	// were killed (the command itself, when it was stopped). Linux only.
	Left int
	// ProcessLimit: it reached the sandbox's process limit (Limits().Processes), so some fork
	// or thread creation failed. Linux only.
	ProcessLimit bool
	// TempFull: it filled its private temp dir past the sandbox's bound (Limits().Temp), so it
	// was killed and the dir emptied. Linux only.
	TempFull bool
	// MemoryLimit: the kernel killed one of its processes at the bound on its memory in all
	// (Limits().Memory). Linux, where a memory cgroup can be made.
	MemoryLimit bool
}

// Signaled reports whether a signal ended the command.
func (s Status) Signaled() bool { return s.Signal != 0 }

// report is the supervisor's one-line message about its child, on fd 3.
type report struct {
	Code   int  `json:"code"`
	Signal int  `json:"signal,omitempty"`
	Left   int  `json:"left,omitempty"`
	Limit  bool `json:"limit,omitempty"`
	// TempFull: the command filled its temp dir past MaxTemp; it was killed, the dir emptied.
	TempFull bool `json:"tempFull,omitempty"`
	// OOM: the kernel killed a process of the command at its memory cgroup's bound.
	OOM bool `json:"oom,omitempty"`
}

// Start starts the command.
func (c *Cmd) Start() error {
	err := c.Cmd.Start()
	if c.report != nil {
		c.report.Close() // the supervisor holds its own copy now
		c.report = nil
	}
	if err != nil && c.status != nil {
		c.status.Close()
		c.status = nil
	}
	if err == nil && c.started != nil {
		if err = c.started(); err != nil {
			_ = c.Cmd.Wait() // started killed it; reap it: the caller will not Wait
		}
	}
	if err != nil && c.ended != nil {
		c.ended()
	}
	return err
}

// Wait waits for the command and returns how it ended. Without a supervisor's report (none on
// this OS, or the supervisor was killed), the status is the process's own.
func (c *Cmd) Wait() (Status, error) {
	err := c.Cmd.Wait()
	killed := c.ended != nil && c.ended()
	var exitErr *exec.ExitError
	ended := errors.As(err, &exitErr) || errors.Is(err, exec.ErrWaitDelay) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) // cancelled, yet it ran
	if err != nil && !ended {
		return Status{Code: -1}, err
	}
	if killed {
		return Status{Code: -1, Signal: syscall.SIGKILL}, nil
	}
	if c.status != nil {
		defer c.status.Close()
		// The supervisor wrote before it exited; nothing else holds the pipe, but never hang on
		// it: a pipe that takes no deadline is not read.
		var b []byte
		if c.status.SetReadDeadline(time.Now().Add(time.Second)) == nil {
			b, _ = io.ReadAll(io.LimitReader(c.status, 256))
		}
		var r report
		if json.Unmarshal(b, &r) == nil && len(b) > 0 {
			st := Status{Code: r.Code, Left: r.Left, ProcessLimit: r.Limit, TempFull: r.TempFull, MemoryLimit: r.OOM}
			if r.Signal != 0 {
				st.Code, st.Signal = -1, syscall.Signal(r.Signal)
			}
			return st, nil
		}
	}
	st := processStatus(c.ProcessState)
	st.ProcessLimit = st.ProcessLimit || c.limitHit
	return st, nil
}

// Command prepares argv to run under the sandbox. Cancelling ctx ends the command and everything
// it started. trust says whether the user approved this very command (see Trust).
func (s *Sandbox) Command(ctx context.Context, trust Trust, argv ...string) (*Cmd, error) {
	if len(argv) == 0 {
		return nil, errors.New("sandbox: empty command")
	}
	sp, vcs := s.spec(trust)
	// They must exist before the rules are made: Landlock grants access to what is there.
	for _, dir := range []string{s.cfg.Cache, sp.TempDir} {
		if sp.Confine && dir != "" {
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return nil, fmt.Errorf("sandbox: create %s: %w", dir, err)
			}
		}
	}
	c, err := command(ctx, sp, argv)
	if c != nil {
		c.VCS = vcs
	}
	return c, err
}
