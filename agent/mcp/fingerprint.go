package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/reprise-dev/reprise/agent/fspath"
)

// A workspace server runs with the user's rights once trusted, and a sandboxed command may edit
// the workspace: the trust is remembered by what the server can load from there, so that a server
// whose code changed is a new one, asked about again. Not only the script its command names: what
// the script loads beside it (a json.py next to server.py, a require'd module, node_modules), the
// package `python -m` runs, the module `go run` builds, the project npx or uv run from.

// Bounds of what TrustFingerprint reads: past them, a file counts by its size, inode and change
// time (which no program can set back), so any change to it still changes the fingerprint.
const (
	maxHashedFile  = 4 << 20
	maxHashedTotal = 64 << 20
)

// TrustFingerprint is what the user's trust in a workspace-declared server is remembered by: its
// Fingerprint and the content of the workspace trees it can load code from (Loads).
func TrustFingerprint(c ServerConfig, workspace string) string {
	fp := Fingerprint(c)
	if !c.Workspace || workspace == "" {
		return fp
	}
	h := sha256.New()
	h.Write([]byte(fp))
	budget := int64(maxHashedTotal)
	for _, root := range Loads(c, workspace) {
		hashTree(h, root, &budget)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Loads are the workspace directories (or files) a workspace server can load code from: the
// directory of each file its command and arguments name (a script at the root: the whole
// workspace), each directory they name, the top package of `python -m`, the module of `go run`,
// the working directory of the package runners (npx, uv, …). Paths outside the workspace are left
// out; one inside another is not repeated.
func Loads(c ServerConfig, workspace string) []string {
	dir := workspace
	if c.Cwd != "" {
		dir = resolveIn(c.Cwd, workspace, workspace)
	}
	var roots []string
	add := func(p string) {
		if within(workspace, p) {
			roots = append(roots, p)
		}
	}
	words := append([]string{c.Command}, c.Args...)
	for i, word := range words {
		cands := []string{word}
		if _, v, ok := strings.Cut(word, "="); ok {
			cands = append(cands, v)
		}
		for _, w := range cands {
			p := resolveIn(w, dir, workspace)
			st, err := os.Stat(p)
			switch {
			case err != nil:
			case st.Mode().IsRegular():
				add(filepath.Dir(p))
			case st.IsDir() && i > 0:
				add(p)
			}
		}
		if word == "-m" && i+1 < len(words) { // python -m pkg.mod: the top package, in the cwd
			top, _, _ := strings.Cut(words[i+1], ".")
			for _, p := range []string{filepath.Join(dir, top), filepath.Join(dir, top+".py")} {
				if _, err := os.Stat(p); err == nil {
					add(p)
				}
			}
		}
	}
	switch base := strings.TrimSuffix(filepath.Base(c.Command), ".exe"); {
	case base == "go" && len(c.Args) > 0 && c.Args[0] == "run":
		add(moduleRoot(dir, workspace))
	case slices.Contains([]string{"npx", "pnpm", "pnpx", "yarn", "bunx", "bun", "uv", "uvx", "poetry", "pipenv", "deno"}, base):
		add(dir)
	}
	slices.Sort(roots)
	roots = slices.Compact(roots)
	return slices.DeleteFunc(roots, func(p string) bool {
		return slices.ContainsFunc(roots, func(q string) bool { return q != p && within(q, p) })
	})
}

// moduleRoot is the nearest directory from dir up to workspace that holds a go.mod, else dir.
func moduleRoot(dir, workspace string) string {
	for d := dir; within(workspace, d); d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if d == workspace {
			break
		}
	}
	return dir
}

// within reports whether p is dir or inside it.
func within(dir, p string) bool {
	_, ok := fspath.Within(dir, p)
	return ok
}

// hashTree writes into h every entry under root, in lexical order: its path, its kind, a link's
// target, a file's content while budget lasts (then its size, inode and change time). Version
// control metadata is left out: no server loads code from there.
func hashTree(h hash.Hash, root string, budget *int64) {
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			fmt.Fprintf(h, "\n%s: %v", p, err)
			return nil
		}
		if d.IsDir() && p != root && slices.Contains([]string{".git", ".hg", ".svn", ".jj", ".sl", ".bzr"}, d.Name()) {
			return filepath.SkipDir
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		fmt.Fprintf(h, "\n%s %v:", p, info.Mode().Type())
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			h.Write([]byte(target))
		case info.Mode().IsRegular() && info.Size() <= maxHashedFile && info.Size() <= *budget:
			if f, err := os.Open(p); err == nil {
				n, _ := io.Copy(h, io.LimitReader(f, maxHashedFile))
				f.Close()
				*budget -= n
			}
		case info.Mode().IsRegular():
			fmt.Fprintf(h, "%d %s", info.Size(), changeStamp(info))
		}
		return nil
	})
}
