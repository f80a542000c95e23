package lsp

// The names shared with the editors (DESIGN §4, STYLE rule 10) are the constants of protocol.go.
// These tests hold every copy to them in both directions: a name one side has and the other lacks
// fails, as does a name whose string differs.

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Where the editors keep their copies, from this package's directory.
const (
	vscodeDir   = "../editors/vscode"
	protocolTS  = vscodeDir + "/src/protocol.ts"
	settingsTS  = vscodeDir + "/src/settings.ts"
	commandsTS  = vscodeDir + "/src/commands.ts"
	packageJSON = vscodeDir + "/package.json"
	protocolLua = "../editors/nvim/lua/reprise/protocol.lua"
)

// wireGroups are the prefixes of protocol.go's names, one per kind of name, and the names that
// stand alone. Every constant of protocol.go is one of them, so a new kind of name is added here
// on purpose.
var (
	wireGroups = []string{"Method", "Command", "Action", "Update", "Stop", "ToolStatus", "ToolKind",
		"Compaction", "Trigger", "Source", "Status", "Entry", "Review", "Sandbox", "Code", "MCPState"}
	wireSingles = []string{"ExperimentalCapability", "ConfigSection", "ServerName"}
)

// goConsts reads the constants of the non-test Go files of dir whose declared type is typ (any
// type when typ is ""): name → value, a string unquoted, a number as written.
func goConsts(t *testing.T, dir, file, typ string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || file != "" && name != file {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				if id, _ := vs.Type.(*ast.Ident); typ != "" && (id == nil || id.Name != typ) {
					continue
				}
				for i, n := range vs.Names {
					if i < len(vs.Values) {
						if v, ok := literal(vs.Values[i]); ok {
							out[n.Name] = v
						}
					}
				}
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("no constants of type %q found in %s", typ, dir)
	}
	return out
}

// literal is the value of a string or integer literal, negative ones included.
func literal(e ast.Expr) (string, bool) {
	neg := ""
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.SUB {
		neg, e = "-", u.X
	}
	lit, ok := e.(*ast.BasicLit)
	switch {
	case !ok:
		return "", false
	case lit.Kind == token.STRING:
		s, err := strconv.Unquote(lit.Value)
		return s, err == nil && neg == ""
	case lit.Kind == token.INT:
		return neg + lit.Value, true
	}
	return "", false
}

// protocolNames are the constants of protocol.go.
func protocolNames(t *testing.T) map[string]string {
	t.Helper()
	return goConsts(t, ".", "protocol.go", "")
}

// group returns the names of protocol.go in group prefix.
func group(names map[string]string, prefix string) map[string]string {
	out := map[string]string{}
	for n, v := range names {
		if groupOf(n) == prefix {
			out[n] = v
		}
	}
	return out
}

// groupOf is the longest prefix of wireGroups that name starts with.
func groupOf(name string) string {
	best := ""
	for _, g := range wireGroups {
		if strings.HasPrefix(name, g) && len(g) > len(best) {
			best = g
		}
	}
	return best
}

// compareNames reports, in both directions, the names one table has and the other lacks and the
// names whose strings differ.
func compareNames(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for _, n := range slices.Sorted(maps.Keys(want)) {
		g, ok := got[n]
		switch {
		case !ok:
			t.Errorf("%s lacks %s (%q in lsp/protocol.go)", what, n, want[n])
		case g != want[n]:
			t.Errorf("%s: %s is %q, lsp/protocol.go says %q", what, n, g, want[n])
		}
	}
	for _, n := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[n]; !ok {
			t.Errorf("%s has %s = %q, which lsp/protocol.go does not define", what, n, got[n])
		}
	}
}

func TestProtocolNamesAreGrouped(t *testing.T) {
	for n := range protocolNames(t) {
		if groupOf(n) == "" && !slices.Contains(wireSingles, n) {
			t.Errorf("protocol.go: %s is in no group of wireGroups", n)
		}
	}
}

