package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// self is the running binary, even if it was replaced or deleted since it started.
const self = "/proc/self/exe"

// command runs argv as: supervisor → confining process → argv (or supervisor → argv with the
// sandbox off). The supervisor is in a process
// group of its own; cancelling asks it (SIGTERM) to kill everything below it, and WaitDelay's kill
// is the backstop. Pdeathsig makes a supervisor whose server died clean up the same way.
func command(ctx context.Context, sp spec, argv []string) (*Cmd, error) {
	if !initialized {
		return nil, ErrNotInitialized
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	args := append([]string{superviseArg, encodeSpec(sp), "--"}, argv...)
	cmd := exec.CommandContext(ctx, self, args...)
	cmd.Args[0] = "reprise-sandbox"
	cmd.ExtraFiles = []*os.File{w} // fd 3
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	cmd.Cancel = func() error {
		err := cmd.Process.Signal(syscall.SIGTERM)
		if errors.Is(err, os.ErrProcessDone) {
			return os.ErrProcessDone
		}
		return err
	}
	return &Cmd{Cmd: cmd, status: r, report: w}, nil
}

// supervise is the supervisor's main: it runs the command in a new session as a child
// subreaper, so that what the command leaves behind — background jobs, daemons started with
// setsid — becomes its child when orphaned. When the command ends, or on SIGTERM, it kills all
// of them and reaps them before it reports on fd 3 and exits: nothing outlives the call.
func supervise(args []string) int {
	sp, argv, err := splitArgs(args)
	if err != nil {
		return fail("%v", err)
	}
	unix.CloseOnExec(3) // the report is the supervisor's to write: the command must not fake it
	out := os.NewFile(3, "report")
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fail("cannot become a subreaper: %v", err)
	}
	// A confined command is started by a confining process that restricts itself and execs it:
	// no thread of the supervisor ever shares the command's Landlock domain, so the command
	// cannot signal the supervisor, whose job is to kill what it leaves behind.
	var cmd *exec.Cmd
	if sp.Confine || sp.Namespace {
		cmd = exec.Command(self, append([]string{confineArg, encodeSpec(sp), "--"}, argv...)...)
		cmd.Args[0] = "reprise-sandbox"
	} else {
		path, err := exec.LookPath(argv[0])
		if err != nil {
			return fail("%v", err)
		}
		cmd = exec.Command(path, argv[1:]...)
		cmd.Args[0] = argv[0]
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// A session of its own: the command has no terminal to read the user's keys from or to write
	// escape sequences to. A supervisor killed outright takes the command with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	if sp.Namespace {
		namespaced(cmd.SysProcAttr, sp.NetNS)
	}
	started := make(chan error, 1)
	done := make(chan struct{})
	go func() { // ends when the command has exited
		defer close(done)
		// Pdeathsig follows the thread that forked: it must live until the command exits.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		_ = cmd.Wait() // how it ended is read from ProcessState below
	}()
	if err := <-started; err != nil {
		return fail("%v", err)
	}
	pgid := cmd.Process.Pid
	select {
	case <-stop:
		_ = unix.Kill(-pgid, unix.SIGKILL) // ESRCH: it ended meanwhile
		<-done
	case <-done:
	}
	reapAll(pgid)
	r := report{Code: cmd.ProcessState.ExitCode()}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		r = report{Code: -1, Signal: int(ws.Signal())}
	}
	b, _ := json.Marshal(r)
	_, _ = out.Write(b) // without the report the parent reads this process's own status
	return 0
}

// reapAll kills the command's process group, then every process that is still a child of the
// supervisor (orphans of the command reparented here) and their groups, until none is left.
// Killing a process orphans its children, which come here in turn, so the loop ends with the tree.
func reapAll(pgid int) {
	_ = unix.Kill(-pgid, unix.SIGKILL) // ESRCH when the group is gone already, the usual case
	me := os.Getpid()
	for {
		for _, pid := range childrenOf(me) {
			_ = unix.Kill(-pid, unix.SIGKILL) // a setsid'd leader's group, if it leads one
			_ = unix.Kill(pid, unix.SIGKILL)
		}
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		switch {
		case errors.Is(err, unix.ECHILD):
			return
		case errors.Is(err, unix.EINTR) || pid > 0:
			continue
		}
		time.Sleep(time.Millisecond) // a child is dying: let it
	}
}

// childrenOf lists the processes whose parent is pid, from /proc (the per-task children file
// needs CONFIG_PROC_CHILDREN, which not every kernel has).
func childrenOf(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var kids []int
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid(n) == pid {
			kids = append(kids, n)
		}
	}
	return kids
}

// ppid reads a process's parent from /proc/PID/stat, whose second field (the command name, in
// parentheses) may itself hold spaces and parentheses.
func ppid(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return -1
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return -1
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return -1
	}
	n, err := strconv.Atoi(f[1])
	if err != nil {
		return -1
	}
	return n
}
