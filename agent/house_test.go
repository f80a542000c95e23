package agent

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	gotypes "go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The shape of the package (issue 33): Session is the turn loop and the verbs that join its
// parts; each part (the conversation, the tracker, billing, the compactor, the explicit cache)
// has its own behaviour; and no file of the package depends, through others, on a file that
// depends on it.

// sessionParts are the fields of Session that are parts; opts is read-only configuration, and
// settings and loop are the session's own state.
var sessionParts = []string{"conv", "files", "memo", "bill", "compactor", "caching", "subagents"}

// maxSessionMethods bounds Session: past it, behaviour is creeping back from the parts.
const maxSessionMethods = 45

func TestHouse(t *testing.T) {
	fset, files, info, pkg := checkPackage(t)
	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || receiver(fd) != "Session" {
				continue
			}
			if onePart(fd, info) {
				t.Errorf("%s: Session.%s touches only one part: it belongs to that part", fset.Position(fd.Pos()), fd.Name.Name)
			}
		}
	}
	sess := gotypes.NewPointer(pkg.Scope().Lookup("Session").Type())
	if n := gotypes.NewMethodSet(sess).Len(); n > maxSessionMethods {
		t.Errorf("Session has %d methods, over %d", n, maxSessionMethods)
	}
	edges := fileGraph(fset, files, info)
	for from, tos := range edges {
		for to := range tos {
			if reaches(edges, to, from) {
				t.Errorf("%s depends on %s, which depends back on it", from, to)
			}
		}
	}
}

// onePart tells whether a method of Session touches the fields of exactly one part and nothing
// else of the session but its options; an accessor that returns the part is not counted.
func onePart(fd *ast.FuncDecl, info *gotypes.Info) bool {
	if len(fd.Recv.List[0].Names) == 0 || fd.Body == nil {
		return false
	}
	recv := info.Defs[fd.Recv.List[0].Names[0]]
	touched := map[string]bool{}
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		if se, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := se.X.(*ast.Ident); ok && info.Uses[id] == recv {
				touched[se.Sel.Name] = true
			}
		}
		return true
	})
	delete(touched, "opts")
	if len(touched) != 1 {
		return false
	}
	for name := range touched {
		if !slices.Contains(sessionParts, name) {
			return false
		}
		if len(fd.Body.List) == 1 {
			if r, ok := fd.Body.List[0].(*ast.ReturnStmt); ok && len(r.Results) == 1 {
				if u, ok := r.Results[0].(*ast.UnaryExpr); ok && u.Op == token.AND {
					return false // return &s.part
				}
				if se, ok := r.Results[0].(*ast.SelectorExpr); ok && se.Sel.Name == name {
					return false // return s.part
				}
			}
		}
	}
	return true
}

func receiver(fd *ast.FuncDecl) string {
	if fd.Recv == nil {
		return ""
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// fileGraph is which file of the package uses what another declares (types, functions,
// methods, fields, package-level values).
func fileGraph(fset *token.FileSet, files []*ast.File, info *gotypes.Info) map[string]map[string]bool {
	edges := map[string]map[string]bool{}
	for id, obj := range info.Uses {
		if obj.Pkg() == nil || obj.Pkg().Path() != "agent" || !obj.Pos().IsValid() {
			continue
		}
		if v, ok := obj.(*gotypes.Var); ok && !v.IsField() && obj.Parent() != obj.Pkg().Scope() {
			continue // a local
		}
		if _, ok := obj.(*gotypes.Func); !ok && obj.Parent() != nil && obj.Parent() != obj.Pkg().Scope() {
			continue
		}
		from, to := filepath.Base(fset.Position(id.Pos()).Filename), filepath.Base(fset.Position(obj.Pos()).Filename)
		if from != to {
			if edges[from] == nil {
				edges[from] = map[string]bool{}
			}
			edges[from][to] = true
		}
	}
	return edges
}

func reaches(edges map[string]map[string]bool, from, to string) bool {
	seen, stack := map[string]bool{from: true}, []string{from}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if x == to {
			return true
		}
		for y := range edges[x] {
			if !seen[y] {
				seen[y] = true
				stack = append(stack, y)
			}
		}
	}
	return false
}

// checkPackage type-checks the package's own files (not its tests) against the export data of
// its imports, which go list builds.
func checkPackage(t *testing.T) (*token.FileSet, []*ast.File, *gotypes.Info, *gotypes.Package) {
	out, err := exec.Command("go", "list", "-export", "-deps", "-json=ImportPath,Export", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	exports := map[string]string{}
	for dec := json.NewDecoder(bytes.NewReader(out)); dec.More(); {
		var p struct{ ImportPath, Export string }
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		exports[p.ImportPath] = p.Export
	}
	fset := token.NewFileSet()
	names, _ := filepath.Glob("*.go")
	var files []*ast.File
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, n, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	lookup := func(path string) (io.ReadCloser, error) { return os.Open(exports[path]) }
	conf := gotypes.Config{Importer: importer.ForCompiler(fset, "gc", lookup)}
	info := &gotypes.Info{Uses: map[*ast.Ident]gotypes.Object{}, Defs: map[*ast.Ident]gotypes.Object{}}
	pkg, err := conf.Check("agent", fset, files, info)
	if err != nil {
		t.Fatal(err)
	}
	return fset, files, info, pkg
}
