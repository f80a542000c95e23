package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/reprise-dev/reprise"

// layer ranks the module's packages: a package may depend only on packages of its own rank or
// lower (cmd → lsp → agent → contextwin). Editors' Go files are clients, like cmd.
func layer(pkg string) (rank int, name string) {
	rel := strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
	top, _, _ := strings.Cut(rel, "/")
	switch top {
	case "contextwin":
		return 0, top
	case "agent":
		return 1, top
	case "lsp", "acp":
		return 2, top
	case "cmd", "editors":
		return 3, top
	}
	return -1, rel
}

// testOnly are packages that exist for tests and the offline demo: no library package may link
// them, so a fake can never be wired into the server.
var testOnly = []string{module + "/agent/gemini/geminitest", module + "/lsp/lsptest", module + "/agent/mcp/mcptest", module + "/agent/secret/secrettest", module + "/agent/sandbox/sandboxtest", module + "/agent/openai/openaitest"}

// confined are packages whose module imports are limited further: the command policy is
// security-critical and read on its own, so it depends on nothing of the agent but the list of
// credential locations and the path checks it shares with the file tools, and the tools call it, never the other way round.
var confined = map[string][]string{
	module + "/agent/cmdpolicy": {module + "/agent/secret", module + "/agent/fspath"},
}

// TestLayering holds the dependency direction of the design to what the go command sees
// (non-test dependencies, transitively).
func TestLayering(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Deps " "}}`, module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 10 {
		t.Fatalf("go list listed %d packages", len(lines))
	}
	for _, line := range lines {
		fields := strings.Fields(line)
		pkg, deps := fields[0], fields[1:]
		rank, name := layer(pkg)
		if rank < 0 {
			t.Errorf("%s is in no layer: give it one in layer()", name)
			continue
		}
		for _, d := range deps {
			if !strings.HasPrefix(d, module+"/") {
				continue
			}
			if allowed, ok := confined[pkg]; ok && !slices.Contains(allowed, d) {
				t.Errorf("%s depends on %s: it may import only %v of the module", pkg, d, allowed)
			}
			if dr, dn := layer(d); dr > rank {
				t.Errorf("%s depends on %s: %s may not depend on %s", pkg, d, name, dn)
			} else if dr == 2 && rank == 2 && dn != name {
				t.Errorf("%s depends on %s: lsp and acp are peers, neither imports the other", pkg, d)
			}
			for _, fake := range testOnly {
				if d == fake && rank < 3 && !slices.Contains(testOnly, pkg) {
					t.Errorf("%s links %s, a package for tests", pkg, fake)
				}
			}
		}
	}
}

// TestPackageMapIsCurrent: docs/packages.md lists every package once, in the layer layer()
// gives it, and marks the test packages as testOnly does.
func TestPackageMapIsCurrent(t *testing.T) {
	b, err := os.ReadFile("../../docs/packages.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]int{}
	testDoc := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([^`]+)` \\| (\\d) \\| (.*) \\|$").FindAllStringSubmatch(string(b), -1) {
		if _, dup := documented[m[1]]; dup {
			t.Errorf("docs/packages.md lists %s twice", m[1])
		}
		documented[m[1]], _ = strconv.Atoi(m[2])
		testDoc[m[1]] = strings.HasPrefix(m[3], "*test*")
	}
	out, err := exec.Command("go", "list", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		rel := strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
		rank, _ := layer(pkg)
		got, ok := documented[rel]
		switch {
		case !ok:
			t.Errorf("docs/packages.md does not list %s (layer %d)", rel, rank)
		case got != rank:
			t.Errorf("docs/packages.md puts %s in layer %d; the code in %d", rel, got, rank)
		case testDoc[rel] != slices.Contains(testOnly, pkg):
			t.Errorf("docs/packages.md marks %s test-only %v; testOnly says %v", rel, testDoc[rel], !testDoc[rel])
		}
		delete(documented, rel)
	}
	for rel := range documented {
		t.Errorf("docs/packages.md lists %s, which does not exist", rel)
	}
}

// TestFunctionLength holds every function outside tests to 80 lines, the wildmatch port
// (agent/ignore/wildmatch.go, kept line for line with git's C) excepted: a longer one is a sign
// to split.
func TestFunctionLength(t *testing.T) {
	const limit = 80
	root := "../.."
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && p != root) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") || strings.HasSuffix(p, "wildmatch.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			if fd, ok := decl.(*ast.FuncDecl); ok && fd.Body != nil {
				if n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1; n > limit {
					t.Errorf("%s: %s is %d lines long, over %d: split it", p, fd.Name.Name, n, limit)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
