//go:build !windows

package tools

// shellArgv is how run_command runs a command line: sh reads it.
func shellArgv(command string) []string { return []string{"/bin/sh", "-c", command} }

// shellIntro opens run_command's description: it names the shell the model writes for.
func shellIntro() string { return "Run a shell command (sh -c)" }

// sandboxNote ends the description: what a sandboxed command cannot do.
const sandboxNote = " It may run sandboxed: writing outside the workspace and temp dir, or using the network, then fails."
