package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	sp.Group = groupName("")
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
	c := &Cmd{Cmd: cmd, status: r, report: w}
	c.ended = func() bool { // the supervisor is reaped; one killed before its cleanup leaves work
		if st := cmd.ProcessState; st != nil && !st.Exited() {
			c.limitHit = sweepGroups(sp.Group)
		}
		return false
	}
	return c, nil
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
	cmd, group, held, release, err := commandOf(&sp, argv)
	if err != nil {
		return fail("%v", err)
	}
	started := make(chan error, 1)
	done := make(chan struct{})
	// The command's status, set before done is closed.
	var status unix.WaitStatus
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
		status = reapUntil(cmd.Process.Pid)
	}()
	err = <-started
	if held != nil {
		held.Close() // the confining process has its own copy
		if err == nil {
			group.add(cmd.Process.Pid)
		}
		release.Close()
		defer group.remove()
	}
	if err != nil {
		return fail("%v", err)
	}
	pgid := cmd.Process.Pid
	full, watched := watchTemp(sp, pgid, done)
	var procs []proc
	select {
	case <-stop:
		procs = scanProcs()
		_ = unix.Kill(-pgid, unix.SIGKILL) // ESRCH: it ended meanwhile
		<-done
	case <-done:
		procs = scanProcs()
	}
	left, tasks := census(procs, pgid)
	reapAll(pgid, procs)
	r := report{Code: status.ExitStatus(), Left: left}
	<-watched
	r.TempFull = settleTemp(sp, full)
	if status.Signaled() {
		r.Code, r.Signal = -1, int(status.Signal())
	}
	// The cgroup counts refused forks; RLIMIT_NPROC does not, so a tree still at 90 % of the
	// bound when it ended is taken to have met it (a fork bomb sits there retrying).
	r.Limit = sp.MaxProcs > 0 && (group.pids != nil && group.pids.hit() || tasks >= sp.MaxProcs*9/10)
	r.OOM = group.mem != nil && group.mem.oomKilled()
	b, _ := json.Marshal(r)
	_, _ = out.Write(b) // without the report the parent reads this process's own status
	return 0
}

