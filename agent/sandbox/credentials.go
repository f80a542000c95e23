package sandbox

import (
	"os"
	"slices"

	"github.com/reprise-dev/reprise/agent/secret"
)

// CredentialPaths lists what confined commands may not read: the user's credential locations
// (secret.CredentialPaths: keys, tokens, cloud and registry logins, password stores, keyrings,
// browser profiles) and extra, the hidePaths setting. A test the agent wrote runs unasked, and
// whatever it reads can reach the model, so confined commands see them empty.
func CredentialPaths(getenv func(string) string, extra []string) []string {
	return secret.CredentialPaths(secret.HomeDir(getenv), getenv, extra)
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
