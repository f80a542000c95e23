package sandbox

import (
	"path/filepath"
	"strings"
)

// devices commands may write to. /dev/tty is not one of them: a command has no terminal.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}

// seatbeltProfile is the macOS sandbox-exec profile equivalent to the Landlock rules and Linux's
// mounts: everything allowed but writes outside the writable directories, reads in the home but
// for the toolchains (Keep), credentials, and, unless allowed, network connections.
// It is plain text, built and tested on every OS.
func seatbeltProfile(sp spec) string {
	var b strings.Builder
	b.WriteString("(version 1)\n(allow default)\n(deny file-write*)\n(allow file-write*")
	for _, p := range append([]string{sp.Workspace}, sp.Writable...) {
		b.WriteString("\n  (subpath " + seatbeltString(realPath(p)) + ")")
	}
	for _, d := range devices {
		b.WriteString("\n  (literal " + seatbeltString(d) + ")")
	}
	b.WriteString(")\n")
	if sp.Home != "" {
		// The home is hidden but for the toolchains, the workspace and the writable directories.
		// Its metadata stays readable, so that paths through it resolve.
		b.WriteString("(deny file-read-data (subpath " + seatbeltString(realPath(sp.Home)) + "))\n(allow file-read-data")
		for _, p := range append(append([]string{sp.Workspace}, sp.Writable...), sp.Keep...) {
			b.WriteString("\n  (subpath " + seatbeltString(realPath(p)) + ")")
		}
		b.WriteString(")\n")
	}
	for _, p := range sp.ReadOnly { // later rules win
		b.WriteString("(deny file-write* (subpath " + seatbeltString(realPath(p)) + "))\n")
	}
	for _, p := range sp.Hide { // credentials: neither read nor written
		b.WriteString("(deny file-read* file-write* (subpath " + seatbeltString(realPath(p)) + "))\n")
	}
	if !sp.Network {
		// No IP at all, and Unix sockets only within the workspace and the writable directories:
		// not the Docker daemon, the ssh-agent or the session bus.
		b.WriteString("(deny network-outbound (remote ip))\n(deny network-bind (local ip))\n")
		b.WriteString("(deny network-outbound (remote unix-socket))\n(allow network-outbound (remote unix-socket")
		for _, p := range append([]string{sp.Workspace}, sp.Writable...) {
			b.WriteString("\n  (subpath " + seatbeltString(realPath(p)) + ")")
		}
		b.WriteString("))\n")
	}
	return b.String()
}

// realPath resolves symlinks (macOS's /tmp and /var are links into /private): the sandbox matches
// resolved paths.
func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// seatbeltString quotes s as a profile string literal.
func seatbeltString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
