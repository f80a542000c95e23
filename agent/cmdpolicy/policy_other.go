//go:build !windows

package cmdpolicy

import "path"

// osShell is the language of run_command's lines here.
const osShell = posixShell

// program is the name a command is known by: its basename, so /usr/bin/git is git.
func program(name string) string { return path.Base(name) }

// osShellLine finds the line a shell of Windows runs; there is none here.
func osShellLine(string, []word) (line word, ok bool) { return word{}, false }

// isOSShell: the shells here are those of shells.
func isOSShell(string) bool { return false }
