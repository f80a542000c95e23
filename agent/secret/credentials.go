package secret

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
)

// location is one place credentials live, and what of it the redactor reads.
type location struct {
	path string // absolute and clean
	// read are globs under path naming the files whose secrets the redactor learns; "" is path
	// itself. None: the place is only hidden (browser profiles, key stores: too large, or
	// encrypted, to learn anything from).
	read []string
	// keys keeps only private keys among what read finds: never a *.pub.
	keys bool
}

// homeLocations are the locations under the home directory (slash-separated), with what the
// redactor reads of each. Those of other systems cost nothing where they do not exist, so every
// system's list holds them all.
var homeLocations = []struct {
	rel  string
	read []string
}{
	{".ssh", []string{"id_*", "*.pem", "*.key"}},
	{".aws", awsFiles},
	{".config/gcloud", gcloudFiles},
	{".netrc", []string{""}},
	{".docker/config.json", []string{""}},
	{".kube", []string{"config"}},
	{".gnupg", nil},
	{".git-credentials", []string{""}},
	{".config/git/credentials", []string{""}},
	{".config/gh", ghFiles},
	{".npmrc", []string{""}},
	{".pypirc", []string{""}},
	{".cargo/credentials.toml", []string{""}},
	{".cargo/credentials", []string{""}},
	{".azure", azureFiles},
	{".password-store", nil},
	{".local/share/keyrings", nil},
	{".vault-token", []string{""}},
	{".terraform.d/credentials.tfrc.json", []string{""}},
	{".pki", nil}, // NSS databases: client certificates and their keys
	{".pgpass", []string{""}},
	{".authinfo", []string{""}},
	{".authinfo.gpg", nil},
	{".config/github-copilot", []string{"hosts.json", "apps.json"}},
	{".config/rclone/rclone.conf", nil},
	// In the toolchains' directories, which sandboxed commands see (sandbox/home.go): the
	// registries' logins. Only hidden: they hold whole configurations besides.
	{".gem/credentials", []string{""}},
	{".m2/settings.xml", nil},
	{".m2/settings-security.xml", nil},
	{".gradle/gradle.properties", nil},
	{".bundle/config", nil},
	{".nuget/NuGet/NuGet.Config", nil},
	{".yarnrc.yml", nil},
	// Browser profiles: cookies and saved passwords.
	{".mozilla", nil},
	{".thunderbird", nil},
	{".config/google-chrome", nil},
	{".config/chromium", nil},
	{".config/BraveSoftware", nil},
	{".config/microsoft-edge", nil},
	{".config/vivaldi", nil},
	{"snap/firefox/common/.mozilla", nil},
	{"snap/chromium/common/chromium", nil},
	{"Library/Application Support/Google/Chrome", nil},
	{"Library/Application Support/Chromium", nil},
	{"Library/Application Support/BraveSoftware", nil},
	{"Library/Application Support/Microsoft Edge", nil},
	{"Library/Application Support/Firefox", nil},
	{"Library/Keychains", nil},
	{"Library/Cookies", nil},
	{"AppData/Roaming/gcloud", gcloudFiles},
	{"AppData/Roaming/Mozilla", nil},
	{"AppData/Local/Google/Chrome/User Data", nil},
	{"AppData/Local/Microsoft/Edge/User Data", nil},
	{"AppData/Local/BraveSoftware", nil},
}

// The files of the tools' own directories that hold secrets (their logs and caches do not).
var (
	awsFiles    = []string{"credentials", "config", "sso/cache/*.json", "cli/cache/*.json"}
	gcloudFiles = []string{"application_default_credentials.json", "credentials.db", "access_tokens.db",
		"legacy_credentials/*/adc.json", "legacy_credentials/*/.boto"}
	ghFiles    = []string{"hosts.yml"}
	azureFiles = []string{"*.json", "msal_token_cache.*"}
)

// Where the environment moves them: the variable, and what it names (a file, or a directory
// read as the home one is).
var envLocations = []struct {
	name string
	read []string // nil: the variable names a file, read whole
	dir  bool
	list bool // a list of paths (KUBECONFIG)
}{
	{name: "AWS_SHARED_CREDENTIALS_FILE"},
	{name: "AWS_CONFIG_FILE"},
	{name: CredentialsVar},
	{name: "CLOUDSDK_CONFIG", read: gcloudFiles, dir: true},
	{name: "KUBECONFIG", list: true},
	{name: "DOCKER_CONFIG", read: []string{"config.json"}, dir: true},
	{name: "GNUPGHOME", dir: true},
	{name: "NETRC"},
	{name: "AZURE_CONFIG_DIR", read: azureFiles, dir: true},
	{name: "GH_CONFIG_DIR", read: ghFiles, dir: true},
	{name: "NPM_CONFIG_USERCONFIG"},
	{name: "PASSWORD_STORE_DIR", dir: true},
	{name: "VAULT_CONFIG_PATH"},
}

