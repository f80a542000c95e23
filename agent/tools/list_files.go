package tools

import (
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strings"

	"google.golang.org/genai"
)

// skipDirs are not descended into by list_files and search: version control data, dependency
// trees, virtual environments, caches and build output that only drown the listing. They are
// still listed (with their trailing /), and a path inside one is listed or searched when asked
// for. vendor/, build/ and dist/ are kept: they are often real source.
var skipDirs = map[string]bool{
	".git": true, ".hg": true, ".svn": true, "node_modules": true, ".venv": true, "venv": true,
	"__pycache__": true, ".pytest_cache": true, ".mypy_cache": true, ".ruff_cache": true,
	".tox": true, ".gradle": true, ".next": true, "target": true,
}

const (
	maxListed = 1000    // entries shown
	maxWalked = 100_000 // entries looked at before giving up counting
)

var listFilesTool = tool{
	decl: func() *genai.FunctionDeclaration {
		return &genai.FunctionDeclaration{
			Description: "List files recursively; dirs end with /. Skips .git, node_modules and caches.",
			ParametersJsonSchema: object(map[string]any{
				"path":    prop("string", "Directory; default the workspace root."),
				"pattern": prop("string", "Glob on the name, or on the relative path if it has /."),
			}),
		}
	},
	run: runListFiles,
	describe: func(a *args) string {
		p, _ := a.str("path", false)
		pat, _ := a.str("pattern", false)
		title := "List " + cmp.Or(p, "files")
		if pat != "" {
			title += " matching " + pat
		}
		return title
	},
	kind: KindSearch,
}

// runListFiles walks in lexical order per directory (so a directory's content follows it) and
// prints workspace-relative paths the model can pass straight to the other tools. pattern has
// path.Match semantics (no **): on the base name, or on the whole relative path when it holds a
// slash. Symlinks are listed by name, not followed.
func runListFiles(ctx context.Context, env *Env, call Call, a *args) Result {
	given, _ := a.str("path", false)
	pattern, _ := a.str("pattern", false)
	if a.problem != "" {
		return failure(a.problem)
	}
	if _, err := path.Match(pattern, ""); err != nil {
		return failure(fmt.Sprintf("invalid pattern %q: %v", pattern, err))
	}
	p, problem := env.locate(given, false)
	if problem != "" {
		return failure(problem)
	}
	defer p.close()
	shown := cmp.Or(given, ".")
	fi, err := p.root.Stat(p.rel)
	if err != nil {
		return failure(pathProblem(shown, err))
	}
	if !fi.IsDir() {
		return failure(shown + " is a file; use read_file")
	}

	var b strings.Builder
	listed, more := 0, 0
	start := filepath.ToSlash(p.rel)
	walked, gaveUp := 0, false
	err = fs.WalkDir(p.root.FS(), start, func(name string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if err != nil {
			if name == start {
				return err
			}
			return nil // an unreadable directory: leave it out
		}
		if name == start {
			return nil
		}
		if walked++; walked > maxWalked {
			gaveUp = true
			return fs.SkipAll
		}
		if matchName(pattern, name, d.Name()) {
			if listed < maxListed {
				b.WriteString(name)
				if d.IsDir() {
					b.WriteByte('/')
				}
				b.WriteByte('\n')
				listed++
			} else {
				more++
			}
		}
		if d.IsDir() && skipDirs[d.Name()] {
			return fs.SkipDir
		}
		return nil
	})
	if err != nil {
		return failure(pathProblem(shown, err))
	}
	switch {
	case gaveUp:
		fmt.Fprintf(&b, "[… more than %d more entries not listed; narrow path or pattern]\n", more)
	case more > 0:
		fmt.Fprintf(&b, "[… %d more entries not listed; narrow path or pattern]\n", more)
	case listed == 0 && pattern != "":
		fmt.Fprintf(&b, "no entries under %s match %q\n", shown, pattern)
	case listed == 0:
		fmt.Fprintf(&b, "%s is empty\n", shown)
	}
	res := Result{Path: p.key}
	env.bounded(call, "list_files", strings.TrimSuffix(b.String(), "\n"), &res)
	return res
}

// matchName applies a list_files pattern: on the relative path when it has a slash, otherwise
// on the base name. The pattern was checked already.
func matchName(pattern, rel, base string) bool {
	if pattern == "" {
		return true
	}
	if strings.Contains(pattern, "/") {
		ok, _ := path.Match(pattern, rel)
		return ok
	}
	ok, _ := path.Match(pattern, base)
	return ok
}
