package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// credentialHome are the places under the home directory where programs keep credentials: keys,
// tokens, cloud and registry logins, password stores, keyrings, browser profiles (cookies and
// saved passwords). Confined commands see them empty: a test the agent wrote runs unasked, and
// whatever it reads can reach the model.
var credentialHome = []string{
	".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".kube", ".docker/config.json",
	".netrc", ".git-credentials", ".config/git/credentials", ".config/gh", ".config/hub",
	".npmrc", ".yarnrc.yml", ".pypirc", ".gem/credentials", ".cargo/credentials", ".cargo/credentials.toml",
	".terraform.d/credentials.tfrc.json", ".vault-token", ".config/op", ".password-store",
	".local/share/keyrings", ".pki", ".mozilla", ".thunderbird",
	".config/google-chrome", ".config/chromium", ".config/BraveSoftware", ".config/microsoft-edge",
	".config/vivaldi", ".config/opera", ".snap/firefox",
	"Library/Keychains", "Library/Cookies", "Library/Application Support/Google/Chrome",
	"Library/Application Support/Firefox", "Library/Application Support/BraveSoftware",
	"Library/Application Support/Microsoft Edge",
}

// credentialEnv name files or directories that hold credentials elsewhere than the defaults.
var credentialEnv = []string{
	"AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE", "GOOGLE_APPLICATION_CREDENTIALS",
	"CLOUDSDK_CONFIG", "KUBECONFIG", "DOCKER_CONFIG", "GNUPGHOME", "NETRC", "PASSWORD_STORE_DIR",
	"SSH_AUTH_SOCK", "AZURE_CONFIG_DIR",
}

// CredentialPaths lists what confined commands may not read: the well-known credential
// locations of the user in getenv's environment, and extra (the hidePaths setting; `~/` is the
// home directory, relative entries are ignored). Paths are absolute and clean; whether they
// exist is checked when a command starts.
func CredentialPaths(getenv func(string) string, extra []string) []string {
	home := getenv("HOME")
	var out []string
	add := func(p string) {
		if strings.HasPrefix(p, "~/") && home != "" {
			p = filepath.Join(home, p[2:])
		}
		if p == "" || !filepath.IsAbs(p) {
			return
		}
		p = filepath.Clean(p)
		if p != "/" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	if home != "" {
		for _, rel := range credentialHome {
			add(filepath.Join(home, filepath.FromSlash(rel)))
		}
	}
	for _, k := range credentialEnv {
		for _, p := range filepath.SplitList(getenv(k)) {
			add(p)
		}
	}
	for _, p := range extra {
		add(p)
	}
	return out
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
