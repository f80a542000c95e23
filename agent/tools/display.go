package tools

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxDisplay bounds the characters DisplayCommand shows: a notification, a terminal line or an
// ACP title all show this much, so the end of what runs stays in view.
const MaxDisplay = 320

// DisplayCommand is a command (or any text about one) as an approval shows it to the user: on
// one line, inert, bounded, and with the part that will run always in view.
//
//   - Control characters, C1, invalid UTF-8, format characters (the bidi controls U+202A–U+202E
//     and U+2066–U+2069, U+200E/F, U+061C, zero-width spaces and joiners, BOM, tag characters…),
//     combining and enclosing marks, the Hangul and Braille fillers, and anything else that does
//     not show as itself (Invisible) are written in Go notation: \x1b, \u202e, \u3164.
//   - In a word that mixes scripts (`gіt` with a Cyrillic і), the letters outside its main script
//     are escaped too (MixedScripts): `g\u0456t`.
//   - A newline shows as ⏎, a tab as \t, another blank (\r, NBSP, U+2028…) escaped.
//   - A run of more than 3 blanks is collapsed and counted: `[200 spaces, 40 newlines]`.
//   - Past MaxDisplay characters, the head and the tail are kept around a counted marker
//     (`[… 5000 characters …]`): padding cannot push the end of the line out of view.
//
// It is idempotent (the front-ends may apply it again to what the tools made) and leaves a plain
// command as it is. The shown text is for reading: it maps back to the command only where
// nothing was collapsed, and a literal ⏎ or `\u202e` reads like the character it stands for.
func DisplayCommand(s string) string {
	pieces := displayPieces(s)
	total := 0
	for _, p := range pieces {
		total += p.width
	}
	if total <= MaxDisplay {
		var b strings.Builder
		for _, p := range pieces {
			b.WriteString(p.text)
		}
		return b.String()
	}
	// What runs last matters most; the marker fits in what is left, so the result is within
	// MaxDisplay and a second pass keeps it as it is.
	const head, tail = (MaxDisplay - 32) * 2 / 5, (MaxDisplay - 32) * 3 / 5
	var b strings.Builder
	i, w := 0, 0
	for ; i < len(pieces) && w+pieces[i].width <= head; i++ {
		b.WriteString(pieces[i].text)
		w += pieces[i].width
	}
	j, w := len(pieces), 0
	for j > i && w+pieces[j-1].width <= tail {
		j--
		w += pieces[j].width
	}
	hidden := 0
	for _, p := range pieces[i:j] {
		hidden += p.runes
	}
	fmt.Fprintf(&b, "[… %d characters …]", hidden)
	for _, p := range pieces[j:] {
		b.WriteString(p.text)
	}
	return b.String()
}

// piece is what one rune, or one run of blanks, shows as.
type piece struct {
	text  string
	width int // runes of text
	runes int // runes of the command it stands for
}

func displayPieces(s string) []piece {
	var out []piece
	mixed := MixedScripts(s)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if blank(r) {
			j, n := i, 0
			for j < len(s) {
				r, size := utf8.DecodeRuneInString(s[j:])
				if !blank(r) {
					break
				}
				j += size
				n++
			}
			out = append(out, blankRun(s[i:j], n)...)
			i = j
			continue
		}
		var text string
		switch {
		case r == utf8.RuneError && size == 1:
			text = fmt.Sprintf(`\x%02x`, s[i])
		case Invisible(r) || mixed[i]:
			text = escapeRune(r)
		default:
			text = s[i : i+size]
		}
		out = append(out, piece{text: text, width: utf8.RuneCountInString(text), runes: 1})
		i += size
	}
	return out
}

// blank reports whether r is white space of any kind, the ones that do not show included.
func blank(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\v' || r == '\f' || r == 0x85 ||
		unicode.Is(unicode.Zs, r) || r == '\u2028' || r == '\u2029'
}

