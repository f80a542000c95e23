// Package ignore decides which files an agent does not look at, as git and ripgrep do:
// .gitignore files at every level, the repository's info/exclude, the user's excludes file, and
// .repriseignore files for what stays in git but out of the agent's view. WalkOrdered (and
// WalkSorted) traverse a tree with those rules and ripgrep's defaults, reading directories in
// parallel and handing entries over in a stable order.
//
// The matcher is a port of git's own code (dir.c, wildmatch.c) rather than a library: the Go
// ones either miss parts of the syntax and precedence or come with a large module (go-git);
// the tests compare it with git check-ignore on generated trees.
package ignore

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

// Per-directory rule files. A .repriseignore has the .gitignore syntax and wins over every git
// rule: it hides what a project keeps in git from the agent (or, with "!", shows what git
// ignores).
const (
	GitIgnore     = ".gitignore"
	RepriseIgnore = ".repriseignore"
)

// Case says how patterns compare letters.
type Case uint8

const (
	// CaseGit follows the repository's core.ignoreCase (false when its config lacks it); outside
	// a repository, the usual default of the OS: insensitive on Windows and macOS, whose file
	// systems are, and where git init sets it so.
	CaseGit Case = iota
	CaseSensitive
	CaseInsensitive // ASCII letters only, as git's
)

// Options say where the rules come from beside the tree itself.
type Options struct {
	Case Case
	// Getenv reads HOME (USERPROFILE on Windows when HOME is unset), XDG_CONFIG_HOME and
	// GIT_CONFIG_GLOBAL, which locate the user's git config and excludes file on the real file
	// system; nil means os.Getenv. One returning "" for all leaves the user's files out.
	Getenv func(string) string
}

// Rule is the ignore-file line that decided a path, for explaining why a file is not shown.
type Rule struct {
	// Source is the file: a path in the matcher's file system ("a/.gitignore",
	// ".git/info/exclude") or, for the user's excludes file and a linked worktree's
	// info/exclude, a path on the real file system.
	Source  string
	Line    int    // 1-based
	Pattern string // as written, trailing spaces trimmed
	Negated bool   // a "!" line: the path is not ignored
}

// Matcher answers whether paths of one tree are ignored. It reads the rule files of a directory
// the first time a path in it is asked about and keeps them: build a new Matcher when rule files
// change. It is safe for concurrent use.
type Matcher struct {
	fsys   fs.FS
	fold   bool
	repo   bool      // the root is a repository's
	global *ruleFile // the user's excludes file; nil when there is none
	root   *dirNode

	mu   sync.Mutex          // guards dirs
	dirs map[string]*dirNode // by path, the directories Explain went through
}

// dirNode holds the rules that apply to the entries of one directory.
type dirNode struct {
	excluded *hit // for a node in Matcher.dirs: what ignores this directory, if anything does
	// The .repriseignore files of the directory and its ancestors, deepest first.
	reprise []scope
	// The .gitignore files from the nearest repository root (or the matcher's root) down,
	// deepest first, then that repository's info/exclude and the user's excludes file.
	git []scope
}

// scope is a rule file applied from a directory: its patterns are relative to base.
type scope struct {
	file *ruleFile
	base string // from the root, no trailing slash; "" for the root
}

// hit is a rule that matched.
type hit struct {
	file *ruleFile
	rule *rule
}

func (h hit) public() Rule {
	return Rule{Source: h.file.source, Line: h.rule.line, Pattern: h.rule.text, Negated: h.rule.flags&negative != 0}
}

// New returns a Matcher for the tree fsys holds; paths given to it are relative to fsys's root.
// The rule files in the tree are read through fsys, and so are a repository's info/exclude and
// config when .git is a directory; the user's files, and the metadata a .git file points to
// outside the tree (a linked worktree), are read from the real file system. Unreadable rule
// files are left out, as git warns and goes on.
func New(fsys fs.FS, opts Options) *Matcher {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	m := &Matcher{fsys: fsys, dirs: map[string]*dirNode{}}
	var cfg userConfig
	for _, name := range globalConfigs(getenv) {
		if data, err := readLimited(os.Open(name)); err == nil {
			cfg.readConfig(data)
		}
	}
	_, err := fs.Lstat(fsys, ".git")
	m.repo = err == nil
	if m.repo {
		if g, ok := findGitDir(fsys, "."); ok {
			if data, err := g.read("config"); err == nil {
				cfg.readConfig(data)
			}
		}
	}
	switch opts.Case {
	case CaseSensitive:
	case CaseInsensitive:
		m.fold = true
	default:
		m.fold = cfg.ignoreCase || !cfg.caseSet && !m.repo && (runtime.GOOS == "windows" || runtime.GOOS == "darwin")
	}
	m.global = m.readGlobal(cfg.excludesFile, getenv)
	m.root = m.newNode(nil, "", m.probe(""))
	return m
}

