package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/reprise-dev/reprise/agent/fspath"
)

// place is a file or directory a tool may touch: a path resolved inside the workspace (or, for
// reads, inside SpillDir), with the os.Root to reach it through. Resolution follows symlinks
// itself and checks where they lead, so a link inside the workspace works, absolute or not, while
// one leading out is refused; the os.Root then guards the operations against a link swapped in
// meanwhile.
type place struct {
	root *os.Root
	// rel is the resolved path relative to root, free of symlinks that existed at resolution
	// ("." for the root itself).
	rel string
	// key is rel with slashes: what Result.Path, Overlay, Guard and BeforeChange get. For a
	// saved output it is the absolute path.
	key   string
	spill bool // inside SpillDir: read-only
}

func (p *place) close() { p.root.Close() }

// display names an entry found under the place's root (a slash path from a walk) for the model:
// workspace-relative, or absolute in SpillDir.
func (p *place) display(name string) string {
	if p.spill {
		return filepath.Join(p.root.Name(), filepath.FromSlash(name))
	}
	return name
}

// outside is the refusal for a path that leads out of the workspace, with the path as given.
func outside(given string) string {
	return "path outside the workspace: " + given
}

// locate resolves a path the model gave. An absolute path is accepted only when it lies in the
// workspace (it is then used as relative) or, when allowSpill (read_file, search), in SpillDir;
// anything else — `..` escapes, other absolute paths, symlinks leading out — gives the refusal
// text as problem.
func (e *Env) locate(given string, allowSpill bool) (p *place, problem string) {
	if strings.ContainsRune(given, 0) {
		return nil, "invalid path: it contains a NUL byte"
	}
	base, err := filepath.EvalSymlinks(e.Workspace)
	if err != nil {
		return nil, fmt.Sprintf("cannot open the workspace: %v", err)
	}
	spill := false
	var rel string
	switch {
	case given == "":
		rel = "."
	case filepath.IsAbs(given):
		clean := filepath.Clean(given)
		if r, ok := fspath.Within(filepath.Clean(e.Workspace), clean); ok {
			rel = r
		} else if r, ok := fspath.Within(base, clean); ok {
			rel = r
		} else if sb, sr, ok := e.inSpill(clean); ok && allowSpill {
			base, rel, spill = sb, sr, true
		} else {
			return nil, outside(given)
		}
	case filepath.VolumeName(given) != "" || os.IsPathSeparator(given[0]):
		// Windows: C:x is relative to drive C's current directory, \x to the current drive's
		// root; neither is the workspace.
		return nil, outside(given)
	default:
		rel = filepath.Clean(given)
	}
	if rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, outside(given)
	}
	real, err := fspath.ResolveExisting(filepath.Join(base, rel))
	if err != nil {
		return nil, pathProblem(given, err)
	}
	rel, ok := fspath.Within(base, real)
	if !ok {
		return nil, outside(given)
	}
	root, err := os.OpenRoot(base)
	if err != nil {
		return nil, fmt.Sprintf("cannot open the workspace: %v", err)
	}
	key := filepath.ToSlash(rel)
	if spill {
		key = filepath.Join(base, rel)
	}
	return &place{root: root, rel: rel, key: key, spill: spill}, ""
}

// inSpill reports whether the absolute path abs lies in SpillDir, and where.
func (e *Env) inSpill(abs string) (base, rel string, ok bool) {
	if e.SpillDir == "" {
		return "", "", false
	}
	dir := filepath.Clean(e.SpillDir)
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", "", false
	}
	if r, ok := fspath.Within(dir, abs); ok {
		return real, r, true
	}
	if r, ok := fspath.Within(real, abs); ok {
		return real, r, true
	}
	return "", "", false
}

// pathProblem words a file system error for the model, naming the path it gave.
func pathProblem(given string, err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "file not found: " + given
	case errors.Is(err, fs.ErrPermission):
		return "permission denied: " + given
	case strings.Contains(err.Error(), "path escapes from parent"): // os.Root: a link swapped in
		return outside(given)
	case strings.Contains(err.Error(), "not a directory"):
		return "not a directory: a parent of " + given + " is a file"
	case strings.Contains(err.Error(), "too many levels of symbolic links"):
		return "symlink loop: " + given
	}
	return fmt.Sprintf("%s: %v", given, unwrapPath(err))
}

// unwrapPath drops the absolute path a *fs.PathError carries: the model knows the path it gave.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
