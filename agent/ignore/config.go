package ignore

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// gitDir is a directory of repository metadata: inside the matcher's file system (fsys set,
// dir slash-separated) or, for a linked worktree whose .git file points outside it, on the real
// file system (fsys nil, dir an OS path).
type gitDir struct {
	fsys fs.FS
	dir  string
}

func (g gitDir) path(name string) string {
	if g.fsys == nil {
		return filepath.Join(g.dir, filepath.FromSlash(name))
	}
	return path.Join(g.dir, name)
}

func (g gitDir) read(name string) ([]byte, error) {
	return readLimited(g.open(name))
}

func (g gitDir) open(name string) (io.ReadCloser, error) {
	if g.fsys == nil {
		return os.Open(g.path(name))
	}
	return g.fsys.Open(g.path(name))
}

// resolve turns a path read from a metadata file (gitdir:, commondir) into a gitDir: absolute on
// the real file system, or relative to g. A relative path that leaves fsys is not followed.
func (g gitDir) resolve(p string) (gitDir, bool) {
	switch {
	case filepath.IsAbs(p):
		return gitDir{dir: filepath.Clean(p)}, true
	case g.fsys == nil:
		return gitDir{dir: filepath.Join(g.dir, p)}, true
	}
	joined := path.Join(g.dir, filepath.ToSlash(p))
	if !fs.ValidPath(joined) {
		return gitDir{}, false
	}
	return gitDir{fsys: g.fsys, dir: joined}, true
}

// findGitDir locates the common metadata directory (where info/exclude and config live) of the
// repository whose working tree starts at dir, given that dir holds a .git entry: that
// directory itself, or for a linked worktree or a submodule, the "gitdir:" its .git file names,
// then that directory's "commondir" if it has one.
func findGitDir(fsys fs.FS, dir string) (gitDir, bool) {
	dotGit := path.Join(dir, ".git")
	data, err := readLimited(fsys.Open(dotGit))
	if err != nil {
		// Mostly "is a directory": the usual repository.
		return gitDir{fsys: fsys, dir: dotGit}, true
	}
	line, _, _ := strings.Cut(string(data), "\n")
	target, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if !ok {
		return gitDir{}, false
	}
	g, ok := gitDir{fsys: fsys, dir: dir}.resolve(strings.TrimSpace(target))
	if !ok {
		return gitDir{}, false
	}
	if common, err := g.read("commondir"); err == nil {
		if c, ok := g.resolve(strings.TrimSpace(string(common))); ok {
			return c, true
		}
	}
	return g, true
}

// userConfig is what the matcher takes from git's configuration: core.excludesFile (as written,
// "" when unset) and core.ignoreCase (set tells whether it was given).
type userConfig struct {
	excludesFile string
	ignoreCase   bool
	caseSet      bool
}

// readConfig applies the two keys found in a git config file over c; later files win, as in git.
func (c *userConfig) readConfig(data []byte) {
	for key, val := range configValues(data) {
		switch key {
		case "core.excludesfile":
			c.excludesFile = val
		case "core.ignorecase":
			if b, ok := parseBool(val); ok {
				c.ignoreCase, c.caseSet = b, true
			}
		}
	}
}

// home is git's idea of the user's home directory: $HOME, and on Windows %USERPROFILE% when
// HOME is unset.
func home(getenv func(string) string) string {
	if h := getenv("HOME"); h != "" || runtime.GOOS != "windows" {
		return h
	}
	return getenv("USERPROFILE")
}

// xdgGit is git's xdg_config_home(name): $XDG_CONFIG_HOME/git/name, else ~/.config/git/name;
// "" when neither is known.
func xdgGit(getenv func(string) string, name string) string {
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "git", name)
	}
	if h := home(getenv); h != "" {
		return filepath.Join(h, ".config", "git", name)
	}
	return ""
}

// globalConfigs lists the user's config files in the order git reads them: $GIT_CONFIG_GLOBAL
// alone when set, else the XDG file then ~/.gitconfig. The system file and includes are left out.
func globalConfigs(getenv func(string) string) []string {
	if g := getenv("GIT_CONFIG_GLOBAL"); g != "" {
		return []string{g}
	}
	var files []string
	if x := xdgGit(getenv, "config"); x != "" {
		files = append(files, x)
	}
	if h := home(getenv); h != "" {
		files = append(files, filepath.Join(h, ".gitconfig"))
	}
	return files
}

// expandHome is git's interpolation of a path value: a leading "~/" is the home directory.
// "~user/" is not supported and gives "".
func expandHome(p string, getenv func(string) string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		h := home(getenv)
		if h == "" {
			return ""
		}
		return filepath.Join(h, p[1:])
	}
	if strings.HasPrefix(p, "~") {
		return ""
	}
	return p
}

