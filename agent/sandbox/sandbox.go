// Package sandbox confines the commands the agent runs. A command the model asks for may have been
// steered by a file it read, and the allowlist lets build and test commands run workspace code
// without a question, so every command runs where it can do little harm: on Linux under Landlock
// (read anywhere, write only to the workspace, the temp dir and the toolchains' caches, no TCP
// unless allowed), on macOS under sandbox-exec with an equivalent profile.
//
// On Linux the confinement is applied by the reprise binary itself, re-executed as a supervisor: a
// child subreaper (so nothing the command starts outlives it, setsid included) that restricts one
// of its threads and starts the command from it. Init must be called first thing in main (and in
// TestMain of packages whose tests run commands) for the binary to play that part.
package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Mode is the `sandbox` setting.
type Mode string

const (
	// WorkspaceWrite confines writes to the workspace, the temp dir and the toolchain caches.
	WorkspaceWrite Mode = "workspace-write"
	// Off runs commands with the user's full rights (they are still supervised: nothing outlives
	// the call).
	Off Mode = "off"
)

// ParseMode accepts the setting's values; "" is the default, WorkspaceWrite.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case "", WorkspaceWrite:
		return WorkspaceWrite, nil
	case Off:
		return Off, nil
	}
	return "", fmt.Errorf("sandbox must be %q or %q, got %q", WorkspaceWrite, Off, s)
}

// Config says how commands are confined.
type Config struct {
	Mode Mode
	// AllowNetwork lets commands open TCP connections and listen (the `allowNetwork` setting).
	AllowNetwork bool
	// Workspace is the absolute workspace root: writable.
	Workspace string
	// Writable are other directories commands may write to; nil means DefaultWritable().
	Writable []string
	// Cache is the sandbox's own build cache, writable; "" means WorkspaceCache() (and none when
	// Writable is given, as tests do).
	Cache string
	// TempDir is the directory mounted on /tmp for confined commands (their TMPDIR), so that
	// they neither see the user's temporary files and sockets nor leave anything among them; ""
	// means a directory under Cache (and none when Writable is given, as tests do).
	TempDir string
	// HidePaths are more paths commands may not read (the `hidePaths` setting), besides
	// CredentialPaths.
	HidePaths []string
	// ReadPaths are more paths under the home directory commands may read (the `readPaths`
	// setting; "~/" for the home), besides the toolchains' (home.go): the rest of the home is
	// hidden from them.
	ReadPaths []string
	// MaxProcesses bounds the processes and threads a command may have at once, whatever the
	// mode (a fork bomb stops there and the machine goes on); 0 means DefaultMaxProcesses(), a
	// negative value no limit.
	MaxProcesses int
	// MaxMemory bounds the private writable memory, in bytes, each process of a command may map
	// (an allocation past it fails there instead of waking the OOM killer, which may pick the
	// editor); 0 means half the physical memory, a negative value no limit. At least MinMemory.
	MaxMemory int64
	// MaxTemp bounds what the private temp dir may hold, in bytes, and the size of the private
	// /dev/shm: a command that fills the temp dir past it is killed and the dir emptied; 0 means
	// DefaultMaxTemp, a negative value no bound.
	MaxTemp int64
}

// DefaultMaxTemp is the private temp dir's bound: room for a build's or a test's temporary
// files, not for a disk filled by a loop.
const DefaultMaxTemp = 1 << 30

// Sandbox runs commands under a Config. Its zero value is not usable; New probes the system once.
type Sandbox struct {
	cfg    Config
	reason string   // why commands run unconfined although the mode asks for a sandbox; "" if confined
	hide   []string // what commands may not read: credentials and the hidePaths setting
	// hostTemp: the writable directories are the defaults, so where there is no private temp dir
	// the system's (and /dev/shm) are writable instead.
	hostTemp bool
	// ownTemp: TempDir was derived from Cache, so that each session gets one of its own
	// (ForSession) and removes it when it ends (RemoveTemp).
	ownTemp bool
}

// New returns the sandbox for cfg, probing what the OS offers.
func New(cfg Config) *Sandbox {
	if cfg.Mode == "" {
		cfg.Mode = WorkspaceWrite
	}
	defaulted := cfg.Writable == nil
	if defaulted {
		cfg.Writable = DefaultWritable(os.Getenv, cfg.AllowNetwork)
		if cfg.Cache == "" {
			cfg.Cache = WorkspaceCache(os.Getenv, cfg.Workspace)
		}
	}
	ownTemp := cfg.TempDir == "" && cfg.Cache != ""
	if ownTemp {
		cfg.TempDir = filepath.Join(cfg.Cache, "tmp", "shared")
	}
	hide := append(CredentialPaths(os.Getenv, cfg.HidePaths), runtimeDir(os.Getenv))
	s := &Sandbox{cfg: cfg, hide: append(hide, repriseOwn(os.Getenv)...), hostTemp: defaulted, ownTemp: ownTemp}
	if cfg.Mode == WorkspaceWrite {
		s.reason = probe(cfg)
		if why := os.Getenv(UnavailableEnv); why != "" {
			s.reason = UnavailableEnv + ": " + why
		}
	}
	return s
}

