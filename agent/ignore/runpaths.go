package ignore

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// RunPaths are the places outside a repository's metadata directory that git takes code or
// configuration from: writing there is running code at the user's next `git commit` or
// `git status`, outside any sandbox.
type RunPaths struct {
	// Hooks are the core.hooksPath directories (husky's .husky/_, .githooks, lefthook's …).
	Hooks []string
	// Includes are the files include.path and includeIf.*.path bring in: a repository that asks
	// its users to `git config include.path ../.gitconfig` keeps configuration in its work tree.
	Includes []string
}

// maxIncludeDepth is git's own limit on nested includes.
const maxIncludeDepth = 10

// GitRunPaths reads the configuration git would read for the repository whose work tree is
// worktree (the system's, the user's, the repository's config and config.worktree, and
// GIT_CONFIG_COUNT's entries), following includes, and returns the absolute, cleaned paths they
// name. It errs on the side of more: every value of core.hooksPath counts, not only the last, and
// every includeIf is followed whatever its condition. A relative hooks path is relative to the work
// tree, as git runs hooks there; a relative include, to the file that names it.
func GitRunPaths(worktree string, getenv func(string) string) RunPaths {
	if getenv == nil {
		getenv = os.Getenv
	}
	r := &runPathReader{worktree: filepath.Clean(worktree), getenv: getenv, seen: map[string]bool{}}
	if getenv("GIT_CONFIG_NOSYSTEM") == "" {
		r.file(or(getenv("GIT_CONFIG_SYSTEM"), "/etc/gitconfig"), 0)
	}
	for _, name := range globalConfigs(getenv) {
		r.file(name, 0)
	}
	if _, err := os.Lstat(filepath.Join(worktree, ".git")); err == nil {
		if g, ok := findGitDir(os.DirFS(worktree), "."); ok {
			dir := g.dir
			if g.fsys != nil {
				dir = filepath.Join(worktree, filepath.FromSlash(g.dir))
			}
			r.file(filepath.Join(dir, "config"), 0)
			r.file(filepath.Join(dir, "config.worktree"), 0)
		}
	}
	n, _ := strconv.Atoi(getenv("GIT_CONFIG_COUNT"))
	for i := range min(n, 1000) {
		key, val := strings.ToLower(getenv("GIT_CONFIG_KEY_"+strconv.Itoa(i))), getenv("GIT_CONFIG_VALUE_"+strconv.Itoa(i))
		switch {
		case key == "core.hookspath":
			r.hooks(val)
		case key == "include.path" || strings.HasPrefix(key, "includeif.") && strings.HasSuffix(key, ".path"):
			r.include(r.worktree, val, 0)
		}
	}
	slices.Sort(r.out.Hooks)
	slices.Sort(r.out.Includes)
	return RunPaths{Hooks: slices.Compact(r.out.Hooks), Includes: slices.Compact(r.out.Includes)}
}

type runPathReader struct {
	worktree string
	getenv   func(string) string
	seen     map[string]bool // config files read: an include cycle ends
	out      RunPaths
}

// file reads one config file and the files it includes.
func (r *runPathReader) file(name string, depth int) {
	if name == "" || depth > maxIncludeDepth || r.seen[name] {
		return
	}
	r.seen[name] = true
	data, err := readLimited(os.Open(name))
	if err != nil {
		return
	}
	configEntries(data, func(section string, sub bool, key, val string) {
		switch {
		case section == "core" && !sub && key == "hookspath":
			r.hooks(val)
		case key == "path" && (section == "include" && !sub || section == "includeif" && sub):
			r.include(filepath.Dir(name), val, depth+1)
		}
	})
}

// include records an included file, relative to dir, and reads it.
func (r *runPathReader) include(dir, val string, depth int) {
	p := expandHome(val, r.getenv)
	if p == "" {
		return
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	p = filepath.Clean(p)
	r.out.Includes = append(r.out.Includes, p)
	r.file(p, depth)
}

func (r *runPathReader) hooks(val string) {
	p := expandHome(val, r.getenv)
	if p == "" {
		return
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(r.worktree, p)
	}
	r.out.Hooks = append(r.out.Hooks, filepath.Clean(p))
}

func or(v, fallback string) string {
	if v != "" {
		return v
	}
	return fallback
}

// UserValues returns the values of keys ("section.key", lower case, in sections without a
// subsection) in the user's git configuration (GIT_CONFIG_GLOBAL, else the XDG file then
// ~/.gitconfig), the last one winning as in git; includes are not followed. Keys not set are
// absent.
func UserValues(getenv func(string) string, keys ...string) map[string]string {
	out := map[string]string{}
	for _, name := range globalConfigs(getenv) {
		data, err := readLimited(os.Open(name))
		if err != nil {
			continue
		}
		for k, v := range configValues(data) {
			if slices.Contains(keys, k) {
				out[k] = v
			}
		}
	}
	return out
}
