package tools

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent/cmdpolicy"
	"github.com/reprise-dev/reprise/agent/sandbox"
	"github.com/reprise-dev/reprise/agent/secret"
)

// waitDelay bounds how long output is still read once the command is over and its process group
// (Windows: job) killed: only a process that left it (setsid) can hold the pipe open that long.
const waitDelay = 2 * time.Second

var runCommandTool = tool{
	decl: func() *genai.FunctionDeclaration {
		return &genai.FunctionDeclaration{
			Description: shellIntro() + " in the workspace; stdout+stderr merged, long output " +
				"cut in the middle. Commands outside an allowlist need the user's approval. " +
				"Background processes are killed when it ends." + sandboxNote,
			ParametersJsonSchema: object(map[string]any{
				"command":   prop("string", "The command line."),
				"timeout_s": prop("integer", "Default 120, max 600."),
			}, "command"),
		}
	},
	run: runCommand,
	describe: func(a *args) string {
		c, _ := a.str("command", false)
		return "Run " + strings.Join(strings.Fields(c), " ")
	},
	kind: KindExecute,
}

// runCommand asks the policy (and maybe the user), then runs the command in the sandbox with stdin
// from the null device. Everything it started is killed with SIGKILL (on Windows, its job is
// terminated), at once, on timeout or cancellation — a test runner gets no grace, the turn is
// waiting — and also when the shell exits, so nothing the command started in the background
// (setsid included) outlives the call.
// Output streams through a capture: memory stays bounded whatever it prints.
//
// A denied command and one the user did not approve both return "refused by policy: COMMAND",
// the seed's wording; the model needs no more to choose another way, and a user's refusal is
// the policy of this session.
func runCommand(ctx context.Context, env *Env, call Call, a *args) Result {
	command, _ := a.str("command", true)
	timeoutS, hasTimeout := a.num("timeout_s")
	if a.problem != "" {
		return failure(a.problem)
	}
	if strings.TrimSpace(command) == "" {
		return failure("command is empty")
	}
	timeout := env.DefaultTimeout
	if hasTimeout {
		if timeoutS <= 0 {
			return failure(fmt.Sprintf("argument \"timeout_s\" must be > 0, got %v", timeoutS))
		}
		timeout = time.Duration(math.Min(timeoutS, MaxTimeout.Seconds()) * float64(time.Second))
	}
	res, trust, ok := env.authorize(ctx, call, command)
	if !ok {
		return res
	}

	c := env.newCaptureFor(call, "run_command")
	c.live = call.Live
	sb := env.sandbox()
	run := execute(ctx, sb, trust, env.Workspace, shellArgv(command), timeout, c)
	res = Result{Command: command, ExitCode: run.exitCode}
	var status string
	switch {
	case run.startErr != nil:
		status = fmt.Sprintf("could not start: %v", run.startErr)
		res.IsError = true
	case run.timedOut:
		status = "timed out after " + seconds(timeout)
		res.IsError, res.TimedOut = true, true
	case run.cancelled:
		status = "cancelled"
		res.IsError = true
	case run.signal != "":
		status = "killed by signal " + run.signal
		res.IsError = true
	default:
		status = fmt.Sprintf("exit status %d", run.exitCode)
		res.IsError = run.exitCode != 0
	}
	out := env.present(c, &res)
	if run.pipeHeld {
		out = lineEnded(out) + "[output cut: a process that left the command's group kept it open]"
	}
	if run.processLimit {
		limits, _ := sb.Limits()
		out = lineEnded(out) + fmt.Sprintf("[the command reached the sandbox's limit of %d processes and threads: forks past it failed, and all %d of its processes were killed when it ended]", limits.Processes, run.left)
	}
	if run.memoryLimit {
		limits, _ := sb.Limits()
		out = lineEnded(out) + fmt.Sprintf("[the command's processes reached the sandbox's memory bound of %s bytes in all: the kernel killed one of them]", commas(limits.Memory))
	}
	if run.tempFull {
		limits, _ := sb.Limits()
		out = lineEnded(out) + fmt.Sprintf("[the command filled its private temp dir (/tmp) past the sandbox's bound of %s bytes: it was killed, and the temp dir emptied]", commas(limits.Temp))
	}
	if run.vcs != nil { // unasked and confined: what it created is moved aside
		if moved := sb.QuarantineNew(run.vcs); len(moved) > 0 {
			out = lineEnded(out) + fmt.Sprintf("[refused: the command created version-control metadata or editor settings (%s); moved aside to *.reprise-quarantine-*: hooks and settings there would run outside the sandbox. Ask the user to run it if it is needed.]", strings.Join(moved, ", "))
		}
	}
	res.Output = lineEnded(out) + status
	return res
}

