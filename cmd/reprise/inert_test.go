package main

import (
	"bytes"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestInert(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"plain text", "status completed · 13 turns · $0.0336", "status completed · 13 turns · $0.0336"},
		{"newline and tab kept", "a\tb\nc\n", "a\tb\nc\n"},
		{"non-ASCII kept", "«Fix the discount» → ✓ héllo 日本語 مرحبا", "«Fix the discount» → ✓ héllo 日本語 مرحبا"},
		{"emoji ZWJ sequence kept", "👨\u200d👩\u200d👧", "👨\u200d👩\u200d👧"},
		{"ZWNJ kept", "می\u200cخواهم", "می\u200cخواهم"},
		{"U+FFFD itself kept", "a\ufffdb", "a\ufffdb"},
		{"literal backslash kept", `C:\x1b\dir`, `C:\x1b\dir`},
		{"OSC 52 clipboard write", "\x1b]52;c;ZWNobyBoaQ==\x07", `\x1b]52;c;ZWNobyBoaQ==\x07`},
		{"OSC 52 with ST", "\x1b]52;c;ZWNobyBoaQ==\x1b\\", `\x1b]52;c;ZWNobyBoaQ==\x1b\`},
		{"title change", "\x1b]0;pwned\x07", `\x1b]0;pwned\x07`},
		{"clear screen", "\x1b[2J\x1b[H", `\x1b[2J\x1b[H`},
		{"carriage return overwrite", "FAIL\rok  ", `FAIL\x0dok  `},
		{"CRLF", "a\r\nb", "a\\x0d\nb"},
		{"backspace, NUL, DEL", "a\bb\x00c\x7f", `a\x08b\x00c\x7f`},
		{"C1 CSI as a rune", "\u009b2J", `\u009b2J`},
		{"C1 NEL and OSC", "\u0085\u009d", `\u0085\u009d`},
		{"lone 8-bit CSI byte", "a\x9b2J", `a\x9b2J`},
		{"invalid UTF-8", "\xff\xfe ok \xe2\x82", `\xff\xfe ok \xe2\x82`},
		{"surrogate half encoded", "\xed\xa0\x80", `\xed\xa0\x80`},
		{"RLO", "ls \u202e txt.exe", `ls \u202e txt.exe`},
		{"all bidi controls", "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c",
			`\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c`},
		{"zero-width space, BOM, soft hyphen", "a\u200bb\ufeffc\u00add", `a\u200bb\ufeffc\u00add`},
		{"tag characters (hidden ASCII)", "hi\U000E0041\U000E007F", `hi\U000e0041\U000e007f`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(inert(tt.in), tt.want); diff != "" {
				t.Errorf("inert(%q) (-got +want):\n%s", tt.in, diff)
			}
		})
	}
}

// TestShownCommand: an approval prompt shows the command inert, on one line and bounded, as
// every front-end does (tools.DisplayCommand), between quotes.
func TestShownCommand(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"go test ./...", `"go test ./..."`},
		{"echo \"hi\" \\n", `"echo "hi" \n"`},
		{"ls\nrm -rf ~", `"ls⏎rm -rf ~"`},
		{"cat \u202eexe.txt", `"cat \u202eexe.txt"`},
		{"r\u200dm x", `"r\u200dm x"`},
		{"echo\u00a0a", `"echo\u00a0a"`},
		{"printf '\x1b]52;c;eA==\x07'", `"printf '\x1b]52;c;eA==\x07'"`},
		{"cat \xff", `"cat \xff"`},
		{"echo ok" + strings.Repeat(" ", 200) + strings.Repeat("\n", 40) + "rm -rf ~", `"echo ok[200 spaces, 40 newlines]rm -rf ~"`},
	}
	for _, tt := range tests {
		got := shownCommand(tt.in)
		if diff := cmp.Diff(got, tt.want); diff != "" {
			t.Errorf("shownCommand(%q) (-got +want):\n%s", tt.in, diff)
		}
	}
}

// checkInert fails if s holds anything a terminal would act on or that would not show.
func checkInert(t *testing.T, what, s string) {
	t.Helper()
	if !utf8.ValidString(s) {
		t.Errorf("%s is not valid UTF-8: %q", what, s)
	}
	for _, r := range s {
		if r != '\n' && r != '\t' && r != zwj && r != zwnj &&
			(r < 0x20 || (r >= 0x7f && r <= 0x9f) || unicode.Is(unicode.Cf, r)) {
			t.Errorf("%s holds %U: %q", what, r, s)
			return
		}
	}
}

func FuzzInert(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b]52;c;eA==\x07", "\x1b[2J", "\u202e", "\xff\x9b", "a\r\nb", "👨\u200d👩", "\U000E0041"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := inert(s)
		checkInert(t, "inert's output", got)
		if again := inert(got); again != got {
			t.Errorf("inert is not idempotent: %q → %q → %q", s, got, again)
		}
		if firstUnsafe(s) == len(s) && got != s {
			t.Errorf("inert changed safe text %q to %q", s, got)
		}
		// Newlines are kept, and none is made: the table's rows stay rows.
		if strings.Count(got, "\n") != strings.Count(s, "\n") {
			t.Errorf("inert changed the line count: %q → %q", s, got)
		}
		q := shownCommand(s)
		checkInert(t, "shownCommand's output", q)
		if inert(q) != q || strings.ContainsAny(q, "\n\t") {
			t.Errorf("shownCommand(%q) = %q is not inert", s, q)
		}
		// The writer escapes exactly as inert does.
		var b bytes.Buffer
		if n, err := (inertWriter{&b}).Write([]byte(s)); n != len(s) || err != nil || b.String() != got {
			t.Errorf("inertWriter wrote %q (%d, %v), want %q", b.String(), n, err, got)
		}
	})
}