// readGlobal reads core.excludesFile, or git's default $XDG_CONFIG_HOME/git/ignore. A relative
// path is taken from the tree's root, where git runs.
func (m *Matcher) readGlobal(name string, getenv func(string) string) *ruleFile {
	if name == "" {
		name = xdgGit(getenv, "ignore")
	} else {
		name = expandHome(name, getenv)
	}
	var data []byte
	var err error
	switch {
	case name == "":
		return nil
	case filepath.IsAbs(name):
		data, err = readLimited(os.Open(name))
	case fs.ValidPath(filepath.ToSlash(name)):
		data, err = readLimited(m.fsys.Open(filepath.ToSlash(name)))
	default:
		return nil
	}
	if err != nil {
		return nil
	}
	return parseRules(name, data)
}

// Ignored reports whether the path is ignored: by a rule matching it, or because a directory
// above it is (git does not look inside an ignored directory, so nothing there can be
// re-included). rel is slash-separated from the root, as io/fs paths are; "." and paths that
// are not valid io/fs paths are never ignored.
func (m *Matcher) Ignored(rel string, isDir bool) bool {
	r, ok := m.Explain(rel, isDir)
	return ok && !r.Negated
}

// Explain returns the rule that decides the path, as git check-ignore -v shows it: the rule
// ignoring its outermost ignored parent directory, else the last matching line of the
// highest-precedence file that has one (.repriseignore files deepest first, then .gitignore
// files deepest first, info/exclude, the user's excludes file). ok is false when no rule
// matches; a Negated rule means the path is not ignored.
func (m *Matcher) Explain(rel string, isDir bool) (r Rule, ok bool) {
	if rel == "." || !fs.ValidPath(rel) {
		return Rule{}, false
	}
	n := m.root
	for i := 0; i < len(rel); i++ {
		if rel[i] != '/' {
			continue
		}
		if n = m.cached(n, rel[:i]); n.excluded != nil {
			return n.excluded.public(), true
		}
	}
	h, ok := m.match(n, rel, path.Base(rel), isDir)
	if !ok {
		return Rule{}, false
	}
	return h.public(), true
}