// blankRun shows a run of n blanks: each as itself (a space), ⏎, \t or escaped while the run is
// short, collapsed and counted by kind when it is longer.
func blankRun(run string, n int) []piece {
	if n <= 3 {
		var out []piece
		for _, r := range run {
			var text string
			switch r {
			case ' ':
				text = " "
			case '\n':
				text = "⏎"
			case '\t':
				text = `\t`
			default:
				text = escapeRune(r)
			}
			out = append(out, piece{text: text, width: utf8.RuneCountInString(text), runes: 1})
		}
		return []piece{joinPieces(out)}
	}
	var spaces, newlines, tabs, others int
	for _, r := range run {
		switch r {
		case ' ':
			spaces++
		case '\n':
			newlines++
		case '\t':
			tabs++
		default:
			others++
		}
	}
	var parts []string
	for _, c := range []struct {
		n          int
		one, other string
	}{{spaces, "space", "spaces"}, {newlines, "newline", "newlines"}, {tabs, "tab", "tabs"}, {others, "other blank", "other blanks"}} {
		switch {
		case c.n == 1:
			parts = append(parts, "1 "+c.one)
		case c.n > 1:
			parts = append(parts, fmt.Sprintf("%d %s", c.n, c.other))
		}
	}
	text := "[" + strings.Join(parts, ", ") + "]"
	return []piece{{text: text, width: utf8.RuneCountInString(text), runes: n}}
}

func joinPieces(ps []piece) piece {
	var j piece
	for _, p := range ps {
		j.text += p.text
		j.width += p.width
		j.runes += p.runes
	}
	return j
}

// escapeRune writes r in Go notation.
func escapeRune(r rune) string {
	switch {
	case r < 0x80:
		return fmt.Sprintf(`\x%02x`, r)
	case r <= 0xffff:
		return fmt.Sprintf(`\u%04x`, r)
	}
	return fmt.Sprintf(`\U%08x`, r)
}

// Invisible reports whether r does not show as itself where a user reads what they approve: not
// graphic (controls, format characters such as bidi controls and zero-width joiners), a combining
// or enclosing mark (U+034F, U+0301 …: they hide on or between letters), or a filler that renders
// as a blank although it is a letter or a symbol (the Hangul fillers U+115F, U+1160, U+3164,
// U+FFA0, and U+2800, the blank Braille pattern).
func Invisible(r rune) bool {
	switch r {
	case 0x115f, 0x1160, 0x3164, 0xffa0, 0x2800:
		return true
	}
	return !unicode.IsGraphic(r) || unicode.In(r, unicode.Mn, unicode.Me)
}

// MixedScripts returns the byte offsets in s of the letters that make a word mix scripts, the way
// a look-alike does (`gіt` with a Cyrillic і, `pаypal` with a Cyrillic а): in a word (a run of
// letters, marks and digits) with letters of more than one script, those outside its main script,
// Latin when it has any, else its most frequent. Han, kana and Hangul count as one script, as
// Japanese and Korean mix them; Common and Inherited letters belong to any.
func MixedScripts(s string) map[int]bool {
	var out map[int]bool
	type letter struct {
		at     int
		script string
	}
	var word []letter
	flush := func() {
		count := map[string]int{}
		for _, l := range word {
			count[l.script]++
		}
		if len(count) > 1 {
			main := ""
			if count["Latin"] > 0 {
				main = "Latin"
			} else {
				for sc, n := range count {
					if n > count[main] || n == count[main] && sc < main {
						main = sc
					}
				}
			}
			if out == nil {
				out = map[int]bool{}
			}
			for _, l := range word {
				if l.script != main {
					out[l.at] = true
				}
			}
		}
		word = word[:0]
	}
	for i := 0; i < len(s); {
		if n := escapeLen(s[i:]); n > 0 { // what DisplayCommand wrote: a boundary, as the rune was
			flush()
			i += n
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case unicode.IsLetter(r):
			if sc := scriptOf(r); sc != "" {
				word = append(word, letter{i - size, sc})
			}
		case unicode.IsMark(r) || unicode.IsDigit(r):
		default:
			flush()
		}
	}
	flush()
	return out
}

// escapeLen is the length of the Go escape escapeRune or an invalid byte writes at the start of
// s (\xHH, \uHHHH, \UHHHHHHHH), or 0.
func escapeLen(s string) int {
	if len(s) < 2 || s[0] != '\\' {
		return 0
	}
	n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[s[1]]
	if n == 0 || len(s) < 2+n {
		return 0
	}
	for _, c := range []byte(s[2 : 2+n]) {
		if !strings.ContainsRune("0123456789abcdefABCDEF", rune(c)) {
			return 0
		}
	}
	return 2 + n
}

// scriptOf names r's script, "" for Common and Inherited; the common scripts are tried first.
func scriptOf(r rune) string {
	for _, name := range []string{"Latin", "Cyrillic", "Greek"} {
		if unicode.Is(unicode.Scripts[name], r) {
			return name
		}
	}
	if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul, unicode.Bopomofo) {
		return "CJK"
	}
	if unicode.In(r, unicode.Common, unicode.Inherited) {
		return ""
	}
	for name, table := range unicode.Scripts {
		if unicode.Is(table, r) {
			return name
		}
	}
	return ""
}
