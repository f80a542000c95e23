//go:build !linux

package sandbox

import "runtime"

// defaultMaxMemory: only Linux reads the machine's memory; elsewhere a bound must be configured.
func defaultMaxMemory() int64 { return 0 }

// processLimitUnavailable: Windows bounds the command's job; macOS has no per-command bound
// (RLIMIT_NPROC there counts every process of the user).
func processLimitUnavailable() string {
	if runtime.GOOS == "windows" {
		return ""
	}
	return "no per-command process limit on " + runtime.GOOS
}

// memoryLimitUnavailable: Windows bounds the command's job in all; elsewhere nothing does.
func memoryLimitUnavailable() string {
	if runtime.GOOS == "windows" {
		return ""
	}
	return "no per-command memory bound on " + runtime.GOOS
}
