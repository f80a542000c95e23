package tools

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// naiveScan is the definition lineMatcher must meet: the regexp on every line.
func naiveScan(re *regexp.Regexp, buf []byte) []string {
	var out []string
	if len(buf) == 0 {
		return nil // an empty file has no line
	}
	lines := bytes.Split(buf, []byte{'\n'})
	if len(buf) > 0 && buf[len(buf)-1] == '\n' {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		l = bytes.TrimSuffix(l, []byte{'\r'})
		if loc := re.FindIndex(l); loc != nil {
			out = append(out, fmt.Sprintf("%d@%d:%s", i+1, loc[0], l))
		}
	}
	return out
}

func fastScan(re *regexp.Regexp, buf []byte) []string {
	var out []string
	n := newLineMatcher(re).scan(buf, func(line int, text []byte, at int) bool {
		out = append(out, fmt.Sprintf("%d@%d:%s", line, at, text))
		return true
	})
	if n != len(out) {
		out = append(out, fmt.Sprintf("count %d", n))
	}
	return out
}

func TestRequiredLiteral(t *testing.T) {
	tests := []struct {
		pattern string
		lit     string
		fold    bool
		exact   bool
	}{
		{"deadline exceeded", "deadline exceeded", false, true},
		{"(?i)deadline exceeded", "deadline exceeded", true, true},
		{`func \w+Handler\(`, "Handler(", false, false},
		{`(?i)mask\d+`, "ma", true, false},      // k and s cut the literal: Unicode folds them
		{`(?i)straße`, "tra", true, false},      // non-ASCII too
		{`foo|barbaz`, "", false, false},        // an alternation requires neither side
		{`(abc)+x?`, "abc", false, false},       // inside a capture and a repetition
		{`a{2,}`, "a", false, false},            // a repetition of at least one
		{`x*`, "", false, false},                // nothing required
		{`(?i)Go(lang)? ok`, "go", true, false}, // folded pieces: the longest
		{`^ok\s`, "ok", false, false},
	}
	for _, tt := range tests {
		m := newLineMatcher(regexp.MustCompile(tt.pattern))
		if string(m.lit) != tt.lit || (m.lit != nil && m.fold != tt.fold) || m.exact != tt.exact {
			t.Errorf("%q: literal %q fold %v exact %v, want %q %v %v", tt.pattern, m.lit, m.fold, m.exact, tt.lit, tt.fold, tt.exact)
		}
	}
}

// TestLineMatcherAgreesWithRegexp compares the prefiltered scan with the regexp run on every
// line, on generated texts made of the patterns' own pieces (so there are hits, near misses and
// case variants), with CRLF, long and empty lines.
func TestLineMatcherAgreesWithRegexp(t *testing.T) {
	patterns := []string{
		"deadline exceeded", "(?i)deadline exceeded", `func \w+Handler\(`, `(?i)Kelvin`, `(?i)MASK`,
		`^ok\s`, `ok$`, `(?i)^\s*//\s*todo`, `a+b`, `x*`, `^$`, `\bid\b`, `(?i)ſ`, "é", `(?i)É`,
	}
	pieces := []string{"deadline", "DEADLINE", "Deadline exceeded", "exceeded", " ", "func ", "fooHandler(",
		"Handler(", "K", "\u212a", "kelvin", "mask", "MASK", "ok", "OK", "\r", "\t", "// TODO", "a", "b", "id",
		"é", "É", "ſ", "s", "x", "\n", "\n", "\n", "\r\n"}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, p := range patterns {
		re := regexp.MustCompile(p)
		for range 300 {
			var b strings.Builder
			for range rng.IntN(40) {
				b.WriteString(pieces[rng.IntN(len(pieces))])
			}
			buf := []byte(b.String())
			want, got := naiveScan(re, buf), fastScan(re, buf)
			if strings.Join(want, "|") != strings.Join(got, "|") {
				t.Fatalf("pattern %q on %q:\n got %q\nwant %q", p, buf, got, want)
			}
		}
	}
}

func TestLineMatcherCountsPastTheCaller(t *testing.T) {
	buf := []byte(strings.Repeat("hit\nmiss\n", 50))
	shown := 0
	n := newLineMatcher(regexp.MustCompile("hit")).scan(buf, func(int, []byte, int) bool {
		shown++
		return shown < 3
	})
	if n != 50 || shown != 3 {
		t.Errorf("counted %d, shown %d; want 50 and 3", n, shown)
	}
}

func FuzzLineMatcher(f *testing.F) {
	f.Add("(?i)deadline", "a Deadline\nx\r\n")
	f.Add(`func \w+\(`, "func f(\nfunc (")
	f.Fuzz(func(t *testing.T, pattern, text string) {
		re, err := regexp.Compile(pattern)
		if err != nil {
			return
		}
		want, got := naiveScan(re, []byte(text)), fastScan(re, []byte(text))
		if strings.Join(want, "|") != strings.Join(got, "|") {
			t.Fatalf("pattern %q on %q:\n got %q\nwant %q", pattern, text, got, want)
		}
	})
}