// stringKeys turns an agent-to-wire table into strings.
func stringKeys[K ~string](m map[K]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[string(k)] = v
	}
	return out
}

// TestWireNamesCoverAgent: every value the agent defines for a wire enum has a wire name, every
// wire name of the group is the image of one agent value, and no two values share a name.
func TestWireNamesCoverAgent(t *testing.T) {
	names := protocolNames(t)
	tests := []struct {
		dir, typ string
		table    map[string]string
		group    string
	}{
		{"../agent", "EventType", stringKeys(updateNames), "Update"},
		{"../agent", "StopReason", stringKeys(stopNames), "Stop"},
		{"../agent", "ToolStatus", stringKeys(toolStatusNames), "ToolStatus"},
		{"../agent/tools", "Kind", stringKeys(toolKindNames), "ToolKind"},
		{"../agent", "CompactionState", stringKeys(compactionNames), "Compaction"},
		{"../contextwin", "Trigger", stringKeys(triggerNames), "Trigger"},
		{"../contextwin", "Source", stringKeys(sourceNames), "Source"},
		{"../agent", "Status", stringKeys(statusNames), "Status"},
		{"../agent", "EntryKind", stringKeys(entryNames), "Entry"},
		{"../agent", "ReviewState", stringKeys(reviewNames), "Review"},
		{"../agent/sandbox", "Mode", stringKeys(sandboxNames), "Sandbox"},
	}
	for _, tt := range tests {
		t.Run(tt.typ, func(t *testing.T) {
			agentValues := goConsts(t, tt.dir, "", tt.typ)
			for _, n := range slices.Sorted(maps.Keys(agentValues)) {
				if _, ok := tt.table[agentValues[n]]; !ok {
					t.Errorf("%s.%s = %q has no wire name in protocol.go", filepath.Base(tt.dir), n, agentValues[n])
				}
			}
			values := slices.Collect(maps.Values(agentValues))
			wireNames := map[string]string{} // wire name → agent value
			for v, w := range tt.table {
				if !slices.Contains(values, v) {
					t.Errorf("protocol.go maps %q, which is no %s of %s", v, tt.typ, tt.dir)
				}
				if w == "" {
					continue // not sent
				}
				if prev, ok := wireNames[w]; ok {
					t.Errorf("%q and %q both go out as %q", prev, v, w)
				}
				wireNames[w] = v
			}
			want := slices.Sorted(maps.Values(group(names, tt.group)))
			if diff := cmp.Diff(slices.Sorted(maps.Keys(wireNames)), want); diff != "" {
				t.Errorf("wire names mapped from %s vs protocol.go's %s* names (-mapped +declared):\n%s", tt.typ, tt.group, diff)
			}
		})
	}
}

// TestServerCommands: the command table (command_table.go) handles exactly the Command* names,
// and initialize announces exactly them, each once.
func TestServerCommands(t *testing.T) {
	declared := group(protocolNames(t), "Command")
	if diff := cmp.Diff(slices.Sorted(maps.Keys(commands)), slices.Sorted(maps.Values(declared))); diff != "" {
		t.Errorf("commands the table handles vs protocol.go's Command* (-handled +declared):\n%s", diff)
	}
	if n := len(slices.Compact(slices.Sorted(slices.Values(serverCommands)))); n != len(serverCommands) {
		t.Errorf("serverCommands announces a command twice: %v", serverCommands)
	}
	if diff := cmp.Diff(slices.Sorted(slices.Values(serverCommands)), slices.Sorted(maps.Values(declared))); diff != "" {
		t.Errorf("serverCommands vs protocol.go's Command* (-announced +declared):\n%s", diff)
	}
}

