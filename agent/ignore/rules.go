package ignore

import (
	"bytes"
	"strings"
)

// Rule flags, as git's PATTERN_FLAG_*.
const (
	negative  = 1 << iota // "!pattern": re-includes
	mustBeDir             // "pattern/": matches directories only
	noDir                 // no slash left: matched against the base name at any depth
	endsWith              // "*literal": a suffix test
)

// rule is one pattern line of an ignore file.
type rule struct {
	pattern string // without the leading '!' and the trailing '/'
	text    string // the line as git shows it, trailing spaces trimmed
	prefix  int    // length of pattern's leading part without wildcards
	line    int    // 1-based
	flags   uint8
}

// ruleFile is one ignore file's rules; its patterns are relative to the directory a scope gives.
type ruleFile struct {
	source string // as Rule.Source shows it
	rules  []rule
}

// parseRules reads an ignore file as git's add_patterns_from_buffer does: a UTF-8 BOM skipped,
// lines split at "\n" with a "\r" before it dropped, blank lines and lines starting with '#'
// skipped, trailing spaces trimmed unless escaped. A line is cut at a NUL byte, as git's C strings
// are. Patterns that can match nothing (empty after '!' and '/' are taken off) are dropped.
func parseRules(source string, data []byte) *ruleFile {
	f := &ruleFile{source: source}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	for n := 1; len(data) > 0; n++ {
		line, rest, _ := bytes.Cut(data, []byte("\n"))
		data = rest
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if i := bytes.IndexByte(line, 0); i >= 0 {
			line = line[:i]
		}
		if r, ok := parseRule(trimTrailingSpaces(string(line))); ok {
			r.line = n
			f.rules = append(f.rules, r)
		}
	}
	return f
}

// trimTrailingSpaces drops unescaped trailing spaces (not tabs); a line ending in a lone
// backslash keeps its spaces, as in git.
func trimTrailingSpaces(s string) string {
	lastSpace := -1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ':
			if lastSpace < 0 {
				lastSpace = i
			}
		case '\\':
			if i++; i == len(s) {
				return s
			}
			lastSpace = -1
		default:
			lastSpace = -1
		}
	}
	if lastSpace >= 0 {
		return s[:lastSpace]
	}
	return s
}

// parseRule is git's parse_path_pattern on one trimmed line.
func parseRule(text string) (rule, bool) {
	r := rule{text: text}
	p := text
	if strings.HasPrefix(p, "!") {
		r.flags |= negative
		p = p[1:]
	}
	// git measures these before taking the trailing slash off.
	r.prefix = simpleLength(p)
	if strings.HasPrefix(p, "*") && simpleLength(p[1:]) == len(p)-1 {
		r.flags |= endsWith
	}
	if strings.HasSuffix(p, "/") {
		r.flags |= mustBeDir
		p = p[:len(p)-1]
	}
	if !strings.Contains(p, "/") {
		r.flags |= noDir
	}
	r.prefix = min(r.prefix, len(p))
	r.pattern = p
	// An empty pattern never matches, nor does a lone "/" (it becomes an empty base name).
	return r, p != ""
}

// simpleLength is the length of s's leading part without glob characters.
func simpleLength(s string) int {
	for i := 0; i < len(s); i++ {
		if isGlobSpecial(s[i]) {
			return i
		}
	}
	return len(s)
}

// match is git's check of one rule against a path: rel is the path from the matcher's root,
// name its base name, base the directory (from the root, no trailing slash) that the rule's
// file anchors to, which is rel's ancestor.
func (r *rule) match(rel, name string, isDir bool, base string, fold bool) bool {
	if r.flags&mustBeDir != 0 && !isDir {
		return false
	}
	if r.flags&noDir != 0 {
		return r.matchBasename(name, fold)
	}
	return r.matchPathname(rel, base, fold)
}

func (r *rule) matchBasename(name string, fold bool) bool {
	p := r.pattern
	switch {
	case r.prefix == len(p):
		return equal(p, name, fold)
	case r.flags&endsWith != 0:
		return len(p)-1 <= len(name) && equal(p[1:], name[len(name)-(len(p)-1):], fold)
	}
	return wildmatch(p, name, foldFlag(fold))
}

// matchPathname anchors the pattern at base. Like git it compares the literal prefix first and
// hands only the rest to wildmatch, which matters: a "**" right after the prefix then counts as
// starting the pattern ("a**/b" matches "a/x/b" in git).
func (r *rule) matchPathname(rel, base string, fold bool) bool {
	p, prefix := r.pattern, r.prefix
	if p[0] == '/' {
		p, prefix = p[1:], prefix-1
	}
	name := rel
	if base != "" {
		name = rel[len(base)+1:]
	}
	if prefix > 0 {
		if prefix > len(name) || !equal(p[:prefix], name[:prefix], fold) {
			return false
		}
		p, name = p[prefix:], name[prefix:]
		if p == "" && name == "" {
			return true
		}
	}
	return wildmatch(p, name, wmPathname|foldFlag(fold))
}

func equal(a, b string, fold bool) bool {
	if fold {
		return asciiEqualFold(a, b)
	}
	return a == b
}

// asciiEqualFold is git's strncasecmp: ASCII letters only, unlike strings.EqualFold.
func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if lower(a[i]) != lower(b[i]) {
			return false
		}
	}
	return true
}

func foldFlag(fold bool) int {
	if fold {
		return wmCasefold
	}
	return 0
}
