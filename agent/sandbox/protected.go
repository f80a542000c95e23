package sandbox

import (
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/reprise-dev/reprise/agent/fspath"
	"github.com/reprise-dev/reprise/agent/ignore"
)

// Some workspace paths are read by programs the user runs outside the sandbox: version-control
// metadata (hooks, core.fsmonitor), hook managers' files, editors' settings and tasks, direnv. A
// command the user did not approve may not write them (they are bound read-only, and new ones are
// moved aside after it), and the file tools write them only once the user approves that write:
// one rule for every writer, so a model steered by a file it read gains nothing by choosing the
// other tool.

// VCSDirs are the version-control directories, at any depth: git, Mercurial, Subversion,
// Jujutsu, Sapling (whose .sl/config takes hooks) and Bazaar.
var VCSDirs = []string{".git", ".hg", ".svn", ".jj", ".sl", ".bzr"}

// Guarded is a protected path of the workspace and why.
type Guarded struct {
	Rel string // slash path relative to the workspace
	Why string // for the user, completing "… because it is …"
}

// Why the root files are guarded.
const (
	whyEditor = "editor or shell settings that can run programs outside the sandbox"
	whyHooks  = "git hooks, which run outside the sandbox at your next commit"
)

// RootGuarded are the files at the workspace's root that editors, shells and hook managers act on
// by themselves: settings that name programs, tasks (VS Code runs a folderOpen task at once in a
// trusted folder), direnv, Emacs's dir-locals, Neovim's exrc, and husky, lefthook and pre-commit,
// whose hooks run at the next commit.
var RootGuarded = []Guarded{
	{".vscode", whyEditor}, {".idea", whyEditor}, {".zed", whyEditor}, {".helix", whyEditor},
	{".devcontainer", whyEditor}, {".dir-locals.el", whyEditor}, {".dir-locals-2.el", whyEditor},
	{".envrc", whyEditor}, {".nvim.lua", whyEditor}, {".nvimrc", whyEditor}, {".exrc", whyEditor},
	{".husky", whyHooks}, {".githooks", whyHooks}, {".lefthook", whyHooks}, {".pre-commit-config.yaml", whyHooks},
	{"lefthook.yml", whyHooks}, {".lefthook.yml", whyHooks}, {"lefthook.yaml", whyHooks}, {".lefthook.yaml", whyHooks},
	{"lefthook-local.yml", whyHooks}, {".lefthook-local.yml", whyHooks}, {"lefthook-local.yaml", whyHooks},
}

// ProtectedPaths lists the workspace's guarded paths for the repositories whose work trees are
// repos (slash paths relative to the workspace, "." the root): RootGuarded, then what each
// repository's git configuration names inside the workspace: its core.hooksPath directories and
// the files it includes (and where they lead, when they are symlinks within the workspace).
// Version-control directories are not listed: they are found by name, at any depth.
func ProtectedPaths(workspace string, repos []string) []Guarded {
	out := slices.Clone(RootGuarded)
	real, err := filepath.EvalSymlinks(workspace)
	if err != nil {
		real = workspace
	}
	add := func(abs, why string) {
		for _, base := range []string{workspace, real} {
			if rel, ok := fspath.Within(base, abs); ok && rel != "." {
				out = append(out, Guarded{filepath.ToSlash(rel), why})
				break
			}
		}
		if to, err := filepath.EvalSymlinks(abs); err == nil && to != abs {
			if rel, ok := fspath.Within(real, to); ok && rel != "." {
				out = append(out, Guarded{filepath.ToSlash(rel), why})
			}
		}
	}
	for _, repo := range repos {
		rp := ignore.GitRunPaths(filepath.Join(workspace, filepath.FromSlash(repo)), os.Getenv)
		for _, h := range rp.Hooks {
			why := "the git hooks directory of " + repoName(repo) + " (core.hooksPath), whose hooks run outside the sandbox at your next commit"
			add(h, why)
			if filepath.Base(h) == "_" {
				// husky's layout: the hooks in .husky/_ run the scripts one level up.
				add(filepath.Dir(h), why)
			}
		}
		for _, inc := range rp.Includes {
			add(inc, "git configuration that "+repoName(repo)+" includes, which can name programs git runs outside the sandbox")
		}
	}
	slices.SortStableFunc(out, func(a, b Guarded) int { return strings.Compare(a.Rel, b.Rel) })
	return slices.CompactFunc(out, func(a, b Guarded) bool { return a.Rel == b.Rel })
}

func repoName(repo string) string {
	if repo == "." || repo == "" {
		return "the workspace's repository"
	}
	return "the repository in " + repo
}

// repoOf is the work tree of a version-control entry found by the walk: the directory holding
// it, when it is a .git.
func repoOf(rel string) (string, bool) {
	if path.Base(rel) != ".git" {
		return "", false
	}
	return path.Dir(rel), true
}
