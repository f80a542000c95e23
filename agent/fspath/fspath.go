// Package fspath holds the path checks the file tools and the command policy share: whether a
// path lies in a directory, and where a path that may not exist yet really leads.
package fspath

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
)

// Within returns path relative to base when it is base or lies under it (both absolute and
// clean).
func Within(base, path string) (string, bool) {
	rel, err := filepath.Rel(base, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return rel, true
}

// ResolveExisting evaluates the symlinks of the longest existing prefix of abs and appends the
// rest, which does not exist yet (a file about to be written, its new parent directories).
func ResolveExisting(abs string) (string, error) {
	var rest []string
	for p := abs; ; {
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			for i := len(rest) - 1; i >= 0; i-- {
				real = filepath.Join(real, rest[i])
			}
			return real, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(p)
		if parent == p {
			return abs, nil
		}
		rest = append(rest, filepath.Base(p))
		p = parent
	}
}
