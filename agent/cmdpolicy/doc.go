// Package cmdpolicy is the command policy: which command lines the agent's run_command runs
// without asking, which it refuses whatever the user says, and which go to the user. It reads a
// line as the shell will (mvdan.cc/sh's grammar for sh, a plain-words reading for PowerShell),
// follows every program the line runs (pipelines, substitutions, function bodies, wrappers,
// `sh -c`, find -exec, git aliases…), and judges each against the denylist, the destructive
// forms, the credential locations and the allowlist with its per-program option rules.
//
// It is security-critical and self-contained: it imports nothing of the agent but agent/secret,
// so it can be read, tested and fuzzed on its own (cmd/reprise's layering test holds that).
package cmdpolicy