// UnavailableEnv names the variable that, when set, makes New behave as on a machine without a sandbox (every command is
// then asked): the attack tests run once this way to check that path. It can only make Reprise
// stricter.
const UnavailableEnv = "REPRISE_SANDBOX_UNAVAILABLE"

// Unavailable returns a sandbox that says it cannot confine anything, for reason: what a machine
// without Landlock gets (used by tests to run the same attacks on both paths).
func Unavailable(cfg Config, reason string) *Sandbox {
	s := New(Config{Mode: Off, Workspace: cfg.Workspace, Writable: cfg.Writable, Cache: cfg.Cache,
		MaxProcesses: cfg.MaxProcesses, MaxMemory: cfg.MaxMemory})
	s.cfg.Mode = cfg.Mode
	s.reason = reason
	return s
}

// Confined reports whether commands run confined. When they do not although the mode asks for it,
// reason says why (an old kernel, an OS without a sandbox), so the caller can ask about every
// command instead and tell the user once.
func (s *Sandbox) Confined() (ok bool, reason string) {
	if s == nil {
		return false, "no sandbox configured"
	}
	if s.cfg.Mode == Off {
		return false, "the sandbox setting is off"
	}
	if s.reason != "" {
		return false, s.reason
	}
	if why := namespacesUnavailable(); why != "" {
		// Landlock still confines writes, but what only the namespaces close would stay open to
		// every allowlisted build and test: each command is asked instead.
		return false, "user namespaces are not available (" + why + "), so " + Unprotected
	}
	return true, ""
}

// landlock reports whether commands run under the Landlock rules, whole or in part.
func (s *Sandbox) landlock() bool {
	return s != nil && s.cfg.Mode == WorkspaceWrite && s.reason == ""
}

// Mode is the configured mode.
func (s *Sandbox) Mode() Mode { return s.cfg.Mode }

// Config returns the configuration, writable directories resolved.
func (s *Sandbox) Config() Config {
	c := s.cfg
	c.Writable = slices.Clone(c.Writable)
	return c
}

// Describe says in one line what a confined command may do, for the tool description and logs.
func (s *Sandbox) Describe() string {
	if ok, reason := s.Confined(); !ok {
		return "Commands are not sandboxed (" + reason + ")."
	}
	net := "no network"
	if s.cfg.AllowNetwork {
		net = "network allowed"
	}
	return "Commands run in a sandbox: they can read the system, the workspace and the toolchains, not the rest of your home directory, and write only to the workspace (not its version control, git hooks or editor settings), a private temp dir and build caches; " + net + "."
}

// NetworkOpen says what allowing the network opens, for the front-ends to show once when the
// user allowed it; "" when the network is off or the sandbox not in use.
func (s *Sandbox) NetworkOpen() string {
	if !s.landlock() || !s.cfg.AllowNetwork {
		return ""
	}
	return "sandboxed commands may use the network (allowNetwork): any host on the internet, your local network, " +
		"and the services listening on this machine's loopback; Unix sockets outside the workspace stay closed"
}

// Unprotected says what a sandbox without namespaces leaves open (writes stay confined by
// Landlock, and network off then refuses every IP socket, loopback included).
const Unprotected = "credential files (~/.ssh, ~/.aws, …) would be readable, .git and the editor's settings writable, " +
	"and the user's other terminals, Unix sockets and temp files reachable"

// DefaultWritable lists the directories besides the workspace and the temp dirs that commands may
// write: when the network is allowed, the package caches that downloads fill (Go modules, npm,
// yarn, cargo, pip). With the network off nothing can be downloaded, so they stay read-only: what
// a command writes there would run later outside the sandbox, in the user's next build. Entries
// that do not exist are skipped when the sandbox is applied.
func DefaultWritable(getenv func(string) string, network bool) []string {
	home := getenv("HOME")
	cache := userCache(getenv)
	var dirs []string
	add := func(p string) {
		if p != "" && filepath.IsAbs(p) && !slices.Contains(dirs, filepath.Clean(p)) {
			dirs = append(dirs, filepath.Clean(p))
		}
	}
	if !network {
		return dirs
	}
	first := func(list string) string { p, _, _ := strings.Cut(list, string(os.PathListSeparator)); return p }
	gopath := or(first(getenv("GOPATH")), join(home, "go"))
	add(or(getenv("GOMODCACHE"), join(gopath, "pkg", "mod")))
	add(or(getenv("npm_config_cache"), join(home, ".npm")))
	add(join(cache, "yarn"))
	cargo := or(getenv("CARGO_HOME"), join(home, ".cargo"))
	add(join(cargo, "registry"))
	add(join(cargo, "git"))
	add(or(getenv("PIP_CACHE_DIR"), join(cache, "pip")))
	return dirs
}

