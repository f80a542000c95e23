package cmdpolicy

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseLine(t *testing.T) {
	w := func(s string) word { return word{s: s} }
	dyn := func(s string) word { return word{s: s, dyn: true} }
	split := func(s string) word { return word{s: s, dyn: true, split: true} }
	tests := []struct {
		line        string
		wantCmds    [][]word
		wantComplex bool
	}{
		{"go test ./...", [][]word{{w("go"), w("test"), w("./...")}}, false},
		{`go test -run "A B" 'c|d' e\ f`, [][]word{literal("go", "test", "-run", "A B", "c|d", "e f")}, false},
		{`echo "" x`, [][]word{literal("echo", "", "x")}, false},
		{"a && b || c; d | e &", [][]word{literal("a"), literal("b"), literal("c"), literal("d"), literal("e")}, true},
		{`echo "x $(id -u) y"`, [][]word{literal("id", "-u"), {w("echo"), dyn("x  y")}}, true},
		{"$(echo sudo) ls", [][]word{literal("echo", "sudo"), {split(""), w("ls")}}, true},
		{"`echo git` push", [][]word{literal("echo", "git"), {split(""), w("push")}}, true},
		{"echo $((1+2))", [][]word{literal("1+2"), {w("echo"), split("")}}, true},
		{"a > f 2>&1", [][]word{literal("a"), {{s: "f", redir: true}}}, true},
		{"a < ~/f >> g", [][]word{literal("a"), {{s: "~/f", dyn: true, redir: true}}, {{s: "g", redir: true}}}, true},
		{"go test 2>&1", [][]word{literal("go", "test")}, false},
		{"ls # c", [][]word{literal("ls")}, true},
		{"a#b", [][]word{literal("a#b")}, false},
		{`sh -c 'a; b'`, [][]word{literal("sh", "-c", "a; b")}, false},
		{`"unclosed`, [][]word{literal("unclosed")}, true},
		{"(a) && { b; }", [][]word{literal("a"), literal("{", "b"), literal("}")}, true},
		// What the shell computes.
		{`$X push "$Y" '$Z' a$B "a$C"`, [][]word{{split("$X"), w("push"), split("$Y"), w("$Z"), split("a$B"), dyn("a$C")}}, false},
		{`ls *.go tests/*.py ~/x a~ {-o,x} x{a,b} [ ] $`, [][]word{{w("ls"), split("*.go"), dyn("tests/*.py"), dyn("~/x"), w("a~"), split("{-o,x}"), dyn("x{a,b}"), w("["), w("]"), w("$")}}, false},
	}
	for _, tt := range tests {
		cmds, complex := parseLine(tt.line)
		if diff := cmp.Diff([]any{cmds, complex}, []any{tt.wantCmds, tt.wantComplex}, cmp.AllowUnexported(word{})); diff != "" {
			t.Errorf("parseLine(%q) (-got +want):\n%s", tt.line, diff)
		}
	}
}
