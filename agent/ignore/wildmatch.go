package ignore

import "strings"

// wildmatch flags, as git's.
const (
	wmCasefold = 1 << iota // ASCII letters compare without case
	wmPathname             // * and ? do not match '/'; ** does at segment bounds
)

// dowild results. Beyond match or not, the two aborts tell an enclosing * that no later start in
// the text can match either (git's fix for exponential backtracking).
const (
	wmMatch = iota
	wmNoMatch
	wmAbortAll
	wmAbortToStarStar
)

// wildmatch reports whether text matches pattern the way git's wildmatch() does: a byte-wise port,
// quirks included (? matches one byte, not one UTF-8 character; under wmCasefold a letter inside
// [...] or after \ is compared as written), so that ignore rules decide as git does.
func wildmatch(pattern, text string, flags int) bool {
	return dowild(pattern, text, flags) == wmMatch
}

// at returns s[i], or 0 past the end: the C code reads the terminating NUL.
func at(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

func dowild(pat, text string, flags int) int {
	fold := flags&wmCasefold != 0
	pathname := flags&wmPathname != 0
	t := 0
	for p := 0; p < len(pat); p, t = p+1, t+1 {
		pch := pat[p]
		tch := at(text, t)
		if tch == 0 && pch != '*' {
			return wmAbortAll
		}
		if fold {
			tch, pch = lower(tch), lower(pch)
		}
		switch pch {
		case '\\':
			// The next byte literally; a trailing backslash matches nothing.
			p++
			if tch != at(pat, p) {
				return wmNoMatch
			}
		case '?':
			if pathname && tch == '/' {
				return wmNoMatch
			}
		case '*':
			var matchSlash bool
			p++
			if at(pat, p) == '*' {
				prev := p
				for p++; at(pat, p) == '*'; p++ {
				}
				switch {
				case !pathname:
					matchSlash = true
				case (prev < 2 || pat[prev-2] == '/') &&
					(at(pat, p) == 0 || at(pat, p) == '/' || (at(pat, p) == '\\' && at(pat, p+1) == '/')):
					// A whole ** segment: "a/**/b" also matches "a/b".
					if at(pat, p) == '/' && dowild(pat[p+1:], text[t:], flags) == wmMatch {
						return wmMatch
					}
					matchSlash = true
				default:
					matchSlash = false
				}
			} else {
				matchSlash = !pathname
			}
			if p >= len(pat) {
				// A trailing * matches the rest of the segment, ** the rest of the path.
				if !matchSlash && strings.IndexByte(text[t:], '/') >= 0 {
					return wmAbortToStarStar
				}
				return wmMatch
			}
			if !matchSlash && pat[p] == '/' {
				// "*/" matches up to the next slash, which the loop then consumes.
				i := strings.IndexByte(text[t:], '/')
				if i < 0 {
					return wmAbortAll
				}
				t += i
				continue
			}
			for tch != 0 {
				if !isGlobSpecial(pat[p]) {
					// Skip ahead to where the literal after the star occurs.
					want := pat[p]
					if fold {
						want = lower(want)
					}
					for ; t < len(text) && (matchSlash || text[t] != '/'); t++ {
						if c := text[t]; c == want || fold && lower(c) == want {
							break
						}
					}
					tch = at(text, t)
					if fold {
						tch = lower(tch)
					}
					if tch != want {
						if matchSlash {
							return wmAbortAll
						}
						return wmAbortToStarStar
					}
				}
				if m := dowild(pat[p:], text[t:], flags); m != wmNoMatch {
					if !matchSlash || m != wmAbortToStarStar {
						return m
					}
				} else if !matchSlash && tch == '/' {
					return wmAbortToStarStar
				}
				t++
				tch = at(text, t)
			}
			return wmAbortAll
		case '[':
			var ok bool
			if p, ok = matchClass(pat, p, tch, fold); !ok {
				return wmAbortAll
			}
			if p < 0 || pathname && tch == '/' {
				return wmNoMatch
			}
		default:
			if tch != pch {
				return wmNoMatch
			}
		}
	}
	if t < len(text) {
		return wmNoMatch
	}
	return wmMatch
}

// matchClass matches tch against the bracket expression opening at pat[open]. It returns the
// index of the closing ']' (or -1 if tch is not in the class), and false for a malformed class,
// which makes the whole pattern fail, as in git.
func matchClass(pat string, open int, tch byte, fold bool) (int, bool) {
	p := open + 1
	pch := at(pat, p)
	if pch == '^' {
		pch = '!'
	}
	negated := pch == '!'
	if negated {
		p++
		pch = at(pat, p)
	}
	var prev byte
	matched := false
	for {
		switch {
		case pch == 0:
			return 0, false
		case pch == '\\':
			p++
			pch = at(pat, p)
			if pch == 0 {
				return 0, false
			}
			if tch == pch {
				matched = true
			}
		case pch == '-' && prev != 0 && at(pat, p+1) != 0 && at(pat, p+1) != ']':
			p++
			pch = pat[p]
			if pch == '\\' {
				p++
				pch = at(pat, p)
				if pch == 0 {
					return 0, false
				}
			}
			if tch <= pch && tch >= prev {
				matched = true
			} else if fold && isLower(tch) {
				if u := tch - 'a' + 'A'; u <= pch && u >= prev {
					matched = true
				}
			}
			pch = 0 // a range cannot start another one
		case pch == '[' && at(pat, p+1) == ':':
			s := p + 2
			p = s
			for p < len(pat) && pat[p] != ']' {
				p++
			}
			if p >= len(pat) {
				return 0, false
			}
			if n := p - s - 1; n < 0 || pat[p-1] != ':' {
				// No ":]": an ordinary '[' in the set.
				p = s - 2
				pch = '['
				if tch == '[' {
					matched = true
				}
			} else {
				in, known := inNamedClass(pat[s:s+n], tch, fold)
				if !known {
					return 0, false
				}
				if in {
					matched = true
				}
				pch = 0
			}
		default:
			if tch == pch {
				matched = true
			}
		}
		prev = pch
		p++
		if pch = at(pat, p); pch == ']' {
			break
		}
	}
	if matched == negated {
		return -1, true
	}
	return p, true
}

// inNamedClass tests c against a POSIX class such as [:alpha:], with git's ASCII-only ctype.
func inNamedClass(name string, c byte, fold bool) (in, known bool) {
	switch name {
	case "alnum":
		return isAlpha(c) || isDigit(c), true
	case "alpha":
		return isAlpha(c), true
	case "blank":
		return c == ' ' || c == '\t', true
	case "cntrl":
		return c < 0x20 || c == 0x7f, true
	case "digit":
		return isDigit(c), true
	case "graph":
		return c > 0x20 && c < 0x7f, true
	case "lower":
		return isLower(c), true
	case "print":
		return c >= 0x20 && c < 0x7f, true
	case "punct":
		return c > 0x20 && c < 0x7f && !isAlpha(c) && !isDigit(c), true
	case "space":
		return c == ' ' || c == '\t' || c == '\n' || c == '\r', true
	case "upper":
		return isUpper(c) || fold && isLower(c), true
	case "xdigit":
		return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F', true
	}
	return false, false
}

func isGlobSpecial(c byte) bool { return c == '*' || c == '?' || c == '[' || c == '\\' }
func isDigit(c byte) bool       { return c >= '0' && c <= '9' }
func isLower(c byte) bool       { return c >= 'a' && c <= 'z' }
func isUpper(c byte) bool       { return c >= 'A' && c <= 'Z' }
func isAlpha(c byte) bool       { return isLower(c) || isUpper(c) }

func lower(c byte) byte {
	if isUpper(c) {
		return c + 'a' - 'A'
	}
	return c
}