// DefaultCache is where the sandbox keeps its per-workspace build caches.
func DefaultCache(getenv func(string) string) string {
	return join(userCache(getenv), "reprise", "sandbox")
}

// WorkspaceCache is the sandbox's own build cache for a workspace: sandboxed commands compile
// into it (GOCACHE) instead of the user's, so a poisoned entry can only reach later commands of
// the same workspace, whose code the attacker controls already, never another project's builds.
// It persists, so only a workspace's first build is cold.
func WorkspaceCache(getenv func(string) string, workspace string) string {
	base := DefaultCache(getenv)
	if base == "" || workspace == "" {
		return base
	}
	sum := sha256.Sum256([]byte(filepath.Clean(workspace)))
	return filepath.Join(base, filepath.Base(workspace)+"-"+hex.EncodeToString(sum[:6]))
}

func userCache(getenv func(string) string) string {
	if c := getenv("XDG_CACHE_HOME"); c != "" {
		return c
	}
	return join(getenv("HOME"), ".cache")
}

func or(v, fallback string) string {
	if v != "" {
		return v
	}
	return fallback
}

// join is filepath.Join that keeps an unknown base unknown.
func join(base string, elem ...string) string {
	if base == "" {
		return ""
	}
	return filepath.Join(append([]string{base}, elem...)...)
}

// Env adapts a command's environment to the sandbox: confined commands build into the sandbox's
// own Go build cache, and where the home is hidden git reads the user's identity from a copy
// (gitIdentity) instead of their configuration. (TMPDIR is set by the confining process, which
// mounts the private /tmp.)
func (s *Sandbox) Env(env []string) []string {
	if !s.landlock() || s.cfg.Cache == "" {
		return env
	}
	out := slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		return strings.HasPrefix(kv, "GOCACHE=") || strings.HasPrefix(kv, "GIT_CONFIG_GLOBAL=")
	})
	out = append(out, "GOCACHE="+filepath.Join(s.cfg.Cache, "go-build"))
	// The user's own build cache read through the workspace's (gocache.go); a GOCACHEPROG of the
	// user's is replaced like their GOCACHE.
	out = slices.DeleteFunc(out, func(kv string) bool { return strings.HasPrefix(kv, "GOCACHEPROG=") })
	if prog := s.goCacheProg(); prog != "" {
		out = append(out, "GOCACHEPROG="+prog)
	}
	if namespacesUnavailable() == "" {
		if p := gitIdentity(os.Getenv, s.cfg.Cache); p != "" {
			out = append(out, "GIT_CONFIG_GLOBAL="+p)
		} else {
			out = append(out, "GIT_CONFIG_GLOBAL=/dev/null")
		}
	}
	return out
}

// spec is what the supervisor is told, as one argv word.
type spec struct {
	Confine   bool     `json:"confine"`
	Network   bool     `json:"network"`
	Workspace string   `json:"workspace"`
	Writable  []string `json:"writable"`
	// Namespace: the command gets its own user and mount namespaces, where the file system is
	// read-only but for Workspace and Writable, ReadOnly (inside Workspace) is read-only too,
	// /dev/pts and /dev/shm are private instances, TempDir is mounted on /tmp, and Hide and
	// Sockets are covered by empty read-only mounts.
	Namespace bool     `json:"namespace,omitempty"`
	ReadOnly  []string `json:"readOnly,omitempty"`
	TempDir   string   `json:"tempDir,omitempty"`
	Hide      []string `json:"hide,omitempty"`
	Sockets   []string `json:"sockets,omitempty"`
	// Home is covered by an empty read-only directory, in which Keep (toolchains, caches, the
	// user's readPaths) are mounted back read-only; "" leaves the home as it is.
	Home  string            `json:"home,omitempty"`
	Keep  []string          `json:"keep,omitempty"`
	Links map[string]string `json:"links,omitempty"` // symlinks made again in the covered home

	// NetNS: a network namespace of its own too, with only loopback: nothing it sends over IP
	// leaves it, and nothing outside can connect in.
	NetNS bool `json:"netns,omitempty"`
	// MaxProcs and MaxData are the command's Limits, in every mode; 0 is none.
	MaxProcs int   `json:"maxProcs,omitempty"`
	MaxData  int64 `json:"maxData,omitempty"`
	// MaxTemp bounds TempDir (the supervisor watches it) and sizes the private /dev/shm; 0 is none.
	MaxTemp int64 `json:"maxTemp,omitempty"`
	// Hold: the confining process waits for EOF on fd 3 before it execs the command, while the
	// supervisor puts it in a pids cgroup.
	Hold bool `json:"hold,omitempty"`
	// Group names the command's cgroups: unique to it, chosen by the server, which sweeps them
	// when the supervisor is killed before its own cleanup. Never a pid: pids are reused, and a
	// group named after one could be another command's.
	Group string `json:"group,omitempty"`
}

