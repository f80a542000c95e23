package tools

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent/ignore"
)

const (
	maxMatches   = 200     // matching lines shown; the rest are counted
	maxLineChars = 200     // characters shown of a matching line, around the match
	maxLineBytes = 1 << 20 // a longer line is matched on its first MiB only
)

// maxSearched bounds the files one search reads; past it the search says it stopped.
const maxSearched = 1_000_000

var searchTool = tool{
	decl: func() *genai.FunctionDeclaration {
		return &genai.FunctionDeclaration{
			Description: "Search text files for a Go regexp (RE2), as ripgrep does: files .gitignore or " +
				".repriseignore exclude, hidden and binary files are skipped. Prints path:line: text in path " +
				"order; past 200 lines, how many more matches each file has.",
			ParametersJsonSchema: object(map[string]any{
				"pattern":         prop("string", "Regexp, e.g. (?i)func \\w+Handler"),
				"path":            prop("string", "File or directory; default the workspace root."),
				"include_ignored": prop("boolean", "Also search ignored and hidden files (never .git)."),
			}, "pattern"),
		}
	},
	run: runSearch,
	describe: func(a *args) string {
		pat, _ := a.str("pattern", false)
		p, _ := a.str("path", false)
		title := fmt.Sprintf("Search %q", pat)
		if p != "" {
			title += " in " + p
		}
		return title
	},
	kind: "search",
}

// runSearch walks the tree in list_files' order with the same rules, reading and matching files
// in parallel (ignore.WalkOrdered) and printing in walk order; an editor's unsaved buffer is
// searched instead of its file. Past maxMatches lines it only counts, so the model still sees
// where the other matches are. It may search a saved output in SpillDir by its absolute path.
func runSearch(ctx context.Context, env *Env, call Call, a *args) Result {
	pattern, _ := a.str("pattern", true)
	given, _ := a.str("path", false)
	all := a.flag("include_ignored")
	if a.problem != "" {
		return failure(a.problem)
	}
	if pattern == "" {
		return failure("pattern is empty")
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return failure("invalid pattern: " + err.Error())
	}
	p, problem := env.locate(given, true)
	if problem != "" {
		return failure(problem)
	}
	defer p.close()
	shown := cmp.Or(given, ".")

	m := newLineMatcher(re)
	opener := newFileOpener(p.root)
	defer opener.close()
	t := searchTally{p: p}
	work := func(name string, d fs.DirEntry) fileHits {
		if !d.Type().IsRegular() {
			return fileHits{} // symlinks are searched where they lead, when that is in the tree
		}
		return searchFile(m, env, p, opener, name)
	}
	var excluded atomic.Int64
	err = ignore.WalkOrdered(ctx, newWalkFS(p.root), filepath.ToSlash(p.rel), walkOptions(all, &excluded), work, t.emit)
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return failure("cancelled")
		}
		return failure(pathProblem(shown, err))
	}
	res := Result{}
	if !p.spill {
		res.Path = p.key
	}
	env.bounded(call, "search", t.text(pattern, shown, int(excluded.Load())), &res)
	return res
}

// searchTally gathers a search's hits in walk order, within the tool's bounds.
type searchTally struct {
	p               *place
	out             strings.Builder
	total, lines    int
	files, withMore int
	linked          int // files not searched for their hard links
	more            []fileCount
	gaveUp          bool
}

// emit takes one file's hits, in walk order.
func (t *searchTally) emit(name string, d fs.DirEntry, h fileHits) error {
	if !d.Type().IsRegular() {
		return nil
	}
	if t.files++; t.files > maxSearched {
		t.gaveUp = true
		return fs.SkipAll
	}
	if h.linked {
		t.linked++
	}
	if h.count == 0 {
		return nil
	}
	t.total += h.count
	k := min(len(h.lines), maxMatches-t.lines)
	for _, l := range h.lines[:k] {
		t.out.WriteString(l)
	}
	t.lines += k
	if rest := h.count - k; rest > 0 {
		t.withMore++
		if len(t.more) < maxMoreFiles {
			t.more = append(t.more, fileCount{t.p.display(name), rest})
		}
	}
	return nil
}

// text is the result: the lines shown, then what was not shown or searched, and why.
func (t *searchTally) text(pattern, shown string, excluded int) string {
	out := &t.out
	switch {
	case t.total > t.lines:
		fmt.Fprintf(out, "[… %d more matching lines not shown, in %s: %s; narrow pattern or path]\n",
			t.total-t.lines, plural(t.withMore, "file"), listCounts(t.more, t.withMore))
	case t.total == 0 && excluded > 0:
		fmt.Fprintf(out, "no matches for %q in %s (%s ignored or hidden not searched; include_ignored searches them)\n",
			pattern, shown, plural(excluded, "entry"))
	case t.total == 0:
		fmt.Fprintf(out, "no matches for %q in %s\n", pattern, shown)
	}
	if t.linked > 0 {
		out.WriteString(linkedNote(t.linked) + "\n")
	}
	if t.gaveUp {
		fmt.Fprintf(out, "[stopped after %d files; narrow pattern or path]\n", maxSearched)
	}
	return strings.TrimSuffix(out.String(), "\n")
}

