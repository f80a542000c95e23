package tools

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"google.golang.org/genai"
)

// binarySniff is how much of a file is looked at for a NUL byte, as git and grep do.
const binarySniff = 8 << 10

var readFileTool = tool{
	decl: func() *genai.FunctionDeclaration {
		return &genai.FunctionDeclaration{
			Description: "Read a text file. Long files are cut in the middle; page with offset/limit.",
			ParametersJsonSchema: object(map[string]any{
				"path":   prop("string", "Relative to the workspace."),
				"offset": prop("integer", "First line, 1-based."),
				"limit":  prop("integer", "Number of lines."),
			}, "path"),
		}
	},
	run: runReadFile,
	describe: func(a *args) string {
		p, _ := a.str("path", false)
		return "Read " + p
	},
	kind: KindRead,
}

// runReadFile returns the file verbatim (an editor's unsaved buffer first), without line
// numbers: they would cost tokens on every line and tempt the model to copy them into edits. A
// file too long for the output limit comes back like any long output, head and tail, with a note
// on how to page; it is not saved again, being a file already.
func runReadFile(ctx context.Context, env *Env, call Call, a *args) Result {
	given, _ := a.str("path", true)
	offset, hasOffset := a.positive("offset")
	limit, _ := a.positive("limit")
	if a.problem != "" {
		return failure(a.problem)
	}
	if !hasOffset {
		offset = 1
	}
	p, problem := env.locate(given, true)
	if problem != "" {
		return failure(problem)
	}
	defer p.close()

	src, size, closeFile, refusal := openForReading(env, p, given)
	if refusal != nil {
		return *refusal
	}
	defer closeFile()
	br := bufio.NewReaderSize(src, binarySniff)
	if sniff, _ := br.Peek(binarySniff); bytes.IndexByte(sniff, 0) >= 0 {
		return failure(fmt.Sprintf("%s is a binary file (%s bytes); not shown", given, commas(size)))
	}

	c := newCapture(env.MaxOutputChars, nil).redacting(env.Secrets)
	lines, err := copyLines(ctx, c, br, offset, limit)
	if err != nil {
		return failure(pathProblem(given, err))
	}
	res := Result{Path: p.key}
	if lines == 0 {
		res.Output = "[" + given + " is empty]"
		return res
	}
	if offset > lines {
		return failure(fmt.Sprintf("offset %d is past the end of %s (%d lines)", offset, given, lines))
	}
	text, chars, omitted := c.render()
	res.TotalChars, res.Omitted = chars, omitted
	res.Output = text
	if note := rangeNote(offset, limit, lines, omitted); note != "" {
		res.Output = lineEnded(text) + note
	}
	return res
}

// openForReading opens what read_file reads: the editor's unsaved buffer, else the file, which
// must be a regular file with no other hard link. refusal is the result when it cannot be read.
func openForReading(env *Env, p *place, given string) (src io.Reader, size int64, closeFile func(), refusal *Result) {
	nothing := func() {}
	if content, ok := env.overlayOf(p.key, p.spill); ok {
		return strings.NewReader(content), int64(len(content)), nothing, nil
	}
	fail := func(msg string) (io.Reader, int64, func(), *Result) {
		r := failure(msg)
		return nil, 0, nothing, &r
	}
	fi, err := p.root.Stat(p.rel)
	switch {
	case err != nil:
		return fail(pathProblem(given, err))
	case fi.IsDir():
		return fail(given + " is a directory; use list_files")
	case !fi.Mode().IsRegular(): // a fifo or a device would block or never end
		return fail(given + " is not a regular file")
	}
	f, err := p.root.Open(p.rel)
	if err != nil {
		return fail(pathProblem(given, err))
	}
	if n := linksOf(f); n > 1 {
		f.Close()
		r := failure(linkRefusal(given, n))
		r.Refused = true
		return nil, 0, nothing, &r
	}
	return f, fi.Size(), func() { f.Close() }, nil
}

// rangeNote says which lines of how many a read shows, and whether its middle was cut.
func rangeNote(offset, limit, lines, omitted int) string {
	end := lines
	if limit > 0 {
		end = min(lines, offset+limit-1)
	}
	cut := offset > 1 || end < lines
	switch {
	case cut && omitted > 0:
		return fmt.Sprintf("[lines %d-%d of %d; the middle was cut, use a smaller limit]", offset, end, lines)
	case cut:
		return fmt.Sprintf("[lines %d-%d of %d]", offset, end, lines)
	case omitted > 0:
		return fmt.Sprintf("[%d lines; the middle was cut, read it with offset and limit]", lines)
	}
	return ""
}

// overlayOf returns the editor's unsaved buffer for a workspace file (never for a saved output).
func (e *Env) overlayOf(key string, spill bool) (string, bool) {
	if e.Overlay == nil || spill {
		return "", false
	}
	return e.Overlay(key)
}

// copyLines writes to w the lines first..first+count-1 (1-based; count 0 means to the end) of r
// and returns how many lines r has. It reads in chunks, so neither a huge file nor a huge line
// costs memory beyond w's own bound.
func copyLines(ctx context.Context, w io.Writer, r io.Reader, first, count int) (lines int, err error) {
	buf := make([]byte, 64<<10)
	line := 1
	last := byte('\n') // an empty file has no lines
	for {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		n, rerr := r.Read(buf)
		chunk := buf[:n]
		for len(chunk) > 0 {
			if count > 0 && line >= first+count { // past the range: only count
				line += bytes.Count(chunk, []byte{'\n'})
				break
			}
			i := bytes.IndexByte(chunk, '\n')
			seg := chunk
			if i >= 0 {
				seg = chunk[:i+1]
			}
			if line >= first {
				if _, err := w.Write(seg); err != nil {
					return 0, err
				}
			}
			if i >= 0 {
				line++
			}
			chunk = chunk[len(seg):]
		}
		if n > 0 {
			last = buf[n-1]
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return 0, rerr
		}
	}
	lines = line - 1
	if last != '\n' {
		lines++
	}
	return lines, nil
}
