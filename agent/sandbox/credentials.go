package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/reprise-dev/reprise/agent/secret"
)

// CredentialPaths lists what confined commands may not read: the user's credential locations
// (secret.CredentialPaths: keys, tokens, cloud and registry logins, password stores, keyrings,
// browser profiles) and extra, the hidePaths setting. A test the agent wrote runs unasked, and
// whatever it reads can reach the model, so confined commands see them empty.
func CredentialPaths(getenv func(string) string, extra []string) []string {
	return secret.CredentialPaths(secret.HomeDir(getenv), getenv, extra)
}

// runtimeDir is the user's runtime directory: the session bus, the keyring and ssh agents, the
// Wayland and PipeWire sockets, systemd's user manager (which starts programs on request, outside
// the sandbox). Confined commands see it empty.
func runtimeDir(getenv func(string) string) string {
	if d := getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(d) {
		return filepath.Clean(d)
	}
	return "/run/user/" + strconv.Itoa(os.Getuid())
}

// hidden filters paths down to those that exist and that hiding would not take the workspace or
// a writable directory with them.
func hidden(paths, keep []string) []string {
	var out []string
	for _, p := range paths {
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		if slices.ContainsFunc(keep, func(k string) bool { return k != "" && within(p, k) }) {
			continue
		}
		out = append(out, p)
	}
	return out
}
