package main

import "golang.org/x/sys/unix"

// makeUndumpable keeps other processes of the same user from reading this one's memory and
// /proc/PID/environ, where the API key is: a non-dumpable process's /proc entries belong to root
// and ptrace access needs CAP_SYS_PTRACE. It also turns core dumps off. Commands the agent runs
// are not affected: execve makes a process dumpable again.
func makeUndumpable() error {
	return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
}