// TestVSCodeProtocolNames: src/protocol.ts exports exactly protocol.go's names.
func TestVSCodeProtocolNames(t *testing.T) {
	b, err := os.ReadFile(protocolTS)
	if err != nil {
		t.Fatal(err)
	}
	ts := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^export const (\w+) = ('[^']*'|-?\d+);`).FindAllStringSubmatch(string(b), -1) {
		ts[m[1]] = strings.Trim(m[2], "'")
	}
	compareNames(t, "editors/vscode/src/protocol.ts", ts, protocolNames(t))
}

// TestNeovimProtocolNames: every line of protocol.lua that names a Go constant in its comment
// (`key = 'value', -- GoName`) holds its string, and every constant is named once.
func TestNeovimProtocolNames(t *testing.T) {
	b, err := os.ReadFile(protocolLua)
	if err != nil {
		t.Fatal(err)
	}
	lua := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)=\s*('[^']*'|-?\d+),?\s*--\s*([A-Z]\w*)`).FindAllStringSubmatch(string(b), -1) {
		if _, dup := lua[m[2]]; dup {
			t.Errorf("protocol.lua names %s twice", m[2])
		}
		lua[m[2]] = strings.Trim(m[1], "'")
	}
	compareNames(t, "editors/nvim/lua/reprise/protocol.lua", lua, protocolNames(t))
}

// tsStrings reads the strings of `const name = [ … ]` (or `{ … }`) in a TypeScript file.
func tsStrings(t *testing.T, path, name string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)const ` + name + ` = [\[{](.*?)[\]}] as const`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("%s: no const %s", path, name)
	}
	var out []string
	for _, s := range regexp.MustCompile(`'([^']*)'`).FindAllSubmatch(m[1], -1) {
		out = append(out, string(s[1]))
	}
	slices.Sort(out)
	return out
}

// vscodePackage is the part of the extension's package.json the tests read.
type vscodePackage struct {
	Contributes struct {
		Commands []struct {
			Command string `json:"command"`
		} `json:"commands"`
		Configuration struct {
			Properties map[string]struct {
				Enum []string `json:"enum"`
			} `json:"properties"`
		} `json:"configuration"`
	} `json:"contributes"`
}

func readPackage(t *testing.T) vscodePackage {
	t.Helper()
	b, err := os.ReadFile(packageJSON)
	if err != nil {
		t.Fatal(err)
	}
	var p vscodePackage
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatalf("%s: %v", packageJSON, err)
	}
	return p
}

// TestVSCodeSettings: the extension declares every server setting and its own, and nothing else;
// it passes exactly the server's to the server; the sandbox setting offers exactly its wire values.
func TestVSCodeSettings(t *testing.T) {
	var server []string
	st := reflect.TypeFor[Settings]()
	for i := range st.NumField() {
		name, _, _ := strings.Cut(st.Field(i).Tag.Get("json"), ",")
		server = append(server, name)
	}
	slices.Sort(server)
	serverKeys, clientKeys := tsStrings(t, settingsTS, "serverKeys"), tsStrings(t, settingsTS, "clientKeys")
	if diff := cmp.Diff(serverKeys, server); diff != "" {
		t.Errorf("settings.ts serverKeys vs lsp.Settings (-extension +server):\n%s", diff)
	}
	for _, k := range clientKeys {
		if slices.Contains(server, k) {
			t.Errorf("settings.ts: %s is a clientKey and a server setting", k)
		}
	}
	props := readPackage(t).Contributes.Configuration.Properties
	var declared []string
	for k := range props {
		name, ok := strings.CutPrefix(k, ConfigSection+".")
		if !ok {
			t.Errorf("package.json: setting %s is outside the %q section", k, ConfigSection)
		}
		declared = append(declared, name)
	}
	slices.Sort(declared)
	if diff := cmp.Diff(declared, slices.Sorted(slices.Values(append(server, clientKeys...)))); diff != "" {
		t.Errorf("package.json settings vs lsp.Settings and the extension's own (-package.json +server and client):\n%s", diff)
	}
	enum := slices.Sorted(slices.Values(props[ConfigSection+".sandbox"].Enum))
	if diff := cmp.Diff(enum, slices.Sorted(maps.Values(group(protocolNames(t), "Sandbox")))); diff != "" {
		t.Errorf("package.json sandbox values vs protocol.go's Sandbox* (-package.json +protocol.go):\n%s", diff)
	}
}

