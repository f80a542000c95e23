package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

func probe(Config) string { return "no sandbox is available on windows" }

// command runs argv unconfined (the caller asks the user about every command instead) in a job
// object of its own, Windows's process group: cancelling terminates the job, and so does the
// command's end, so nothing it started in the background outlives the call. The job is made
// kill-on-close, so if Reprise dies its commands die with it, as Pdeathsig does on Linux.
//
// A process is put in a job after it was created, and one that ran meanwhile could have started
// children outside it. So it is created suspended, assigned, then resumed. (The other way,
// PROC_THREAD_ATTRIBUTE_JOB_LIST, needs CreateProcess's attribute list, which os/exec does not
// expose.)
//
// The command gets a console of its own, without a window: it cannot read the keys typed in
// Reprise's terminal nor write to it, and no window flashes up when Reprise has no console.
func command(ctx context.Context, sp spec, argv []string) (*Cmd, error) {
	j, err := newJob(sp.MaxProcs, sp.MaxData)
	if err != nil {
		return nil, fmt.Errorf("sandbox: create a job object: %w", err)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_SUSPENDED | windows.CREATE_NO_WINDOW}
	cmd.Cancel = j.kill
	c := &Cmd{Cmd: cmd}
	c.started = func() error {
		err := j.adopt(cmd.Process.Pid)
		if err != nil {
			_ = cmd.Process.Kill() // it never ran: nothing of it is outside the job
		}
		return err
	}
	c.ended = j.close
	return c, nil
}

func supervise([]string) int { return fail("no supervisor on this OS") }

func confine([]string) int { return fail("no confining process on this OS") }

// namespacesUnavailable: nothing is confined here.
func namespacesUnavailable() string { return "no sandbox on this OS" }

// job is the job object of one command. Cancel may kill it from exec's goroutine while Start
// adopts the process.
type job struct {
	mu     sync.Mutex     // guards the fields below
	h      windows.Handle // 0 once closed
	killed bool           // kill was called: the command did not end by itself
}

// killedCode is the exit status the job's processes get when it is terminated, Process.Kill's.
const killedCode = 1

// newJob makes a kill-on-close job that holds at most procs processes, each committing at most
// memory bytes (0: no bound), the sandbox's limits as Windows counts them.
func newJob(procs int, memory int64) (*job, error) {
	h, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return nil, err
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE},
	}
	if procs > 0 {
		info.BasicLimitInformation.LimitFlags |= windows.JOB_OBJECT_LIMIT_ACTIVE_PROCESS
		info.BasicLimitInformation.ActiveProcessLimit = uint32(procs)
	}
	if memory > 0 && uint64(memory) <= uint64(^uintptr(0)) {
		info.BasicLimitInformation.LimitFlags |= windows.JOB_OBJECT_LIMIT_PROCESS_MEMORY
		info.ProcessMemoryLimit = uintptr(memory)
	}
	if _, err := windows.SetInformationJobObject(h, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		return nil, errors.Join(err, windows.CloseHandle(h))
	}
	return &job{h: h}, nil
}

// adopt puts the suspended process pid in the job, then lets it run; if the job was killed
// meanwhile, the process dies there instead.
func (j *job) adopt(pid int) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	// exec holds a handle to the process until Wait: the pid cannot name another one.
	p, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		return fmt.Errorf("sandbox: open the command's process: %w", err)
	}
	defer func() { _ = windows.CloseHandle(p) }()
	if err := windows.AssignProcessToJobObject(j.h, p); err != nil {
		return fmt.Errorf("sandbox: put the command in its job: %w", err)
	}
	if j.killed {
		return windows.TerminateJobObject(j.h, killedCode)
	}
	if err := resume(uint32(pid)); err != nil {
		return fmt.Errorf("sandbox: resume the command: %w", err)
	}
	return nil
}

// kill terminates every process of the job: exec's Cancel.
func (j *job) kill() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.killed = true
	if j.h == 0 {
		return nil
	}
	return windows.TerminateJobObject(j.h, killedCode)
}

// close terminates what is left in the job and releases it; it reports whether kill was called.
func (j *job) close() (killed bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.h != 0 {
		// Errors are moot: the handle goes, and with it, kill-on-close, any process left.
		_ = windows.TerminateJobObject(j.h, killedCode)
		_ = windows.CloseHandle(j.h)
		j.h = 0
	}
	return j.killed
}

// resume starts the threads of the suspended process pid: its main thread, the only one it has
// (os/exec closes the handle CreateProcess returned for it, so it is found by a snapshot).
func resume(pid uint32) error {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return err
	}
	defer func() { _ = windows.CloseHandle(snap) }()
	resumed := 0
	t := windows.ThreadEntry32{Size: uint32(unsafe.Sizeof(windows.ThreadEntry32{}))}
	for err = windows.Thread32First(snap, &t); err == nil; err = windows.Thread32Next(snap, &t) {
		if t.OwnerProcessID != pid {
			continue
		}
		h, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, t.ThreadID)
		if err != nil {
			return err
		}
		_, err = windows.ResumeThread(h)
		if cerr := windows.CloseHandle(h); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		resumed++
	}
	if !errors.Is(err, windows.ERROR_NO_MORE_FILES) {
		return err
	}
	if resumed == 0 {
		return errors.New("no thread found")
	}
	return nil
}
