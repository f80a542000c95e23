package main

import (
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/reprise-dev/reprise/agent/tools"
)

// Joiners are format characters that emoji sequences and several scripts (Persian, Indic) need
// to display right; they cannot move the cursor, reorder text or talk to the terminal.
const (
	zwnj = '\u200c'
	zwj  = '\u200d'
)

// inert returns s with everything a terminal would act on, and everything that does not show as
// itself, written out in Go escape notation, so untrusted text (the model's, a tool's, a saved
// session's) cannot write the clipboard (OSC 52), retitle the window, clear the screen, move the
// cursor over earlier output, or reorder what is shown:
//
//   - C0 controls but newline and tab, and DEL: \x1b, \x07, \x0d, \x7f
//   - C1 controls (U+0080–U+009F): \u009b
//   - each byte of invalid UTF-8 (a lone 0x9b is CSI to an 8-bit terminal): \xff
//   - format characters (Unicode Cf: the bidi controls U+202A–U+202E, U+2066–U+2069, U+200E/F,
//     U+061C; zero-width spaces, BOM, soft hyphen, tag characters…), but the joiners ZWJ and ZWNJ:
//     \u202e, \U000e0041
//
// Everything else, newline and tab included, is left as is; text without any of the above comes
// back unchanged. Backslashes are not escaped: a literal "\x1b" in the text looks like an escaped
// ESC, which misleads no terminal. The command an approval prompt asks about is shown by
// shownCommand, which escapes all of these and more.
func inert(s string) string {
	i := firstUnsafe(s)
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case !unsafeRune(r):
			b.WriteString(s[i : i+size])
		case r < utf8.RuneSelf:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
		i += size
	}
	return b.String()
}

// firstUnsafe is the index of the first byte inert must rewrite, len(s) if none.
func firstUnsafe(s string) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || unsafeRune(r) {
			return i
		}
		i += size
	}
	return len(s)
}

// unsafeRune reports whether inert escapes a valid rune.
func unsafeRune(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f:
		return true
	case r >= 0x80 && r <= 0x9f:
		return true
	case r == zwj || r == zwnj:
		return false
	}
	return unicode.Is(unicode.Cf, r)
}

// inertWriter passes everything written through inert. Each Write is escaped on its own, so a
// rune split across two writes shows as escaped bytes rather than as itself; the CLI writes
// whole lines (fmt and tabwriter both do), and a split never lets a raw byte through.
type inertWriter struct{ w io.Writer }

func (w inertWriter) Write(p []byte) (int, error) {
	s := string(p)
	if _, err := io.WriteString(w.w, inert(s)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// shownCommand is a command as an approval prompt shows it: tools.DisplayCommand's form, the
// one every front-end shows (inert, on one line, long blank runs counted, bounded with the end
// in view), in double quotes that mark where it starts and ends.
func shownCommand(cmd string) string {
	return `"` + tools.DisplayCommand(cmd) + `"`
}
