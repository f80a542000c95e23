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
		{"echo $((1+2))", [][]word{{w("echo"), split("")}}, true},
		{"echo $(( $(id -u) + 1 ))", [][]word{literal("id", "-u"), {w("echo"), split("")}}, true},
		{"a > f 2>&1", [][]word{literal("a"), {{s: "f", redir: true}}}, true},
		{"a < ~/f >> g", [][]word{literal("a"), {{s: "~/f", dyn: true, redir: true}}, {{s: "g", redir: true}}}, true},
		{"go test 2>&1", [][]word{literal("go", "test")}, false},
		{"ls # c", [][]word{literal("ls")}, true},
		{"a#b", [][]word{literal("a#b")}, false},
		{`sh -c 'a; b'`, [][]word{literal("sh", "-c", "a; b")}, false},
		{`"unclosed`, nil, true}, // the grammar rejects it: hidden (TestScriptHidden)
		{"(a) && { b; }", [][]word{literal("a"), literal("b")}, true},
		// Every program a line can run, wherever the grammar puts it.
		{"f() { a | b & }; f x", [][]word{literal("a"), literal("b"), literal("f", "x"), literal("a"), literal("b")}, true},
		{"if a; then b; elif c; then d; else e; fi", [][]word{literal("a"), literal("b"), literal("c"), literal("d"), literal("e")}, true},
		{"while a; do b; done; until c; do d; done", [][]word{literal("a"), literal("b"), literal("c"), literal("d")}, true},
		{"for x in $(a); do b \"$x\"; done", [][]word{literal("a"), {w("for"), w("x"), w("in"), split("")}, {w("b"), split("$x")}}, true},
		{"case $(a) in x|$(b)) c;; *) d;; esac", [][]word{literal("a"), literal("b"), {w("case"), split("")}, literal("c"), literal("d")}, true},
		{"diff <(a) <(b)", [][]word{literal("a"), literal("b"), {w("diff"), dyn(""), dyn("")}}, true},
		{"cat <<EOF\n$(a)\nEOF", [][]word{literal("cat"), literal("a")}, true},
		{"cat <<'EOF'\n$(a)\nEOF", [][]word{literal("cat")}, true},
		{"sh <<'EOF'\na; b\nEOF", [][]word{literal("sh"), literal("a"), literal("b")}, true},
		{"X=$(a) b", [][]word{literal("a"), {dyn("X="), w("b")}}, true},
		{"export X=$(a)", [][]word{literal("a"), {w("export"), dyn("X=")}}, true},
		{"[[ -f $(a) ]]", [][]word{literal("a"), {w("[["), split(""), w("]]")}}, true}, // the words, not the operators
		{"(( x = $(a) ))", [][]word{literal("a")}, true},
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

// TestScriptHidden: what the grammar rejects, or cannot follow, is hidden.
func TestScriptHidden(t *testing.T) {
	for _, tt := range []struct {
		line   string
		hidden bool
	}{
		{"go test ./...", false},
		{"go test 'unclosed", true},
		{"echo $(", true},
		{"sh <<EOF\n$X\nEOF", true},         // the program a shell reads is computed
		{"cat <<EOF\n$X\nEOF", false},       // data
		{"sh <<< \"$CMD\"", true},           // likewise for a here-string
		{"f(){ f|f& };f", false},            // recursion is read once, not followed
		{"f(){ g & }; g(){ f; }; f", false}, // through another function too
		{"f0(){ :; }; f1(){ f0;f0;f0;f0; }; f2(){ f1;f1;f1;f1; }; f3(){ f2;f2;f2;f2; }; f3", true},
	} {
		sc := readScript(tt.line)
		if (sc.hidden != "") != tt.hidden {
			t.Errorf("readScript(%q): hidden %q, want hidden %v", tt.line, sc.hidden, tt.hidden)
		}
	}
}