// authorize applies the policy, asking the Approver when it says so. trust says whether the user
// approved this command (now, or with an earlier "Always allow"). ok is false when the
// command must not run; res is then the result to return.
func (e *Env) authorize(ctx context.Context, call Call, command string) (res Result, trust sandbox.Trust, ok bool) {
	policy := e.Commands
	if policy == nil {
		policy = cmdpolicy.New(nil, nil)
	}
	refused := failure("refused by policy: " + command)
	refused.Refused, refused.Command, refused.ExitCode = true, command, -1
	v := policy.CheckIn(e.Workspace, command)
	if v.Allowlisted() {
		// The allowlist trusts builds and tests because the sandbox confines them; without it they
		// run workspace code with the user's rights, so each is asked.
		if sb := e.sandbox(); sb.Mode() == sandbox.WorkspaceWrite {
			if ok, why := sb.Confined(); !ok {
				v = cmdpolicy.Verdict{Action: cmdpolicy.Ask, Reason: "commands cannot be sandboxed here (" + why + ")"}
			}
		}
	}
	switch v.Action {
	case cmdpolicy.Allow:
		if v.Approved() {
			return Result{}, sandbox.Approved, true
		}
		return Result{}, sandbox.Unasked, true
	case cmdpolicy.Deny:
		return refused, sandbox.Unasked, false
	}
	if e.Approver == nil {
		return refused, sandbox.Unasked, false
	}
	d, err := e.Approver.Approve(ctx, ApprovalRequest{CallID: call.ID, Command: e.Secrets.String(command),
		Reason: v.Reason, Rule: e.Secrets.String(policy.RuleFor(command))}.displayed())
	if err != nil && ctx.Err() != nil {
		r := failure("cancelled")
		r.Command, r.ExitCode = command, -1
		return r, sandbox.Unasked, false
	}
	switch {
	case err != nil:
		return refused, sandbox.Unasked, false
	case d == AlwaysAllow:
		policy.AllowAlways(command)
		return Result{}, sandbox.Approved, true
	case d == AllowOnce:
		return Result{}, sandbox.Approved, true
	}
	return refused, sandbox.Unasked, false
}

// ran is how a command ended.
type ran struct {
	vcs       map[string]bool // the version-control snapshot of an unasked confined command
	exitCode  int
	signal    string // set when a signal we did not send ended it
	timedOut  bool
	cancelled bool
	pipeHeld  bool // reading stopped after waitDelay: the pipe outlived the command
	startErr  error
	// left is how many of its processes were killed when it ended (or was stopped);
	// processLimit says it met the sandbox's process limit.
	left         int
	processLimit bool
	tempFull     bool // it filled the private temp dir past its bound
	memoryLimit  bool // a process was killed at the memory bound of the tree
}

var errTimedOut = errors.New("timed out")

// execute runs argv under sb and streams its output into c until every writer is gone. The
// sandbox (its supervisor, or the OS's process group or job) kills whatever the command left
// running once it ends, and everything on timeout or cancellation.
func execute(ctx context.Context, sb *sandbox.Sandbox, trust sandbox.Trust, dir string, argv []string, timeout time.Duration, c *capture) (r ran) {
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stopped := func() ran {
		timedOut := errors.Is(context.Cause(runCtx), errTimedOut)
		return ran{exitCode: -1, cancelled: !timedOut, timedOut: timedOut}
	}
	pr, pw, err := outputPipe()
	if err != nil {
		return ran{exitCode: -1, startErr: err}
	}
	defer pr.Close()
	cmd, err := sb.Command(runCtx, trust, argv...)
	if err != nil {
		pw.Close()
		return ran{exitCode: -1, startErr: err}
	}
	defer func() { r.vcs = cmd.VCS }()
	// The timeout runs from here: preparing the sandbox (its one-time probe, the walk for
	// version-control directories) is not the command's time.
	timer := time.AfterFunc(timeout, func() { cancel(errTimedOut) })
	defer timer.Stop()
	cmd.Dir = dir
	cmd.Env = sb.Env(commandEnv())
	cmd.Stdout, cmd.Stderr = pw, pw // an *os.File: no copying goroutine, we read pr ourselves
	cmd.WaitDelay = waitDelay
	err = cmd.Start()
	pw.Close()
	if err != nil {
		if runCtx.Err() != nil {
			return stopped()
		}
		return ran{exitCode: -1, startErr: err}
	}
	c.live.start()

	read := make(chan error, 1)
	go func() { // ends at EOF, when every holder of the pipe is gone, or at the deadline below
		_, err := c.ReadFrom(pr)
		read <- err
	}()
	st, err := cmd.Wait()
	if err != nil {
		pr.Close()
		if rerr := <-read; rerr != nil && !errors.Is(rerr, os.ErrClosed) {
			err = errors.Join(err, rerr)
		}
		return ran{exitCode: -1, startErr: err}
	}
	if pr.SetReadDeadline(time.Now().Add(waitDelay)) != nil {
		pr.Close() // a pipe without deadlines could be held open for ever: stop reading now
	}
	readErr := <-read

	r = ran{exitCode: st.Code, pipeHeld: errors.Is(readErr, os.ErrDeadlineExceeded), left: st.Left, processLimit: st.ProcessLimit, tempFull: st.TempFull, memoryLimit: st.MemoryLimit}
	if st.Signaled() {
		if runCtx.Err() != nil {
			s := stopped()
			s.left, s.processLimit, s.tempFull, s.memoryLimit = st.Left, st.ProcessLimit, st.TempFull, st.MemoryLimit
			return s
		}
		r.signal = st.Signal.String()
	}
	return r
}

// commandEnv is the server's environment without its credentials: they would otherwise be one
// `env` away from the transcript, which is written to disk.
func commandEnv() []string { return secret.WithoutCredentials(os.Environ()) }

func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}
