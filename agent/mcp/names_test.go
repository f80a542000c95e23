package mcp

import (
	"regexp"
	"strings"
	"testing"
)

var geminiName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]{0,63}$`)

func TestDeclaredName(t *testing.T) {
	long := strings.Repeat("x", 80)
	for _, tc := range []struct {
		server, tool, want string
	}{
		{"github", "create_issue", "github__create_issue"},
		{"my server", "get.file:v2", "my_server__get_file_v2"},
		{"fs", "read-file", "fs__read-file"},
		{"1password", "get", "_1password__get"},
		{"-x", "t", "_-x__t"},
		{"s", "", "s___"},
		{"émoji🙂", "t", "_moji___t"},
	} {
		got := declaredName(tc.server, tc.tool)
		if got != tc.want {
			t.Errorf("declaredName(%q, %q) = %q, want %q", tc.server, tc.tool, got, tc.want)
		}
		if !geminiName.MatchString(got) {
			t.Errorf("%q is not a valid Gemini function name", got)
		}
	}
	a, b := declaredName("s", long+"a"), declaredName("s", long+"b")
	if len(a) != maxNameLen || !geminiName.MatchString(a) {
		t.Errorf("long name %q: %d characters", a, len(a))
	}
	if a == b || a[:50] != b[:50] {
		t.Errorf("long names %q and %q: want the same prefix and different hashes", a, b)
	}
}

func TestNameTableCollisions(t *testing.T) {
	var table nameTable
	first := table.add(0, "s", "get.file")
	second := table.add(0, "s", "get_file")
	third := table.add(1, "s", "get:file") // the same name on another server of the same name
	if first != "s__get_file" {
		t.Errorf("first = %q, want to keep the plain name", first)
	}
	for _, n := range []string{second, third} {
		if !geminiName.MatchString(n) || !strings.HasPrefix(n, "s__get_file_") {
			t.Errorf("colliding name %q", n)
		}
	}
	if first == second || second == third || first == third {
		t.Errorf("names collide: %q %q %q", first, second, third)
	}
	if r := table.refs[second]; r.server != 0 || r.tool != "get_file" {
		t.Errorf("refs[%q] = %+v", second, r)
	}
	if r := table.refs[third]; r.server != 1 || r.tool != "get:file" {
		t.Errorf("refs[%q] = %+v", third, r)
	}
	// The same additions give the same names.
	var again nameTable
	if again.add(0, "s", "get.file") != first || again.add(0, "s", "get_file") != second || again.add(1, "s", "get:file") != third {
		t.Error("names are not deterministic")
	}
}