// TestVSCodeCommands: package.json contributes exactly the commands the extension registers, and
// none is a server command (vscode-languageclient registers those from executeCommandProvider; a
// second registration would fail).
func TestVSCodeCommands(t *testing.T) {
	var contributed []string
	for _, c := range readPackage(t).Contributes.Commands {
		contributed = append(contributed, c.Command)
		if slices.Contains(serverCommands, c.Command) {
			t.Errorf("package.json contributes %s, a server command", c.Command)
		}
	}
	slices.Sort(contributed)
	if diff := cmp.Diff(contributed, tsStrings(t, commandsTS, "ids")); diff != "" {
		t.Errorf("package.json commands vs commands.ts ids (-package.json +registered):\n%s", diff)
	}
}

// TestProtocolDocNames: PROTOCOL.md's tables list exactly the commands, the sessionUpdate kinds
// and the settings of the code.
func TestProtocolDocNames(t *testing.T) {
	b, err := os.ReadFile("PROTOCOL.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	names := protocolNames(t)
	section := func(heading string) string {
		_, s, ok := strings.Cut(doc, "\n"+heading+"\n")
		if !ok {
			t.Fatalf("PROTOCOL.md has no %q", heading)
		}
		s, _, _ = strings.Cut(s, "\n#")
		return s
	}
	rows := func(s string) []string {
		var out []string
		for _, m := range regexp.MustCompile("(?m)^\\| `([^`]+)` \\|").FindAllStringSubmatch(s, -1) {
			out = append(out, m[1])
		}
		slices.Sort(out)
		return out
	}
	var settings []string
	st := reflect.TypeFor[Settings]()
	for i := range st.NumField() {
		name, _, _ := strings.Cut(st.Field(i).Tag.Get("json"), ",")
		settings = append(settings, name)
	}
	slices.Sort(settings)
	for _, tt := range []struct {
		heading string
		want    []string
	}{
		{"## Commands", slices.Sorted(maps.Values(group(names, "Command")))},
		{"### `reprise/sessionUpdate`", slices.Sorted(maps.Values(group(names, "Update")))},
		{"## Settings", settings},
	} {
		if diff := cmp.Diff(rows(section(tt.heading)), tt.want); diff != "" {
			t.Errorf("PROTOCOL.md %s vs the code (-doc +code):\n%s", tt.heading, diff)
		}
	}
	// The stop reasons are listed in turn_end's row.
	turnEnd := regexp.MustCompile("(?m)^\\| `turn_end` \\|.*$").FindString(doc)
	for n, v := range group(names, "Stop") {
		if !strings.Contains(turnEnd, fmt.Sprintf("`%s`", v)) {
			t.Errorf("PROTOCOL.md: turn_end's row does not list %s (%s)", v, n)
		}
	}
}

// TestLSPTestNames: the fake editor's copies of the names (lowercase, so it stays a plain client)
// are protocol.go's strings.
func TestLSPTestNames(t *testing.T) {
	names := protocolNames(t)
	copies := goConsts(t, "lsptest", "", "")
	n := 0
	for name, v := range copies {
		want, ok := names[strings.ToUpper(name[:1])+name[1:]]
		if !ok {
			continue // a constant of its own
		}
		n++
		if v != want {
			t.Errorf("lsptest: %s is %q, lsp/protocol.go says %q", name, v, want)
		}
	}
	if n < 4 {
		t.Errorf("found %d of lsptest's copies of protocol names, want at least 4", n)
	}
}