// CredentialPaths lists where the user's credentials live, whether or not each exists: the
// usual files and directories under home (SSH and GPG keys, cloud CLIs' tokens, registry
// passwords, browser profiles), those the environment moves elsewhere (AWS_SHARED_CREDENTIALS_FILE,
// GOOGLE_APPLICATION_CREDENTIALS, KUBECONFIG, DOCKER_CONFIG, GNUPGHOME, NETRC, …; XDG_CONFIG_HOME
// and KRB5CCNAME, or else this process's user's default Kerberos cache in /tmp), then extra, the
// user's own list (the hidePaths setting: `~/x` and relative entries are under home). Paths are
// absolute and clean, without duplicates, in that order; a nested one may follow its parent when
// the environment points inside it. home "" leaves out the home-relative ones (HomeDir gives the
// home from an environment).
//
// Commands must not read any of them: the command policy refuses a line naming one, the sandbox
// is to hide them from confined commands, and FromEnv learns the secrets inside the files so
// that what a command prints of them anyway is redacted.
func CredentialPaths(home string, getenv func(string) string, extra []string) []string {
	var out []string
	for _, l := range locations(home, getenv, extra) {
		out = append(out, l.path)
	}
	return out
}

func locations(home string, getenv func(string) string, extra []string) []location {
	var out []location
	add := func(l location) {
		if !filepath.IsAbs(l.path) {
			return
		}
		l.path = filepath.Clean(l.path)
		if !slices.ContainsFunc(out, func(m location) bool { return m.path == l.path }) {
			out = append(out, l)
		}
	}
	if home != "" {
		for _, h := range homeLocations {
			add(location{path: filepath.Join(home, filepath.FromSlash(h.rel)), read: h.read, keys: h.rel == ".ssh"})
		}
		if runtime.GOOS == "windows" { // curl's and git's name for it there; elsewhere `~/*` would match
			add(location{path: filepath.Join(home, "_netrc"), read: []string{""}})
		}
	}
	if xdg := getenv("XDG_CONFIG_HOME"); xdg != "" {
		for _, h := range homeLocations {
			if rel, ok := strings.CutPrefix(h.rel, ".config/"); ok {
				add(location{path: filepath.Join(xdg, filepath.FromSlash(rel)), read: h.read})
			}
		}
	}
	for _, e := range envLocations {
		v := getenv(e.name)
		if v == "" {
			continue
		}
		paths := []string{v}
		if e.list {
			paths = filepath.SplitList(v)
		}
		for _, p := range paths {
			read := []string{""}
			if e.dir {
				read = e.read
			}
			add(location{path: p, read: read})
		}
	}
	if p := krb5Cache(getenv); p != "" {
		add(location{path: p}) // a binary ticket: hidden, nothing to learn
	}
	for _, x := range extra {
		switch {
		case x == "~" || x == "":
			continue // the whole home is no credential location
		case strings.HasPrefix(x, "~/") || strings.HasPrefix(x, `~\`):
			x = filepath.Join(home, x[2:])
		case !filepath.IsAbs(x) && home != "":
			x = filepath.Join(home, x)
		}
		add(location{path: x, read: []string{"", "*"}})
	}
	return out
}

// krb5Cache is the Kerberos ticket cache of the user: KRB5CCNAME's file, or the default one in
// /tmp (named after this process's user) where nothing else is set.
func krb5Cache(getenv func(string) string) string {
	v := getenv("KRB5CCNAME")
	switch {
	case v == "" && runtime.GOOS != "windows":
		return "/tmp/krb5cc_" + strconv.Itoa(os.Getuid())
	case strings.HasPrefix(v, "FILE:"):
		return v[len("FILE:"):]
	case strings.HasPrefix(v, "DIR:"):
		return v[len("DIR:"):]
	case strings.HasPrefix(v, "/"):
		return v
	}
	return "" // KEYRING:, KCM:, API:: not a file
}
