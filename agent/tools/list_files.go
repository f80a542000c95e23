package tools

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent/ignore"
)

// skipDirs are left out by list_files and search even where no ignore rule names them:
// dependency trees, virtual environments, caches and build output that only drown a listing.
// A path inside one is listed or searched when asked for, and include_ignored lists them.
// vendor/, build/ and dist/ are kept unless .gitignore says otherwise: they are often real source.
var skipDirs = map[string]bool{
	"node_modules": true, "venv": true, "__pycache__": true, "target": true,
}

// maxWalked bounds the entries one listing looks at before it gives up counting.
const maxWalked = 1_000_000

var listFilesTool = tool{
	decl: func() *genai.FunctionDeclaration {
		return &genai.FunctionDeclaration{
			Description: "List files recursively; dirs end with /. Skips what .gitignore or .repriseignore " +
				"exclude, hidden files and node_modules. A tree too big to list is summarized: " +
				"directories with their file counts.",
			ParametersJsonSchema: object(map[string]any{
				"path":            prop("string", "Directory; default the workspace root."),
				"pattern":         prop("string", "Glob on the name, or on the relative path if it has /."),
				"include_ignored": prop("boolean", "Also list ignored and hidden entries (never .git)."),
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
	kind: "search",
}

// runListFiles walks in lexical order per directory (so a directory's content follows it), with
// git's ignore rules, and prints workspace-relative paths the model can pass straight to the
// other tools. When the listing would not fit in one tool output, it prints the directories
// instead, as deep as fits, each with how many files it holds: the model sees the shape of a big
// tree and where to look, rather than a cut list. pattern has path.Match semantics (no **): on the
// base name, or on the whole relative path when it holds a slash. Symlinks are listed by name,
// not followed.
func runListFiles(ctx context.Context, env *Env, call Call, a *args) Result {
	given, _ := a.str("path", false)
	pattern, _ := a.str("pattern", false)
	all := a.flag("include_ignored")
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

	var (
		entries  []listed
		size     int
		walked   int
		gaveUp   bool
		excluded atomic.Int64
	)
	start := filepath.ToSlash(p.rel)
	err = ignore.WalkSorted(ctx, newWalkFS(p.root), start, walkOptions(all, &excluded), func(name string, d fs.DirEntry) error {
		if name == start {
			return nil
		}
		if walked++; walked > maxWalked {
			gaveUp = true
			return fs.SkipAll
		}
		if matchName(pattern, name, d.Name()) {
			entries = append(entries, listed{name, d.IsDir()})
			size += len(name) + 2
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return failure("cancelled")
		}
		return failure(pathProblem(shown, err))
	}
	limit := env.MaxOutputChars
	if limit <= 0 {
		limit = DefaultMaxOutputChars
	}
	text := listing(entries, size, limit, start, shown, pattern)
	if gaveUp {
		text += fmt.Sprintf("[stopped after %d entries; narrow path or pattern]\n", maxWalked)
	}
	if n := excluded.Load(); n > 0 && !all {
		text += fmt.Sprintf("[%s ignored or hidden not listed; include_ignored lists them]\n", plural(int(n), "entry"))
	}
	res := Result{Path: p.key}
	env.bounded(call, "list_files", strings.TrimSuffix(text, "\n"), &res)
	return res
}

// listing is the entries one per line, directories ending in /, or summarized by directory
// when they would not fit in limit characters.
func listing(entries []listed, size, limit int, start, shown, pattern string) string {
	var b strings.Builder
	switch {
	case len(entries) == 0 && pattern != "":
		fmt.Fprintf(&b, "no entries under %s match %q\n", shown, pattern)
	case len(entries) == 0:
		fmt.Fprintf(&b, "%s is empty\n", shown)
	case size > limit && summarize(&b, entries, start, limit):
	default:
		for _, e := range entries {
			b.WriteString(e.name)
			if e.dir {
				b.WriteByte('/')
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}

type listed struct {
	name string
	dir  bool
}

// summaryReserve is the room a summary leaves for the notes that may follow it.
const summaryReserve = 200

// summarize writes the directories under start that hold listed files, as deep as fits in
// limit characters, each with the number of listed files below it, and the files of start itself
// when they fit too. It reports false when there is no file to summarize.
func summarize(b *strings.Builder, entries []listed, start string, limit int) bool {
	prefix := ""
	if start != "." {
		prefix = start + "/"
	}
	depthOf := func(name string) int { return strings.Count(strings.TrimPrefix(name, prefix), "/") }
	files := 0
	under := map[string]int{} // directory → listed files below it, at any depth
	var top []string          // the files of start itself
	for _, e := range entries {
		if e.dir {
			continue
		}
		files++
		for d := path.Dir(e.name); d+"/" != prefix && d != "."; d = path.Dir(d) {
			under[d]++
		}
		if depthOf(e.name) == 0 {
			top = append(top, e.name)
		}
	}
	if files == 0 {
		return false
	}
	dirs := slices.Collect(maps.Keys(under))
	slices.SortFunc(dirs, func(a, b string) int { // walk order: component by component
		return slices.Compare(strings.Split(a, "/"), strings.Split(b, "/"))
	})
	header := fmt.Sprintf("[%s in %s: too many to list. The directories, with the files below each; list_files on one, or a pattern, narrows it.]\n",
		plural(files, "file"), plural(len(dirs), "directory"))
	room := limit - summaryReserve - len(header)
	render := func(depth int) string {
		var s strings.Builder
		for _, d := range dirs {
			if depthOf(d) < depth {
				fmt.Fprintf(&s, "%s/ (%s)\n", d, plural(under[d], "file"))
			}
		}
		return s.String()
	}
	body := render(1)
	for depth := 2; ; depth++ {
		next := render(depth)
		if len(next) > room || next == body {
			break
		}
		body = next
	}
	b.WriteString(header)
	b.WriteString(body)
	switch t := strings.Join(top, "\n"); {
	case t == "":
	case len(body)+len(t) <= room:
		b.WriteString(t + "\n")
	default:
		fmt.Fprintf(b, "[and %s directly in %s]\n", plural(len(top), "file"), start)
	}
	return true
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