// spec is what the supervisor is told for a command of trust, and the version-control snapshot
// it was made from (nil unless the command is unasked and the namespaces work).
func (s *Sandbox) spec(trust Trust) (spec, map[string]bool) {
	confined := s.landlock()
	l := s.cfg.limits()
	sp := spec{Confine: confined, Network: s.cfg.AllowNetwork, Workspace: s.cfg.Workspace, Writable: slices.Clone(s.cfg.Writable),
		MaxProcs: l.Processes, MaxData: l.Memory, MaxTemp: l.Temp}
	if !confined {
		return sp, nil
	}
	if s.cfg.Cache != "" {
		sp.Writable = append(sp.Writable, s.cfg.Cache)
	}
	sp.Namespace = namespacesUnavailable() == ""
	if s.privateTemp() {
		sp.TempDir = s.cfg.TempDir
	} else if s.hostTemp {
		sp.Writable = append(sp.Writable, os.TempDir(), "/dev/shm")
	}
	if !sp.Namespace {
		return sp, nil
	}
	sp.NetNS = mountsPrivateTemp && !s.cfg.AllowNetwork
	read := s.cfg.ReadPaths
	if len(cacheProgram()) > 0 && s.cfg.Cache != "" {
		// The user's Go build cache and the cache program, read-only (gocache.go).
		if user := userGoCache(os.Getenv); user != "" {
			read = append(slices.Clone(read), user, programDir(os.Getenv))
		}
	}
	sp.Home, sp.Keep, sp.Links = homeView(os.Getenv, s.cfg.Workspace, read)
	sp.Hide = hidden(s.hide, append([]string{s.cfg.Workspace, sp.TempDir}, sp.Writable...))
	sp.Sockets = outsideSockets(append([]string{s.cfg.Workspace}, sp.Writable...))
	var vcs map[string]bool
	if trust == Unasked {
		vcs = s.VCSSnapshot()
		sp.ReadOnly = s.protectedPaths(vcs)
	}
	return sp, vcs
}

// privateTemp reports whether confined commands get TempDir on /tmp: where mount namespaces
// work, and unless /tmp is inside the workspace (the workspace would be hidden). A workspace
// under /tmp is mounted back in its place.
func (s *Sandbox) privateTemp() bool {
	return mountsPrivateTemp && s.cfg.TempDir != "" && namespacesUnavailable() == "" && !within(s.cfg.Workspace, "/tmp")
}

// within reports whether p is dir or inside it.
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && !filepath.IsAbs(rel) && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// protectedPaths are the workspace's paths unasked commands may not write: every
// version-control directory, at any depth, and the other protected paths (ProtectedPaths).
func (s *Sandbox) protectedPaths(snapshot map[string]bool) []string {
	var out []string
	for rel := range snapshot {
		p := filepath.Join(s.cfg.Workspace, filepath.FromSlash(rel))
		// A directory, or a file (a worktree's or a submodule's pointer to its git dir, a
		// setting); not a symlink, which the bind would follow out of the workspace.
		if st, err := os.Lstat(p); err == nil && (st.IsDir() || st.Mode().IsRegular()) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// Trust says whether the user saw the command before it ran.
type Trust int

const (
	// Unasked commands ran because a rule allowed them: version-control metadata is read-only
	// for them.
	Unasked Trust = iota
	// Approved commands were shown to the user, who let them run: they may commit.
	Approved
)

// The argv words that make the binary play a sandbox part (see Init).
const (
	superviseArg = "__reprise-supervise"
	confineArg   = "__reprise-confine"
)

// ErrNotInitialized is returned by Command when Init was not called in main: the binary could
// not act as its own supervisor.
var ErrNotInitialized = errors.New("sandbox: Init was not called at start-up")

// Init must be the first thing main (or TestMain) does: when the process was started as a
// supervisor or a confining process, it plays that part and never returns.
func Init() {
	markInitialized()
	if len(os.Args) < 2 {
		return
	}
	switch os.Args[1] {
	case superviseArg:
		os.Exit(supervise(os.Args[2:]))
	case confineArg:
		os.Exit(confine(os.Args[2:]))
	}
}

// failed is what the supervisor exits with when it cannot do its job, after saying why on stderr
// (which the command's output captures, so the model and the user read it).
const failed = 125

func fail(format string, a ...any) int {
	fmt.Fprintf(os.Stderr, "reprise sandbox: "+format+"\n", a...)
	return failed
}
