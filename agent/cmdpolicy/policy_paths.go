package cmdpolicy

import (
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"

	"github.com/reprise-dev/reprise/agent/fspath"
	"github.com/reprise-dev/reprise/agent/secret"
)

// The paths a command names. The allowlist and the "Always allow" prefixes were written for
// builds, tests and looks at the workspace; a path outside it (`git diff /etc/passwd
// /dev/null`, `ls ~`) is the user's to approve, and a credential location is refused outright,
// under --yes too: nobody means a command of the model to read an SSH key. This reads what the
// line says, like the denylist: a script, or a program that opens files by itself, says nothing;
// the sandbox hiding those locations and the redaction of their contents stand behind it.

// harmlessPaths are the paths outside the workspace that every tool names: they read or write
// nothing of the user's.
var harmlessPaths = map[string]bool{
	"/dev/null": true, "/dev/zero": true, "/dev/random": true, "/dev/urandom": true,
	"/dev/stdin": true, "/dev/stdout": true, "/dev/stderr": true, "/dev/tty": true,
}

// credentials knows where the user's credentials are and what a command's paths lead to.
type credentials struct {
	home   string
	getenv func(string) string
	locs   [][]string // secret.CredentialPaths, split into components
	// homeRels are the locations under home, relative to it, to recognise them under another
	// user's home too (`/root/.ssh`, `~alice/.aws`, `../../../home/alice/.ssh`).
	homeRels [][]string
}

func newCredentials(home string, getenv func(string) string, extra []string) credentials {
	c := credentials{home: home, getenv: getenv}
	for _, p := range secret.CredentialPaths(home, getenv, extra) {
		c.locs = append(c.locs, components(p))
		if home != "" {
			if rel, err := filepath.Rel(home, p); err == nil && filepath.IsLocal(rel) {
				c.homeRels = append(c.homeRels, components(rel))
			}
		}
	}
	return c
}

// components splits a clean path into its names; an absolute path's first is "" (or its volume).
func components(p string) []string { return strings.Split(filepath.ToSlash(p), "/") }

// foldCase: names compared without case, as the default file systems of macOS and Windows open
// them (`~/.SSH/id_rsa` is the key there).
var foldCase = runtime.GOOS == "darwin" || runtime.GOOS == "windows"

// nameMatches compares a name of a path with a credential location's. A name the shell globs
// matches as the shell would: `*` and `?` do not match a leading dot unless written.
func nameMatches(name, loc string, glob bool) bool {
	if foldCase {
		name, loc = strings.ToLower(name), strings.ToLower(loc)
	}
	if !glob || !strings.ContainsAny(name, "*?[") {
		return name == loc
	}
	if strings.HasPrefix(loc, ".") && !strings.HasPrefix(name, ".") {
		return false
	}
	ok, err := path.Match(name, loc)
	return ok || err != nil // a pattern path.Match cannot read may match
}

// under reports whether the path p (components) is at or under loc.
func under(p, loc []string, glob bool) bool {
	if len(p) < len(loc) {
		return false
	}
	for i, name := range loc {
		if !nameMatches(p[i], name, glob) {
			return false
		}
	}
	return true
}

// homeParents are the directories of users' homes, besides the parent of the user's own.
var homeParents = [][]string{{"", "home"}, {"", "Users"}, {"", "var", "home"}}

// pathRef is a path a command names: as written (for the reason), and where it leads.
type pathRef struct {
	written string
	abs     string // absolute and clean; "" for `~user/…`
	// homeRel is set for `~user/…`: in some user's home, this far under it.
	homeRel []string
	glob    bool // holds a pattern the shell expands
}

// inCredentials reports whether r is at or under a credential location: the user's, or the
// same place under another user's home.
func (c credentials) inCredentials(r pathRef) bool {
	rels := [][]string{r.homeRel}
	if r.homeRel == nil {
		p := components(r.abs)
		for _, loc := range c.locs {
			if under(p, loc, r.glob) {
				return true
			}
		}
		rels = nil
		parents := homeParents
		if c.home != "" {
			parents = append(slices.Clone(homeParents), components(filepath.Dir(c.home)))
		}
		for _, parent := range append(parents, []string{""}) { // {""}: /root
			if len(p) > len(parent)+1 && under(p, parent, r.glob) &&
				(len(parent) > 1 || nameMatches(p[1], "root", r.glob)) {
				rels = append(rels, p[len(parent)+1:])
			}
		}
	}
	for _, rel := range rels {
		for _, loc := range c.homeRels {
			if under(rel, loc, r.glob) {
				return true
			}
		}
	}
	return false
}