// commandOf is the process the supervisor starts for argv. A confined command is started by a
// confining process that restricts itself and execs it: no thread of the supervisor ever shares
// the command's Landlock domain, so the command cannot signal the supervisor, whose job is to
// kill what it leaves behind. The same process sets the command's limits, whatever the mode.
// group holds the cgroups that bound the tree (none unless this user can make them: root, or a
// delegated tree); the confining process execs the command once release is closed, held being
// its copy (both nil when there is no group to join).
func commandOf(sp *spec, argv []string) (cmd *exec.Cmd, group groups, held, release *os.File, err error) {
	if sp.Confine || sp.Namespace || sp.MaxProcs > 0 || sp.MaxData > 0 {
		group, held, release = holdForGroups(sp.Group, sp.MaxProcs, sp.MaxData)
		sp.Hold = held != nil
		cmd = exec.Command(self, append([]string{confineArg, encodeSpec(*sp), "--"}, argv...)...)
		cmd.Args[0] = "reprise-sandbox"
		if sp.Hold {
			cmd.ExtraFiles = []*os.File{held} // its fd 3: it execs the command at EOF
		}
	} else {
		path, err := exec.LookPath(argv[0])
		if err != nil {
			return nil, groups{}, nil, nil, err
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
	return cmd, group, held, release, nil
}

// reapUntil waits for the command, pid, and meanwhile reaps the orphans of its tree that come to
// the supervisor: a zombie would hold one of the command's process slots until it ended.
func reapUntil(pid int) unix.WaitStatus {
	for {
		var ws unix.WaitStatus
		got, err := unix.Wait4(-1, &ws, 0, nil)
		switch {
		case errors.Is(err, unix.EINTR):
		case err != nil: // ECHILD: it cannot be gone unseen; report a kill rather than spin
			return unix.WaitStatus(unix.SIGKILL)
		case got == pid:
			return ws
		}
	}
}

// groups are the cgroups of one command; either may be nil.
type groups struct {
	pids *pidsGroup
	mem  *memoryGroup
}

// add puts process pid in the groups. Where it cannot, the command runs under its rlimits alone:
// RLIMIT_NPROC does not bind root, so that is said.
func (g groups) add(pid int) {
	if g.pids != nil {
		if err := g.pids.add(pid); err != nil {
			fmt.Fprintf(os.Stderr, "reprise sandbox: no pids cgroup: %v\n", err)
		}
	}
	if g.mem != nil {
		_ = g.mem.add(pid)
	}
}

func (g groups) remove() {
	if g.pids != nil {
		g.pids.remove()
	}
	if g.mem != nil {
		g.mem.remove()
	}
}

// holdForGroups makes the cgroups named name (a fresh name when empty) that bound a command to
// maxProcs tasks and maxMem bytes in all (0: no such bound), and the pipe that holds the
// confining process until it is in them; no pipe when this user can make neither.
func holdForGroups(name string, maxProcs int, maxMem int64) (g groups, held, release *os.File) {
	if name == "" {
		name = groupName("")
	}
	if maxProcs > 0 {
		g.pids, _ = newPidsGroup(name, maxProcs)
	}
	if maxMem > 0 {
		g.mem, _ = newMemoryGroup(name, maxMem)
	}
	if g.pids == nil && g.mem == nil {
		return g, nil, nil
	}
	held, release, err := os.Pipe()
	if err != nil {
		g.remove()
		return groups{}, nil, nil
	}
	return g, held, release
}

// reapAll kills the command's process group, then every process that is still a child of the
// supervisor (orphans of the command reparented here) and their groups, until none is left.
// Killing a process orphans its children, which come here in turn, so the loop ends with the tree.
// procs is a recent scanProcs, or nil.
func reapAll(pgid int, procs []proc) {
	me := os.Getpid()
	_ = unix.Kill(-pgid, unix.SIGKILL) // ESRCH when the group is gone already, the usual case
	for {
		for _, p := range procs {
			if p.ppid != me {
				continue
			}
			_ = unix.Kill(-p.pid, unix.SIGKILL) // a setsid'd leader's group, if it leads one
			_ = unix.Kill(p.pid, unix.SIGKILL)
		}
		reaped := false
		for {
			var ws unix.WaitStatus
			pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
			if errors.Is(err, unix.ECHILD) {
				return
			}
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if err != nil || pid <= 0 {
				break
			}
			reaped = true
		}
		if !reaped {
			time.Sleep(time.Millisecond) // a child is dying: let it
		}
		procs = scanProcs()
	}
}

// census counts the processes of the command's tree in procs — its session, and what was
// orphaned to the supervisor — and their tasks (threads).
func census(procs []proc, session int) (n, tasks int) {
	me := os.Getpid()
	for _, p := range procs {
		if p.session == session || p.ppid == me {
			n++
			tasks += p.threads
		}
	}
	return n, tasks
}

// proc is what reapAll reads of a process in /proc/PID/stat.
type proc struct{ pid, ppid, session, threads int }

// scanProcs lists every process with its parent, session and number of threads (the per-task
// children file needs CONFIG_PROC_CHILDREN, which not every kernel has).
func scanProcs() []proc {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []proc
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := readProc(n); ok {
			out = append(out, p)
		}
	}
	return out
}

// readProc reads /proc/PID/stat, whose second field (the command name, in parentheses) may itself
// hold spaces and parentheses.
func readProc(pid int) (proc, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return proc{}, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return proc{}, false
	}
	// From the state on: state ppid pgrp session … num_threads is the 18th.
	f := strings.Fields(s[i+1:])
	if len(f) < 18 {
		return proc{}, false
	}
	p := proc{pid: pid}
	var errs [3]error
	p.ppid, errs[0] = strconv.Atoi(f[1])
	p.session, errs[1] = strconv.Atoi(f[3])
	p.threads, errs[2] = strconv.Atoi(f[17])
	return p, errors.Join(errs[:]...) == nil
}