// cached returns the node of dir, a child of parent, reading its rules the first time. Two
// callers may build the same node at once; the first stored wins.
func (m *Matcher) cached(parent *dirNode, dir string) *dirNode {
	m.mu.Lock()
	n := m.dirs[dir]
	m.mu.Unlock()
	if n != nil {
		return n
	}
	if h, ok := m.match(parent, dir, path.Base(dir), true); ok && h.rule.flags&negative == 0 {
		n = &dirNode{excluded: &h}
	} else {
		n = m.newNode(parent, dir, m.probe(dir))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if old := m.dirs[dir]; old != nil {
		return old
	}
	m.dirs[dir] = n
	return n
}

// chain builds the node of dir through its ancestors, ignored or not: a walk's start is
// searched even when ignored, with the rules that apply inside it.
func (m *Matcher) chain(dir string) *dirNode {
	n := m.root
	if dir == "." {
		return n
	}
	for i := 0; i <= len(dir); i++ {
		if i == len(dir) || dir[i] == '/' {
			n = m.newNode(n, dir[:i], m.probe(dir[:i]))
		}
	}
	return n
}

// present says which special entries a directory has.
type present uint8

const (
	hasGitIgnore present = 1 << iota
	hasRepriseIgnore
	hasGit // a repository's root: its own info/exclude, no .gitignore from above
)

// probe looks for the special entries of dir. Like git, a rule file that is a symbolic link is
// not read.
func (m *Matcher) probe(dir string) present {
	var p present
	if fi, err := fs.Lstat(m.fsys, join(dir, GitIgnore)); err == nil && fi.Mode().IsRegular() {
		p |= hasGitIgnore
	}
	if fi, err := fs.Lstat(m.fsys, join(dir, RepriseIgnore)); err == nil && fi.Mode().IsRegular() {
		p |= hasRepriseIgnore
	}
	if dir != "" {
		if _, err := fs.Lstat(m.fsys, join(dir, ".git")); err == nil {
			p |= hasGit
		}
	}
	return p
}

// presentIn is probe for a directory already read.
func presentIn(entries []fs.DirEntry) present {
	var p present
	for _, e := range entries {
		switch e.Name() {
		case GitIgnore:
			if e.Type().IsRegular() {
				p |= hasGitIgnore
			}
		case RepriseIgnore:
			if e.Type().IsRegular() {
				p |= hasRepriseIgnore
			}
		case ".git":
			p |= hasGit
		}
	}
	return p
}

// newNode reads the rule files of dir ("" for the root) and stacks them on its parent's. A
// nested repository starts its own git chain, as ripgrep does and as git would inside it.
func (m *Matcher) newNode(parent *dirNode, dir string, p present) *dirNode {
	n := &dirNode{}
	var reprise, git []scope
	if parent != nil {
		reprise, git = parent.reprise, parent.git
	}
	if parent == nil || p&hasGit != 0 {
		git = m.repoScopes(dir, p&hasGit != 0 || parent == nil && m.repo)
	}
	n.reprise = m.stack(p&hasRepriseIgnore != 0, dir, RepriseIgnore, reprise)
	n.git = m.stack(p&hasGitIgnore != 0, dir, GitIgnore, git)
	return n
}

// stack puts dir's rule file, if it has one, in front of the inherited scopes, which are shared
// and never modified.
func (m *Matcher) stack(has bool, dir, name string, inherited []scope) []scope {
	if !has {
		return inherited
	}
	file := join(dir, name)
	data, err := readLimited(m.fsys.Open(file))
	if err != nil {
		return inherited
	}
	return append([]scope{{parseRules(file, data), dir}}, inherited...)
}

// repoScopes are the rules applying below a repository root (or the matcher's root): its
// info/exclude, then the user's excludes file, both anchored at that root.
func (m *Matcher) repoScopes(dir string, repo bool) []scope {
	var s []scope
	if repo {
		if g, ok := findGitDir(m.fsys, join(dir, ".")); ok {
			if data, err := readLimited(g.open("info/exclude")); err == nil {
				s = append(s, scope{parseRules(g.path("info/exclude"), data), dir})
			}
		}
	}
	if m.global != nil {
		s = append(s, scope{m.global, dir})
	}
	return s
}

// match finds the rule deciding rel (base name name) among the rules of its directory n.
func (m *Matcher) match(n *dirNode, rel, name string, isDir bool) (hit, bool) {
	for _, list := range [2][]scope{n.reprise, n.git} {
		for _, s := range list {
			rules := s.file.rules
			for i := len(rules) - 1; i >= 0; i-- {
				if rules[i].match(rel, name, isDir, s.base, m.fold) {
					return hit{s.file, &rules[i]}, true
				}
			}
		}
	}
	return hit{}, false
}

// excludes reports whether a rule ignores the entry rel of directory n.
func (m *Matcher) excludes(n *dirNode, rel, name string, isDir bool) bool {
	h, ok := m.match(n, rel, name, isDir)
	return ok && h.rule.flags&negative == 0
}

// maxRuleFile is the size above which git ignores a rule file ("excessively large"): a tree
// cannot make the matcher hold gigabytes.
const maxRuleFile = 100 << 20

var errTooLarge = errors.New("rule file too large")

// readLimited reads a rule file just opened, unless it is over maxRuleFile.
func readLimited(f io.ReadCloser, err error) ([]byte, error) {
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxRuleFile+1))
	if err == nil && len(data) > maxRuleFile {
		return nil, errTooLarge
	}
	return data, err
}

// join is path.Join for a directory ("" or "." for the root) and a name.
func join(dir, name string) string {
	if dir == "" || dir == "." {
		return name
	}
	if name == "." {
		return dir
	}
	return dir + "/" + name
}

// Hidden reports whether a path has an element starting with a dot, which ripgrep skips unless
// asked. "." itself is not hidden.
func Hidden(rel string) bool {
	for elem := range strings.SplitSeq(rel, "/") {
		if len(elem) > 1 && elem[0] == '.' && elem != ".." {
			return true
		}
	}
	return false
}

// binarySniff is how much of a file Binary looks at, as ripgrep.
const binarySniff = 8 << 10

// Binary reports whether a file starting with head looks binary: a NUL byte in its first 8 KiB,
// ripgrep's test. Searching such a file prints noise, so searchers skip it.
func Binary(head []byte) bool {
	return bytes.IndexByte(head[:min(len(head), binarySniff)], 0) >= 0
}