// pathsOf lists the paths the words of a simple command name: each operand, the value of each
// option (`--output=/x`, `-I/x`; in `-C /x` the path is an operand already), of `if=/x`, and of
// `file:///x`. The command name counts when withName is set or when it is a redirection's
// target (`< ~/.netrc`, which the lexer makes a command of its own). base resolves relative
// paths; "" leaves them out.
func (c credentials) pathsOf(argv []word, base string, withName, psh bool) []pathRef {
	var out []pathRef
	for i, w := range argv {
		if i == 0 && !withName && !w.redir {
			continue
		}
		for _, s := range candidates(w) {
			if r, ok := c.resolve(s, w.dyn, base, psh); ok {
				out = append(out, r)
			}
		}
	}
	return out
}

var assignmentLike = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*=`)

// candidates are the strings of a word that may be paths, braces expanded.
func candidates(w word) []string {
	s := w.s
	var out []string
	switch {
	case s == "" || s == "-" || s == "--":
		return nil
	case strings.HasPrefix(s, "-"):
		if _, v, ok := strings.Cut(s, "="); ok {
			out = []string{v}
		} else if !strings.HasPrefix(s, "--") && len(s) > 2 {
			out = []string{s[2:]} // a value glued to a short option: -I/x, -o../y
		}
	case strings.HasPrefix(s, "file://"):
		out = []string{strings.TrimPrefix(s, "file://")}
	case assignmentLike.MatchString(s):
		_, v, _ := strings.Cut(s, "=")
		out = []string{s, v}
	default:
		out = []string{s}
	}
	if w.dyn {
		var expanded []string
		for _, s := range out {
			expanded = append(expanded, braces(s, 64)...)
		}
		out = expanded
	}
	return out
}

// braces expands the shell's brace lists (`~/.{ssh,aws}`) into at most limit words; a brace
// without a comma stays as written.
func braces(s string, limit int) []string {
	var out []string
	expandBraces(s, limit, &out)
	return out
}

func expandBraces(s string, limit int, out *[]string) {
	if len(*out) >= limit {
		return
	}
	for from := 0; ; {
		i := strings.IndexByte(s[from:], '{')
		if i < 0 {
			*out = append(*out, s)
			return
		}
		open := from + i
		depth, end, commas := 0, -1, []int(nil)
		for j := open; j < len(s) && end < 0; j++ {
			switch s[j] {
			case '{':
				depth++
			case '}':
				if depth--; depth == 0 {
					end = j
				}
			case ',':
				if depth == 1 {
					commas = append(commas, j)
				}
			}
		}
		if end < 0 || len(commas) == 0 {
			from = open + 1 // no list here: look further
			continue
		}
		start := open + 1
		for _, stop := range append(commas, end) {
			expandBraces(s[:open]+s[start:stop]+s[end+1:], limit, out)
			if len(*out) >= limit {
				return
			}
			start = stop + 1
		}
		return
	}
}

var variable = regexp.MustCompile(`\$(?:env:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))`)

// resolve finds where a path leads: `~` and `~/x` are the home directory, `~user/x` another
// user's home, `$NAME` and `${NAME}` (in PowerShell `$env:NAME`) the value the command's
// environment gives; a relative path is under base. ok is false when it cannot be known: a
// variable the environment does not set, another expansion, a relative path without a base.
func (c credentials) resolve(s string, dyn bool, base string, psh bool) (pathRef, bool) {
	r := pathRef{written: s}
	if dyn && strings.Contains(s, "$") {
		unknown := false
		s = variable.ReplaceAllStringFunc(s, func(v string) string {
			m := variable.FindStringSubmatch(v)
			name := m[1] + m[2] + m[3]
			if m[1] != "" && !psh {
				unknown = true // sh reads $env, then ":NAME"
			}
			if name == "HOME" && c.home != "" {
				return c.home
			}
			val := c.getenv(name)
			if val == "" {
				unknown = true
			}
			return val
		})
		if unknown || strings.Contains(s, "$") {
			return pathRef{}, false
		}
	}
	r.glob = dyn && strings.ContainsAny(s, "*?[")
	if rest, ok := strings.CutPrefix(s, "~"); ok {
		user, after, _ := strings.Cut(filepath.ToSlash(rest), "/")
		if user != "" { // ~alice/x
			r.homeRel = strings.Split(path.Clean("/" + after)[1:], "/")
			return r, true
		}
		if c.home == "" {
			return pathRef{}, false
		}
		s = filepath.Join(c.home, after)
	}
	switch {
	case filepath.IsAbs(s):
	case runtime.GOOS == "windows" && (strings.HasPrefix(s, `\`) || strings.HasPrefix(s, "/") || filepath.VolumeName(s) != ""):
		// rooted or drive-relative: somewhere else, whatever the current drive
	case base == "":
		return pathRef{}, false
	default:
		s = filepath.Join(base, s)
	}
	r.abs = filepath.Clean(s)
	return r, true
}

// real is where r leads once the symlinks of its existing part are followed; a pattern is not
// followed.
func (r pathRef) real() string {
	if r.glob || r.abs == "" {
		return r.abs
	}
	if real, err := fspath.ResolveExisting(r.abs); err == nil {
		return real
	}
	return r.abs
}

// workspaceDirs are the workspace as given and with its symlinks followed: a path is inside
// when it is under either.
func workspaceDirs(workspace string) []string {
	ws := filepath.Clean(workspace)
	if real, err := fspath.ResolveExisting(ws); err == nil && real != ws {
		return []string{ws, real}
	}
	return []string{ws}
}

// insideWorkspace reports whether r, followed through its symlinks, stays in the workspace.
func insideWorkspace(dirs []string, r pathRef) bool {
	if r.abs == "" {
		return false
	}
	real := r.real()
	for _, d := range dirs {
		if _, ok := fspath.Within(d, real); ok {
			return true
		}
	}
	return false
}

// bases are the directories a line's relative paths may be relative to: the workspace, and
// those the line changes to (`cd ~ && cat .ssh/id_rsa`, `env -C ~ cat .netrc`).
func (c credentials) bases(workspace string, invs []invocation, psh bool) []string {
	bases := []string{workspace}
	add := func(dir string, dyn bool) {
		if r, ok := c.resolve(dir, dyn, workspace, psh); ok && r.abs != "" && !slices.Contains(bases, r.abs) {
			bases = append(bases, r.abs)
		}
	}
	for _, inv := range invs {
		argv := inv.argv
		if len(argv) == 1 && program(argv[0].s) == "cd" && c.home != "" {
			add(c.home, false) // cd alone goes home
		}
		for i, w := range argv {
			switch {
			case i == 1 && (program(argv[0].s) == "cd" || program(argv[0].s) == "pushd"):
				add(w.s, w.dyn)
			case i > 0 && (argv[i-1].s == "-C" || argv[i-1].s == "--chdir" || argv[i-1].s == "--directory"):
				add(w.s, w.dyn)
			case strings.HasPrefix(w.s, "--chdir=") || strings.HasPrefix(w.s, "--directory="):
				_, dir, _ := strings.Cut(w.s, "=")
				add(dir, w.dyn)
			}
		}
	}
	return bases
}

// credentialNamed returns the first path of the line in a credential location, as written, or
// "". Every word counts, assignments (`F=~/.netrc`) and command names included; a relative path
// is tried against each directory the line may change to, and a path of the workspace is
// followed through its symlinks (a repository can hold a link to ~/.ssh). What is in the
// workspace is never refused here: the file tools read it anyway.
func (c credentials) credentialNamed(workspace string, cmds [][]word, invs []invocation, psh bool) string {
	bases, dirs := []string{""}, []string(nil)
	if workspace != "" {
		bases, dirs = c.bases(workspace, invs, psh), workspaceDirs(workspace)
	}
	all := slices.Clone(invs)
	for _, cmd := range cmds {
		all = append(all, invocation{argv: cmd})
	}
	for _, inv := range all {
		for _, base := range bases {
			for _, r := range c.pathsOf(inv.argv, base, true, psh) {
				if dirs != nil && insideWorkspace(dirs, r) {
					continue
				}
				if c.inCredentials(r) {
					return r.written
				}
				if real := r.real(); dirs != nil && real != r.abs && c.inCredentials(pathRef{abs: real}) {
					return r.written
				}
			}
		}
	}
	return ""
}

// outsideNamed returns the first path of the line outside the workspace, as written, or "": an
// absolute path, `~`, `$HOME`, `..` climbing out, a symlink of the workspace leading out.
// harmlessPaths are not outside.
func (c credentials) outsideNamed(workspace string, invs []invocation, psh bool) string {
	dirs := workspaceDirs(workspace)
	for _, inv := range invs {
		for _, r := range c.pathsOf(inv.argv, workspace, false, psh) {
			if harmlessPaths[filepath.ToSlash(r.abs)] || insideWorkspace(dirs, r) {
				continue
			}
			return r.written
		}
	}
	return ""
}

func credentialReason(written string) string {
	return fmt.Sprintf("reads a credential file (%s)", written)
}

func outsideReason(written string) string {
	return fmt.Sprintf("reads %s, outside the workspace", written)
}
