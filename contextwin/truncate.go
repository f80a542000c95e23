package contextwin

import (
	"fmt"
	"unicode/utf8"
)

// HeadShare is the fraction of a truncated output kept from its start; the rest comes from its
// end, where test runners, compilers and linters print their verdict.
const HeadShare = 0.4

// Marker is the line put where a truncated output lost its middle.
func Marker(omitted int) string {
	return fmt.Sprintf("\n[… %d characters omitted …]\n", omitted)
}

// Split returns how many characters of a truncated output come from its head and its tail.
func Split(maxChars int) (head, tail int) {
	head = int(float64(maxChars) * HeadShare)
	return head, maxChars - head
}

// Truncate keeps the first 40 % and the last 60 % of maxChars characters of s, with a marker
// counting what was left out. Characters are runes: a cut never splits a UTF-8 sequence.
// It returns s unchanged, and 0, when s fits.
func Truncate(s string, maxChars int) (string, int) {
	if maxChars <= 0 || len(s) <= maxChars {
		return s, 0 // byte length bounds rune count
	}
	total := utf8.RuneCountInString(s)
	if total <= maxChars {
		return s, 0
	}
	head, tail := Split(maxChars)
	headEnd := byteOffsetOfRune(s, head)
	tailStart := byteOffsetOfRuneFromEnd(s, tail)
	omitted := total - head - tail
	return s[:headEnd] + Marker(omitted) + s[tailStart:], omitted
}

// byteOffsetOfRune returns the byte offset just after the first n runes of s.
func byteOffsetOfRune(s string, n int) int {
	i := 0
	for range n {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return i
}

// byteOffsetOfRuneFromEnd returns the byte offset where the last n runes of s begin.
func byteOffsetOfRuneFromEnd(s string, n int) int {
	i := len(s)
	for range n {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return i
}
