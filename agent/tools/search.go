package tools

import (
	"bufio"
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
	"unicode/utf8"

	"google.golang.org/genai"
)

const (
	maxMatches   = 200     // matching lines shown; the rest are counted
	maxLineChars = 200     // characters shown of a matching line, around the match
	maxLineBytes = 1 << 20 // a longer line is matched on its first MiB only
)

var searchTool = tool{
	decl: func() *genai.FunctionDeclaration {
		return &genai.FunctionDeclaration{
			Description: "Search text files for a Go regexp (RE2). Prints path:line: text.",
			ParametersJsonSchema: object(map[string]any{
				"pattern": prop("string", "Regexp, e.g. (?i)func \\w+Handler"),
				"path":    prop("string", "File or directory; default the workspace root."),
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
	kind: KindSearch,
}

// runSearch greps line by line, in the walk order of list_files and skipping the same
// directories and binary files; an editor's unsaved buffer is searched instead of its file. It
// may search a saved output in SpillDir by its absolute path.
func runSearch(ctx context.Context, env *Env, call Call, a *args) Result {
	pattern, _ := a.str("pattern", true)
	given, _ := a.str("path", false)
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

	s := searcher{re: re, br: bufio.NewReaderSize(nil, 64<<10)}
	start := filepath.ToSlash(p.rel)
	walked := 0
	err = fs.WalkDir(p.root.FS(), start, func(name string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if err != nil {
			if name == start {
				return err
			}
			return nil
		}
		if d.IsDir() {
			if name != start && skipDirs[d.Name()] {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil // symlinks are searched where they lead, when that is in the tree
		}
		if walked++; walked > maxWalked {
			s.gaveUp = true
			return fs.SkipAll
		}
		var r io.Reader
		if content, ok := env.overlayOf(name, p.spill); ok {
			r = strings.NewReader(content)
		} else {
			f, err := p.root.Open(filepath.FromSlash(name))
			if err != nil {
				return nil
			}
			defer f.Close()
			r = f
		}
		return s.file(p.display(name), r)
	})
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return failure("cancelled")
		}
		return failure(pathProblem(shown, err))
	}
	switch {
	case s.gaveUp:
		fmt.Fprintf(&s.out, "[stopped after %d files; %d more matching lines not shown; narrow pattern or path]\n",
			maxWalked, max(s.matches-maxMatches, 0))
	case s.matches > maxMatches:
		fmt.Fprintf(&s.out, "[… %d more matching lines not shown; narrow pattern or path]\n", s.matches-maxMatches)
	case s.matches == 0:
		fmt.Fprintf(&s.out, "no matches for %q in %s\n", pattern, shown)
	}
	res := Result{}
	if !p.spill {
		res.Path = p.key
	}
	env.bounded(call, "search", strings.TrimSuffix(s.out.String(), "\n"), &res)
	return res
}

// searcher holds what one search call accumulates; its reader is reused file after file.
type searcher struct {
	re      *regexp.Regexp
	br      *bufio.Reader
	long    []byte // a line longer than br's buffer, up to maxLineBytes
	out     strings.Builder
	matches int
	gaveUp  bool
}

// file searches one file unless it looks binary; read errors end the file quietly.
func (s *searcher) file(name string, r io.Reader) error {
	s.br.Reset(r)
	if sniff, _ := s.br.Peek(binarySniff); bytes.IndexByte(sniff, 0) >= 0 {
		return nil
	}
	for n := 1; ; n++ {
		line, err := s.line()
		if len(line) > 0 || err == nil {
			line = bytes.TrimRight(line, "\r\n")
			if loc := s.re.FindIndex(line); loc != nil {
				s.matches++
				if s.matches <= maxMatches {
					fmt.Fprintf(&s.out, "%s:%d: %s\n", name, n, snippet(line, loc[0]))
				}
			}
		}
		if err != nil {
			return nil
		}
	}
}

// line returns the next line, keeping at most maxLineBytes of a very long one.
func (s *searcher) line() ([]byte, error) {
	line, err := s.br.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		return line, err
	}
	s.long = append(s.long[:0], line...)
	for err == bufio.ErrBufferFull {
		line, err = s.br.ReadSlice('\n')
		if room := maxLineBytes - len(s.long); room > 0 {
			s.long = append(s.long, line[:min(room, len(line))]...)
		}
	}
	return s.long, err
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
