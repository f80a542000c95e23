package sandbox

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/reprise-dev/reprise/agent/fspath"
	"github.com/reprise-dev/reprise/agent/ignore"
	"github.com/reprise-dev/reprise/agent/secret"
)

// Confined commands see the user's home directory deny-by-default: an empty, read-only directory
// in which only the toolchains and package caches that builds need are mounted back, read-only
// (writable where Writable says so), with the paths the user adds (Config.ReadPaths). A list of
// credential paths always misses the next one (a history file with an exported key, ~/.pgpass, a
// token in ~/.gitconfig, the Copilot token, other projects' sessions in Reprise's state), so the
// home is hidden whole and the credential list stays for what is mounted back, the file tools and
// the redaction. Git still knows who commits: a copy of the user's identity, and nothing else of
// their configuration, is given as GIT_CONFIG_GLOBAL.

// homeToolchains are the directories under the home that toolchains and package managers keep
// their programs and caches in, for Go, Node (npm, yarn, pnpm, nvm, volta, fnm, bun, deno), Python
// (pip, pyenv, pipx, poetry, uv, conda, virtualenvs), Rust (cargo, rustup), Java (maven, gradle,
// sdkman), Ruby, .NET, Haskell, OCaml, Lean and the version managers (asdf, mise). Those that do
// not exist are skipped; the environment's own locations (toolchainEnv) and PATH's directories
// under the home are added to them.
var homeToolchains = []string{
	"go", ".config/go", "sdk", // Go: GOPATH (modules, installed tools), go env -w, go.dev/dl toolchains
	".npm", ".node-gyp", ".cache/node-gyp", ".nvm", ".volta", ".fnm", ".local/share/fnm", ".yarn", ".cache/yarn",
	".config/yarn", ".pnpm-store", ".local/share/pnpm", ".cache/pnpm", ".bun", ".deno", ".cache/deno",
	".pyenv", ".local/lib", ".local/bin", ".cache/pip", ".local/pipx", ".cache/pypoetry", ".local/share/uv",
	".cache/uv", ".conda", "miniconda3", "anaconda3", ".virtualenvs", ".local/share/virtualenvs",
	".cargo", ".rustup",
	".m2", ".gradle", ".sdkman", ".jdks",
	".rbenv", ".gem", ".bundle", ".dotnet", ".nuget", ".ghcup", ".cabal", ".stack", ".opam", ".elan",
	".asdf", ".tool-versions", ".local/share/mise",
}

// toolchainEnv are the variables that move a toolchain's directory elsewhere.
var toolchainEnv = []string{"GOPATH", "GOROOT", "GOMODCACHE", "GOENV", "CARGO_HOME", "RUSTUP_HOME", "NVM_DIR",
	"VOLTA_HOME", "PYENV_ROOT", "PNPM_HOME", "BUN_INSTALL", "DENO_DIR", "npm_config_cache", "PIP_CACHE_DIR",
	"GRADLE_USER_HOME", "SDKMAN_DIR", "CONDA_PREFIX", "VIRTUAL_ENV", "JAVA_HOME", "RBENV_ROOT", "GEM_HOME"}

// homeView is what confined commands see of the home directory: home is covered, keep are
// mounted back read-only, and links are symlinks (path → target) made again in the covered home,
// where a toolchain's directory there is a link to elsewhere (~/go → /data/go). home is "" when
// nothing is covered (no home, or the home inside the workspace).
func homeView(getenv func(string) string, workspace string, extra []string) (home string, keep []string, links map[string]string) {
	given := secret.HomeDir(getenv)
	if !filepath.IsAbs(given) || filepath.Clean(given) == "/" || within(workspace, given) {
		return "", nil, nil
	}
	// The mounts follow symlinks: a home reached through one (/home linked to /data/home) is
	// covered where it really is, and what comes back is compared there too.
	given = filepath.Clean(given)
	home = realPath(given)
	if within(realPath(workspace), home) {
		return "", nil, nil
	}
	add := func(p string) {
		if p == "" || !filepath.IsAbs(p) {
			return
		}
		p = filepath.Clean(p)
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return
		}
		if rel, ok := relIn(given, home, p); ok && real != filepath.Join(home, rel) {
			if links == nil {
				links = map[string]string{}
			}
			links[filepath.Join(home, rel)] = real
		}
		if real != home && within(home, real) && !slices.Contains(keep, real) {
			keep = append(keep, real)
		}
	}
	for _, rel := range homeToolchains {
		add(filepath.Join(home, filepath.FromSlash(rel)))
	}
	for _, name := range toolchainEnv {
		for _, p := range filepath.SplitList(getenv(name)) {
			add(p)
		}
	}
	for _, dir := range filepath.SplitList(getenv("PATH")) {
		add(dir)
	}
	for _, p := range extra {
		switch {
		case strings.HasPrefix(p, "~/"):
			add(filepath.Join(home, p[2:]))
		default:
			add(p)
		}
	}
	slices.Sort(keep)
	// One inside another is mounted with it.
	return home, slices.DeleteFunc(keep, func(p string) bool {
		return slices.ContainsFunc(keep, func(q string) bool { return q != p && within(q, p) })
	}), links
}

// relIn is p relative to the home, given as the environment names it or as it really is.
func relIn(given, real, p string) (string, bool) {
	for _, h := range []string{given, real} {
		if rel, ok := fspath.Within(h, p); ok && rel != "." {
			return rel, true
		}
	}
	return "", false
}

// gitIdentity writes to dir a git configuration that holds the user's identity and nothing else of
// their global configuration (no credential helper, header or token), and returns its path; ""
// when there is no identity to give or it cannot be written.
func gitIdentity(getenv func(string) string, dir string) string {
	if dir == "" {
		return ""
	}
	v := ignore.UserValues(getenv, "user.name", "user.email", "init.defaultbranch")
	if len(v) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("# The user's identity, given by Reprise to sandboxed commands instead of their git configuration.\n")
	for _, section := range []string{"user", "init"} {
		var lines []string
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if key, ok := strings.CutPrefix(k, section+"."); ok {
				lines = append(lines, "\t"+key+" = "+strconv.Quote(v[k])+"\n")
			}
		}
		if len(lines) > 0 {
			b.WriteString("[" + section + "]\n" + strings.Join(lines, ""))
		}
	}
	p := filepath.Join(dir, "gitconfig")
	if old, err := os.ReadFile(p); err == nil && string(old) == b.String() {
		return p
	}
	if err := os.MkdirAll(dir, 0o700); err != nil || os.WriteFile(p, []byte(b.String()), 0o600) != nil {
		return ""
	}
	return p
}

// repriseOwn are Reprise's own settings and state (every workspace's session journals and saved
// outputs): never visible to commands, wherever the environment puts them.
func repriseOwn(getenv func(string) string) []string {
	var out []string
	if h := getenv("REPRISE_HOME"); filepath.IsAbs(h) {
		out = append(out, h)
	}
	if s := getenv("XDG_STATE_HOME"); filepath.IsAbs(s) {
		out = append(out, filepath.Join(s, "reprise"))
	}
	if c := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(c) {
		out = append(out, filepath.Join(c, "reprise"))
	}
	if h := secret.HomeDir(getenv); filepath.IsAbs(h) {
		out = append(out, filepath.Join(h, ".local", "state", "reprise"), filepath.Join(h, ".config", "reprise"))
	}
	return out
}
