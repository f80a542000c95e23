package sandbox

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/reprise-dev/reprise/agent/secret"
)

// The Go build cache of sandboxed commands is in two layers (agent/sandbox/gocacheprog): the
// user's own cache, mounted read-only, and the workspace's, the only one written. The go command
// reaches both through GOCACHEPROG, a program that the front-end names once (SetGoCacheProgram:
// the reprise binary itself); without one, commands build into the workspace's cache alone, as
// before, and a workspace's first `go test` compiles the standard library again.

var goCacheProgram struct {
	mu   sync.Mutex
	argv []string // the program and its first arguments; nil: none
}

// SetGoCacheProgram names the GOCACHEPROG program (argv[0] an absolute path) that sandboxed
// commands use to read the user's Go build cache: the reprise binary with its gocacheprog
// subcommand. It is copied once into the sandbox's own directory (programDir), which commands see
// read-only: the binary itself may be where the sandbox hides the home.
func SetGoCacheProgram(argv ...string) {
	goCacheProgram.mu.Lock()
	defer goCacheProgram.mu.Unlock()
	goCacheProgram.argv = append([]string(nil), argv...)
}

// GoCacheProgram is the program SetGoCacheProgram named (nil: none).
func GoCacheProgram() []string { return cacheProgram() }

func cacheProgram() []string {
	goCacheProgram.mu.Lock()
	defer goCacheProgram.mu.Unlock()
	return goCacheProgram.argv
}

// userGoCache is the user's own Go build cache, as the go command finds it (GOCACHE, else the
// user cache directory's go-build), when it exists; "" otherwise.
func userGoCache(getenv func(string) string) string {
	dir := getenv("GOCACHE")
	if dir == "off" {
		return ""
	}
	if dir == "" {
		var base string
		switch runtime.GOOS {
		case "darwin":
			base = join(getenv("HOME"), "Library", "Caches")
		case "windows":
			base = getenv("LocalAppData")
		default:
			base = userCache(getenv)
		}
		dir = join(base, "go-build")
	}
	if !filepath.IsAbs(dir) {
		return ""
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return ""
	}
	return filepath.Clean(dir)
}

// goCacheProg is the GOCACHEPROG value of a confined command: the program, copied into the
// workspace's cache, reading the user's cache and writing the workspace's; "" when there is no
// program or no user cache to read, or the copy failed (the command then builds as before).
func (s *Sandbox) goCacheProg() string {
	argv := cacheProgram()
	user := userGoCache(os.Getenv)
	if len(argv) == 0 || user == "" || s.cfg.Cache == "" {
		return ""
	}
	// The shared copy where commands see it (the home's view mounts it back); else a copy in the
	// workspace's cache, which they always see: a program the go command cannot start would
	// fail every build.
	dir := programDir(os.Getenv)
	if home := secretHome(); dir == "" || home == "" || !within(realPath(home), realPath(filepath.Dir(dir))) {
		dir = filepath.Join(s.cfg.Cache, "bin")
	}
	bin := filepath.Join(dir, filepath.Base(argv[0]))
	if err := installCopy(argv[0], bin); err != nil {
		return ""
	}
	words := append([]string{bin}, argv[1:]...)
	words = append(words, "--read", user, "--write", filepath.Join(s.cfg.Cache, "go-build"))
	for i, w := range words {
		words[i] = quoteWord(w)
	}
	return strings.Join(words, " ")
}

// quoteWord quotes w for the go command's GOCACHEPROG parsing (cmd/internal/quoted): single
// quotes around a word with a space or a double quote, double quotes around one with a single
// quote; a word with both cannot be written, and is left as it is (the command then fails to
// start the program, as a missing one would, and says so).
func quoteWord(w string) string {
	switch {
	case !strings.ContainsAny(w, " \t\n'\""):
		return w
	case !strings.Contains(w, "'"):
		return "'" + w + "'"
	case !strings.Contains(w, `"`):
		return `"` + w + `"`
	}
	return w
}

// programDir is where the cache program is copied: the sandbox's own directory, written by
// Reprise only and mounted read-only for commands; "" when there is no user cache directory.
func programDir(getenv func(string) string) string {
	return join(DefaultCache(getenv), "bin")
}

func secretHome() string { return secret.HomeDir(os.Getenv) }

var installMu sync.Mutex

// installCopy copies src to dst when dst is missing or differs in size or modification time, the
// copy executable and stamped with src's time. A copy, never a link, so that nothing done to one
// reaches the other.
func installCopy(src, dst string) error {
	installMu.Lock()
	defer installMu.Unlock()
	si, err := os.Stat(src)
	if err != nil {
		return err
	}
	if di, err := os.Stat(dst); err == nil && di.Size() == si.Size() && di.ModTime().Equal(si.ModTime()) && di.Mode().IsRegular() {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".install-*")
	if err != nil {
		return err
	}
	_, err = io.Copy(tmp, in)
	err = errors.Join(err, tmp.Chmod(0o755), tmp.Close())
	if err == nil {
		err = os.Chtimes(tmp.Name(), si.ModTime(), si.ModTime())
	}
	if err == nil {
		err = os.Rename(tmp.Name(), dst)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
	}
	return err
}
