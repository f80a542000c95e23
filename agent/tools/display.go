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
//     and U+2066–U+2069, U+200E/F, U+061C, zero-width spaces and joiners, BOM, tag characters…)
//     and anything else that does not show as itself are written in Go notation: \x1b, \u202e.
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
		case unicode.IsGraphic(r):
			text = s[i : i+size]
		default:
			text = escapeRune(r)
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