// configValues reads a git config file and returns its values of keys in sections without a
// subsection, as "section.key" in lower case, the last value of a key winning.
func configValues(data []byte) map[string]string {
	vals := map[string]string{}
	configEntries(data, func(section string, sub bool, key, val string) {
		if !sub {
			vals[section+"."+key] = val
		}
	})
	return vals
}

// configEntries calls fn with each entry of a git config file in order: its section's name and
// key in lower case, whether the section has a subsection ([name "sub"], or the old [name.sub],
// whose name is then the part before the dot), and the value. It follows git's syntax (comments,
// quotes, escapes, continuation lines, a key alone meaning true); a line git would reject ends
// the reading, keeping what came before.
func configEntries(data []byte, fn func(section string, sub bool, key, val string)) {
	p := configParser{data: bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))}
	section, sub := "", false
	for {
		c, ok := p.next()
		switch {
		case !ok:
			return
		case c == '\n' || isSpace(c):
		case c == '#' || c == ';':
			p.skipLine()
		case c == '[':
			if section, sub, ok = p.section(); !ok {
				return
			}
		case isAlpha(c):
			key, val, ok := p.entry(c)
			if !ok {
				return
			}
			if section != "" {
				fn(section, sub, key, val)
			}
		default:
			return
		}
	}
}

type configParser struct {
	data []byte
	i    int
}

// next returns the next byte; the end of the data reads as one final newline, as in git.
func (p *configParser) next() (byte, bool) {
	if p.i > len(p.data) {
		return 0, false
	}
	p.i++
	if p.i > len(p.data) {
		return '\n', true
	}
	return p.data[p.i-1], true
}

func (p *configParser) skipLine() {
	for c, ok := p.next(); ok && c != '\n'; c, ok = p.next() {
	}
}

// section reads a "[name]" header, returning the lower-cased name and whether a subsection
// follows it ([name "sub"], or the old [name.sub]).
func (p *configParser) section() (name string, sub bool, ok bool) {
	var b []byte
	for {
		c, ok := p.next()
		switch {
		case !ok || c == '\n':
			return "", false, false
		case c == ']':
			if head, _, dotted := bytes.Cut(b, []byte{'.'}); dotted {
				return strings.ToLower(string(head)), true, true
			}
			return strings.ToLower(string(b)), false, true
		case isSpace(c):
			// A subsection follows: read up to the closing bracket, quotes and escapes respected.
			quoted := false
			for c, ok = p.next(); ok && c != '\n'; c, ok = p.next() {
				switch {
				case c == '\\' && quoted:
					p.next()
				case c == '"':
					quoted = !quoted
				case c == ']' && !quoted:
					return strings.ToLower(string(b)), true, true
				}
			}
			return "", false, false
		case isAlpha(c) || isDigit(c) || c == '-' || c == '.':
			b = append(b, c)
		default:
			return "", false, false
		}
	}
}

// entry reads "key = value" (or a lone key, true) after its first letter first.
func (p *configParser) entry(first byte) (key, val string, ok bool) {
	name := []byte{lower(first)}
	for {
		c, ok := p.next()
		switch {
		case !ok:
			return string(name), "true", true
		case isAlpha(c) || isDigit(c) || c == '-':
			name = append(name, lower(c))
			continue
		}
		for c == ' ' || c == '\t' {
			c, _ = p.next()
		}
		switch c {
		case '\n':
			return string(name), "true", true
		case '#', ';':
			p.skipLine()
			return string(name), "true", true
		case '=':
			val, ok := p.value()
			return string(name), val, ok
		}
		return "", "", false
	}
}

// value is git's parse_value: unquoted spaces around the value dropped, inner ones kept,
// "…" quoting, \n \t \b \\ \" escapes, a backslash before the newline continuing the line.
func (p *configParser) value() (string, bool) {
	var v []byte
	quote, comment := false, false
	trim := -1
	for {
		c, ok := p.next()
		if !ok || c == '\n' {
			if quote {
				return "", false
			}
			if trim >= 0 {
				v = v[:trim]
			}
			return string(v), true
		}
		if comment {
			continue
		}
		if isSpace(c) && !quote {
			if trim < 0 {
				trim = len(v)
			}
			if len(v) > 0 {
				v = append(v, c)
			}
			continue
		}
		if !quote && (c == ';' || c == '#') {
			comment = true
			continue
		}
		trim = -1
		switch c {
		case '\\':
			switch c, _ = p.next(); c {
			case '\n':
				continue
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'n':
				c = '\n'
			case '\\', '"':
			default:
				return "", false
			}
		case '"':
			quote = !quote
			continue
		}
		v = append(v, c)
	}
}

// isSpace is git's isspace: no \v or \f.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// parseBool is git's boolean: true, yes, on, false, no, off, an empty value, or an integer.
func parseBool(s string) (value, ok bool) {
	switch strings.ToLower(s) {
	case "true", "yes", "on":
		return true, true
	case "false", "no", "off", "":
		return false, true
	}
	n, err := strconv.Atoi(s)
	return n != 0, err == nil
}
