package tools

import (
	"bytes"
	"regexp"
	"regexp/syntax"
	"unicode/utf8"
)

// lineMatcher finds the lines of a buffer that a regexp matches, line by line as grep does, but
// without running the regexp on every line: a literal that every match must contain is looked
// for first (bytes.Index, or a case-folded scan for (?i)), and the regexp runs only on the lines
// that hold it. Go's regexp is slow next to a vectorized byte search; most lines of most files
// hold no candidate at all.
type lineMatcher struct {
	re    *regexp.Regexp
	lit   []byte // a literal every match contains; nil when none was found
	fold  bool   // lit is matched ASCII-case-insensitively
	exact bool   // the regexp is lit and nothing else: a hit is a match
	// anchor is the byte of lit looked for first when folding (its two cases), at offset anchorAt
	// in lit: the rarest one, so fewer false starts.
	anchor   byte
	anchorAt int
}

func newLineMatcher(re *regexp.Regexp) *lineMatcher {
	m := &lineMatcher{re: re}
	parsed, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return m // cannot happen: re compiled from the same text
	}
	parsed = parsed.Simplify()
	lit, fold := requiredLiteral(parsed)
	if len(lit) == 0 {
		return m
	}
	m.lit, m.fold = lit, fold
	// The whole regexp is the literal (not a piece of a folded one): finding it is matching.
	m.exact = parsed.Op == syntax.OpLiteral && len(lit) == len(string(parsed.Rune))
	if fold {
		m.anchorAt = rarest(lit)
		m.anchor = lower(lit[m.anchorAt])
	}
	return m
}

// requiredLiteral returns the longest literal that any match of re must contain, and whether it
// is case-folded. It looks through captures, concatenations and repetitions of at least one; an
// alternation or a class gives nothing.
func requiredLiteral(re *syntax.Regexp) (lit []byte, fold bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return literalBytes(re)
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiteral(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiteral(re.Sub[0])
		}
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			l, f := requiredLiteral(sub)
			// Longer is rarer; a case-sensitive literal of the same length is cheaper to find.
			if len(l) > len(lit) || (len(l) == len(lit) && fold && !f) {
				lit, fold = l, f
			}
		}
	}
	return lit, fold
}

// literalBytes is an OpLiteral as bytes to search for. A case-folded literal is searched with
// ASCII folding only, so it must be ASCII, and k and s are left out: Unicode folds them with
// the Kelvin sign and the long s, which an ASCII scan would miss. What remains is cut there and
// the longest piece is kept.
func literalBytes(re *syntax.Regexp) ([]byte, bool) {
	if re.Flags&syntax.FoldCase == 0 {
		return []byte(string(re.Rune)), false
	}
	var best, cur []byte
	for _, r := range re.Rune {
		switch {
		case r >= utf8.RuneSelf || r == 'k' || r == 'K' || r == 's' || r == 'S':
			cur = nil
			if r >= utf8.RuneSelf { // other non-ASCII letters fold in ways ASCII cannot see
				continue
			}
		default:
			cur = append(cur, lower(byte(r))) // the parser keeps folded letters upper-case
			if len(cur) > len(best) {
				best = append(best[:0], cur...)
			}
		}
	}
	return best, true
}

// scan calls emit for each matching line of buf (1-based number, the line without its end of
// line, and where the match starts in it) until emit returns false, and returns how many lines
// matched. Only the first maxLineBytes of a line are matched.
func (m *lineMatcher) scan(buf []byte, emit func(n int, line []byte, at int) bool) int {
	matches, line, counted := 0, 1, 0 // counted: the offset up to which newlines are in line
	for pos := 0; pos < len(buf); {
		start, end := pos, 0
		if m.lit != nil {
			i := m.index(buf[pos:])
			if i < 0 {
				break
			}
			hit := pos + i
			start = bytes.LastIndexByte(buf[:hit], '\n') + 1
		}
		if e := bytes.IndexByte(buf[start:], '\n'); e >= 0 {
			end = start + e
		} else {
			end = len(buf)
		}
		pos = end + 1
		text := bytes.TrimSuffix(buf[start:end], []byte{'\r'})
		if len(text) > maxLineBytes {
			text = text[:maxLineBytes]
		}
		at := -1
		if m.exact {
			at = m.index(text)
		} else if loc := m.re.FindIndex(text); loc != nil {
			at = loc[0]
		}
		if at < 0 {
			continue
		}
		line += bytes.Count(buf[counted:start], []byte{'\n'})
		counted = start
		matches++
		if emit != nil && !emit(line, text, at) {
			emit = nil // the caller has enough lines; the rest are only counted
		}
	}
	return matches
}

// index finds lit in b. Folded, it looks for the anchor byte in both cases, remembering where
// each case is next, so the scan stays linear however the two cases interleave.
func (m *lineMatcher) index(b []byte) int {
	if !m.fold {
		return bytes.Index(b, m.lit)
	}
	n := len(m.lit)
	lo, up := m.anchor, upper(m.anchor)
	next := func(c byte, from int) int {
		if i := bytes.IndexByte(b[from:], c); i >= 0 {
			return from + i
		}
		return len(b)
	}
	nextLo, nextUp := -1, len(b)
	if lo != up {
		nextUp = -1
	}
	for from := m.anchorAt; from < len(b); {
		if nextLo < from {
			nextLo = next(lo, from)
		}
		if nextUp < from {
			nextUp = next(up, from)
		}
		h := min(nextLo, nextUp)
		if h >= len(b) {
			return -1
		}
		if s := h - m.anchorAt; s+n <= len(b) && equalFoldASCII(b[s:s+n], m.lit) {
			return s
		}
		from = h + 1
	}
	return -1
}

func equalFoldASCII(a, b []byte) bool {
	for i := range a {
		if lower(a[i]) != lower(b[i]) {
			return false
		}
	}
	return true
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func upper(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - ('a' - 'A')
	}
	return c
}

// rarest is the offset in lit of the byte least frequent in source code and prose, by a rough
// rank: letters frequent in English and code first, then the rest.
func rarest(lit []byte) int {
	const common = " etaoinsrhldcumfpgwybvkxjqz_.,()\n" // most to least frequent, roughly
	best, bestRank := 0, -1
	for i, c := range lit {
		rank := bytes.IndexByte([]byte(common), lower(c))
		if rank < 0 {
			rank = len(common) // not listed: rarer than anything listed
		}
		if rank > bestRank {
			best, bestRank = i, rank
		}
	}
	return best
}
