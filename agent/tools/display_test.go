package tools

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestDisplayCommand(t *testing.T) {
	tests := []struct{ in, want string }{
		{"go test ./...", "go test ./..."},
		{"make  test", "make  test"},
		{"ls\nrm -rf build", "ls⏎rm -rf build"},
		{"cat \u202eexe.txt", `cat \u202eexe.txt`},
		{"a\u2066b\u2069c\u200bd\ufeffe", `a\u2066b\u2069c\u200bd\ufeffe`},
		{"r\u200dm x", `r\u200dm x`},
		{"echo\u00a0a\tb\rc", `echo\u00a0a\tb\x0dc`},
		{"printf '\x1b]52;c;eA==\x07'", `printf '\x1b]52;c;eA==\x07'`},
		{"cat \xff\u009b", `cat \xff\u009b`},
		{"tag\U000E0041", `tag\U000e0041`},
		{"echo ok" + strings.Repeat(" ", 200) + "; rm -rf ~", "echo ok[200 spaces]; rm -rf ~"},
		{"echo ok" + strings.Repeat("\n", 40) + "rm -rf ~", "echo ok[40 newlines]rm -rf ~"},
		{"echo ok" + strings.Repeat(" ", 200) + strings.Repeat("\n", 40) + "curl x | sh", "echo ok[200 spaces, 40 newlines]curl x | sh"},
		{"a \t\n b", "a[2 spaces, 1 newline, 1 tab]b"},
		{"a\u00a0\u00a0\u00a0\u00a0b", "a[4 other blanks]b"},
		// fillers that are letters or symbols, and marks that hide on a letter
		{"rm\u3164-rf x", `rm\u3164-rf x`},
		{"a\u2800b\u115fc\u1160d\uffa0e", `a\u2800b\u115fc\u1160d\uffa0e`},
		{"r\u034fm -rf", `r\u034fm -rf`},
		{"cafe\u0301 x\u20dd", `cafe\u0301 x\u20dd`},
		// look-alikes: the letters outside a word's main script
		{"g\u0456t push", `g\u0456t push`},
		{"curl p\u0430yp\u0430l.com", `curl p\u0430yp\u0430l.com`},
		{"\u0441url x", `\u0441url x`},
		// one script per word is left alone, Japanese's mix of Han and kana included
		{"echo привет мир", "echo привет мир"},
		{"echo 日本語のテキスト ΑΒΓ", "echo 日本語のテキスト ΑΒΓ"},
		{"echo naïve", "echo naïve"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(DisplayCommand(tt.in), tt.want); diff != "" {
			t.Errorf("DisplayCommand(%q) (-got +want):\n%s", tt.in, diff)
		}
	}
}

// TestDisplayCommandKeepsTheTail: padding of any kind cannot push the end out of view.
func TestDisplayCommandKeepsTheTail(t *testing.T) {
	for _, pad := range []string{strings.Repeat("x", 5000), strings.Repeat("é ", 3000), strings.Repeat("\u202e", 2000), strings.Repeat(" a", 2000)} {
		got := DisplayCommand("echo start " + pad + "; rm -rf ~/important")
		if n := utf8.RuneCountInString(got); n > MaxDisplay {
			t.Errorf("%d characters shown, want at most %d: %q", n, MaxDisplay, got)
		}
		if !strings.HasPrefix(got, "echo start ") || !strings.HasSuffix(got, "; rm -rf ~/important") || !strings.Contains(got, " characters …]") {
			t.Errorf("head, tail or marker missing: %q", got)
		}
	}
}

func FuzzDisplayCommand(f *testing.F) {
	for _, s := range []string{"", "go test", "a\n\nb", strings.Repeat(" ", 300) + "x", "\u202e\xff\x1b", strings.Repeat("ab\n", 400), "⏎ [3 spaces]", "g\u0456t \u3164\u0301"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := DisplayCommand(s)
		if !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8: %q", got)
		}
		for _, r := range got {
			if r != ' ' && Invisible(r) || r != ' ' && unicode.IsSpace(r) {
				t.Fatalf("DisplayCommand(%q) = %q holds %U", s, got, r)
			}
		}
		if m := MixedScripts(got); len(m) > 0 {
			t.Fatalf("DisplayCommand(%q) = %q mixes scripts at %v", s, got, m)
		}
		if m := MixedScripts(got); len(m) > 0 {
			t.Fatalf("DisplayCommand(%q) = %q mixes scripts at %v", s, got, m)
		}
		if n := utf8.RuneCountInString(got); n > MaxDisplay {
			t.Fatalf("DisplayCommand(%q) is %d characters long", s, n)
		}
		if again := DisplayCommand(got); again != got {
			t.Fatalf("not idempotent: %q → %q → %q", s, got, again)
		}
	})
}
