// Package roots judges whether a directory is too broad to be a workspace. A workspace is what
// the agent may read, search and change, and where its commands may write: the root of the file
// system, the home directory or a system directory given as one (a misconfigured root marker, an
// editor opened on ~, `reprise run` started from ~, or a hostile client) would give the model all
// of it, with no warning. Every front-end (the LSP server, the ACP server, `reprise run`) asks
// Broad the same question, and uses such a directory only once the user confirms it.
package roots

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// systemDirs are directories no project lives in: a workspace there is one of them or a tree of
// programs, logs and other users' files. Absolute, as the OS writes them; home directories and
// their parents are judged apart (Broad).
var systemDirs = []string{
	"/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32", "/media",
	"/mnt", "/opt", "/proc", "/root", "/run", "/sbin", "/snap", "/srv", "/sys", "/tmp", "/usr",
	"/usr/bin", "/usr/lib", "/usr/local", "/usr/share", "/var", "/var/lib", "/var/log", "/var/tmp",
	"/nix", "/nix/store",
	// macOS
	"/Applications", "/Library", "/System", "/Users", "/Volumes", "/private", "/private/etc",
	"/private/tmp", "/private/var", "/cores",
}

// Broad says why dir is too broad to be a workspace without the user's confirmation, or "" when
// it is not: the root of a file system (/, C:\), the home directory or a directory holding it
// (/home, /Users), a system directory (systemDirs, Windows' own and program folders) or the temp
// directory itself. home is the user's home directory ("" if unknown). Both are compared as given
// and with their symlinks resolved, so a link to / is judged as /. The reason reads after "is":
// "the workspace / is the root of the file system".
func Broad(dir, home string) string {
	for _, r := range variants(dir) {
		if why := broadPath(r, variants(home)); why != "" {
			return why
		}
	}
	return ""
}

// Home is the home directory Broad compares with: "" when it is unknown.
func Home() string {
	h, _ := os.UserHomeDir()
	return h
}

// variants is p cleaned, and p with its symlinks resolved when that differs; none for "".
func variants(p string) []string {
	if p == "" {
		return nil
	}
	out := []string{filepath.Clean(p)}
	if r, err := filepath.EvalSymlinks(p); err == nil && filepath.Clean(r) != out[0] {
		out = append(out, filepath.Clean(r))
	}
	return out
}

func broadPath(root string, homes []string) string {
	if filepath.Dir(root) == root {
		return "the root of the file system"
	}
	for _, h := range homes {
		switch {
		case samePath(root, h):
			return "your home directory"
		case within(h, root):
			return "a directory that holds your home directory"
		}
	}
	system := systemDirs
	if runtime.GOOS == "windows" {
		system = nil
		for _, v := range []string{"SystemRoot", "ProgramFiles", "ProgramFiles(x86)", "ProgramData"} {
			if d := os.Getenv(v); d != "" {
				system = append(system, d)
			}
		}
	}
	for _, d := range system {
		if samePath(root, d) {
			return "a system directory"
		}
	}
	if samePath(root, os.TempDir()) {
		return "the temporary directory, shared with other programs"
	}
	return ""
}

// samePath compares two cleaned paths as the OS does: without case on Windows and macOS (their
// usual file systems ignore it).
func samePath(a, b string) bool {
	if runtime.GOOS == "windows" || runtime.GOOS == "darwin" {
		return strings.EqualFold(a, b)
	}
	return a == b
}

// within reports whether p is strictly inside dir.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
