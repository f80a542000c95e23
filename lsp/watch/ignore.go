package watch

import (
	"path"
	"strings"
)

// ignoredDirs churn on every install or build and are not edited by hand: watching them would
// spend the watch budget and flood batches. vendor/ is real, edited source and is kept.
var ignoredDirs = map[string]bool{
	".git": true, ".hg": true, ".svn": true,
	"node_modules": true, ".venv": true, "venv": true,
	"__pycache__": true, ".mypy_cache": true, ".pytest_cache": true, ".ruff_cache": true, ".tox": true,
	"target": true, "dist": true, "build": true, "out": true, ".next": true,
	".cache": true, ".idea": true, ".gradle": true,
}

// defaultIgnore is the Ignore used when Options.Ignore is nil. It skips directories that churn
// without being edited by hand: version control (.git, .hg, .svn), dependencies and virtual
// environments (node_modules, .venv, venv), caches (__pycache__, .mypy_cache, .pytest_cache,
// .ruff_cache, .tox, .cache, .gradle, .idea) and build output (target, dist, build, out, .next,
// bazel-*); vendor is kept. It drops editor scratch files whose churn says nothing about the
// source: Vim swap files (*.swp, *.swo, *.swx) and its 4913 write probe, backups (*~) and Emacs
// lock files (.#*).
func defaultIgnore(rel string, isDir bool) bool {
	name := path.Base(rel)
	if isDir {
		return ignoredDirs[name] || strings.HasPrefix(name, "bazel-")
	}
	switch {
	case name == "4913",
		strings.HasSuffix(name, "~"),
		strings.HasPrefix(name, ".#"),
		strings.HasSuffix(name, ".swp"), strings.HasSuffix(name, ".swo"), strings.HasSuffix(name, ".swx"):
		return true
	}
	return false
}