// walkOptions are the rules list_files and search walk with: git's ignore rules, hidden files
// and skipDirs left out, unless all. excluded counts what they leave out.
func walkOptions(all bool, excluded *atomic.Int64) ignore.WalkOptions {
	return ignore.WalkOptions{
		IncludeIgnored: all,
		Prune:          func(name string) bool { return skipDirs[name] },
		Excluded:       func(string, bool) { excluded.Add(1) },
	}
}

// plural is "1 file", "2 files"; "entry" becomes "entries".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if strings.HasSuffix(noun, "y") {
		return fmt.Sprintf("%d %sies", n, strings.TrimSuffix(noun, "y"))
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// maxMoreFiles is how many files the line past the cap names with their counts.
const maxMoreFiles = 20

type fileCount struct {
	name string
	n    int
}

func listCounts(more []fileCount, files int) string {
	parts := make([]string, len(more))
	for i, f := range more {
		parts[i] = fmt.Sprintf("%s (%d)", f.name, f.n)
	}
	s := strings.Join(parts, ", ")
	if files > len(more) {
		s += fmt.Sprintf(" and %d more files", files-len(more))
	}
	return s
}

// fileHits is what searching one file found: how many lines matched and the first maxMatches
// of them, formatted.
type fileHits struct {
	count  int
	lines  []string
	linked bool // not searched: the file has more than one name
}

// chunkSize is how much of a file is read at once: most source files in one read.
const chunkSize = 256 << 10

var chunks = sync.Pool{New: func() any { b := make([]byte, chunkSize); return &b }}

// searchFile matches one file (or its unsaved buffer); a binary file, or one that cannot be
// read, has no hits.
func searchFile(m *lineMatcher, env *Env, p *place, opener *fileOpener, name string) fileHits {
	display := p.display(name)
	var h fileHits
	emit := func(n int, line []byte, at int) bool {
		h.lines = append(h.lines, fmt.Sprintf("%s:%d: %s\n", display, n, snippet(line, at)))
		return len(h.lines) < maxMatches
	}
	if content, ok := env.overlayOf(name, p.spill); ok {
		if data := []byte(content); !ignore.Binary(data) {
			h.count = m.scan(data, emit)
		}
		return h
	}
	f, err := opener.open(name)
	if err != nil {
		return h
	}
	defer f.Close()
	if linksOf(f) > 1 {
		h.linked = true
		return h
	}
	bp := chunks.Get().(*[]byte)
	defer chunks.Put(bp)
	h.count, _ = scanReader(m, f, bp, emit)
	return h
}

// scanReader matches r chunk by chunk: each chunk is cut after its last newline and the rest
// carried to the next, so lines are whole; a line longer than maxLineBytes is matched on its
// first maxLineBytes. *buf may grow (up to maxLineBytes and a chunk) and is returned grown.
func scanReader(m *lineMatcher, r io.Reader, buf *[]byte, emit func(int, []byte, int) bool) (int, error) {
	b := *buf
	count, base, filled := 0, 0, 0
	skipping := false // the rest of an over-long line is being dropped
	first := true
	for {
		n, err := io.ReadFull(r, b[filled:])
		filled += n
		eof := err == io.EOF || err == io.ErrUnexpectedEOF
		if err != nil && !eof {
			return count, err
		}
		if first {
			first = false
			if ignore.Binary(b[:filled]) {
				return 0, nil
			}
		}
		data := b[:filled]
		if skipping {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				filled = 0
				if eof {
					return count, nil
				}
				continue
			}
			skipping = false
			base++
			data = data[i+1:]
		}
		end := len(data)
		if !eof {
			end = bytes.LastIndexByte(data, '\n') + 1
		}
		if end == 0 { // no newline in a full buffer: a long line
			if len(b) < maxLineBytes+chunkSize {
				b = append(b[:cap(b)], make([]byte, len(b))...)
				*buf = b
				filled = copy(b, data)
				continue
			}
			end, skipping = len(data), true // match its first part, drop the rest
		}
		count += m.scan(data[:end], func(n int, line []byte, at int) bool {
			if emit != nil && !emit(base+n, line, at) {
				emit = nil
			}
			return true
		})
		base += bytes.Count(data[:end], []byte{'\n'})
		filled = copy(b, data[end:])
		if eof { // the whole rest was scanned
			return count, nil
		}
	}
}

// snippet shows a matching line, or, when it is long, maxLineChars characters of it starting a
// little before the match.
func snippet(line []byte, matchAt int) string {
	s := strings.ToValidUTF8(string(line), "\uFFFD")
	if utf8.RuneCountInString(s) <= maxLineChars {
		return s
	}
	runes := []rune(s)
	from := max(0, utf8.RuneCount(line[:matchAt])-maxLineChars/4)
	to := min(len(runes), from+maxLineChars)
	out := string(runes[from:to])
	if from > 0 {
		out = "…" + out
	}
	if to < len(runes) {
		out += "…"
	}
	return out
}
