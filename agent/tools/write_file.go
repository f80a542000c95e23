package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"

	"google.golang.org/genai"
)

// newFileMode is the mode of a file write_file creates.
const newFileMode fs.FileMode = 0o644

var writeFileTool = tool{
	decl: func() *genai.FunctionDeclaration {
		return &genai.FunctionDeclaration{
			Description: "Create or overwrite a file; parent dirs are created.",
			ParametersJsonSchema: object(map[string]any{
				"path":    prop("string", "Relative to the workspace."),
				"content": prop("string", "The whole new content."),
			}, "path", "content"),
		}
	},
	run: runWriteFile,
	describe: func(a *args) string {
		p, _ := a.str("path", false)
		return "Write " + p
	},
	kind: KindEdit,
}

func runWriteFile(ctx context.Context, env *Env, call Call, a *args) Result {
	given, _ := a.str("path", true)
	content, _ := a.str("content", true)
	if a.problem != "" {
		return failure(a.problem)
	}
	p, problem := env.locate(given, false)
	if problem != "" {
		return failure(problem)
	}
	defer p.close()
	if r, refused := vcsRefusal(p, given); refused {
		return r
	}
	cur, problem := current(p, given)
	if problem != "" {
		return failure(problem)
	}
	if cur.existed && bytes.Equal(cur.data, []byte(content)) {
		return Result{Output: given + " unchanged: it already has this content", Path: p.key}
	}
	if r, refused := env.guard(p); refused {
		return r
	}
	if r, ok := env.askWrite(ctx, call, p, given, "write", cur); !ok {
		return r
	}
	if env.BeforeChange != nil {
		env.BeforeChange(p.key, cur.data, cur.existed)
	}
	if dir := filepath.Dir(p.rel); dir != "." {
		if err := p.root.MkdirAll(dir, 0o755); err != nil {
			return failure(pathProblem(given, err))
		}
	}
	if err := WriteAtomic(p.root, p.rel, []byte(content), cur.mode, env.Temps); err != nil {
		return failure(fmt.Sprintf("cannot write %s: %v", given, unwrapPath(err)))
	}
	verb := "created"
	if cur.existed {
		verb = "wrote"
	}
	return Result{
		Output:  fmt.Sprintf("%s %s (%s bytes)", verb, given, commas(int64(len(content)))),
		Path:    p.key,
		Changed: []string{p.key},
		Edit:    &Edit{Path: p.key, Old: cur.data, New: []byte(content), Existed: cur.existed},
	}
}

// existing is a file about to be written: its content and mode, or the mode a new file gets.
type existing struct {
	data    []byte
	existed bool
	mode    fs.FileMode
}

// current reads what is at p before a write; a directory there is a problem.
func current(p *place, given string) (existing, string) {
	if p.rel == "." {
		return existing{}, given + " is a directory"
	}
	fi, err := p.root.Stat(p.rel)
	if errors.Is(err, fs.ErrNotExist) {
		return existing{mode: newFileMode}, ""
	}
	if err != nil {
		return existing{}, pathProblem(given, err)
	}
	if fi.IsDir() {
		return existing{}, given + " is a directory"
	}
	if !fi.Mode().IsRegular() {
		return existing{}, given + " is not a regular file"
	}
	f, err := p.root.Open(p.rel)
	if err != nil {
		return existing{}, pathProblem(given, err)
	}
	defer f.Close()
	// Read through a link, the old content would reach the model (edit_file's answers) and the
	// restore points: another name may be a file outside the workspace.
	if n := linksOf(f); n > 1 {
		return existing{}, linkRefusal(given, n)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return existing{}, pathProblem(given, err)
	}
	mode := fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	return existing{data: data, existed: true, mode: mode}, ""
}

// guard asks Env.Guard whether p may be written; a refusal is the result to return.
func (e *Env) guard(p *place) (Result, bool) {
	if e.Guard == nil {
		return Result{}, false
	}
	if err := e.Guard(p.key); err != nil {
		r := failure(err.Error())
		r.Refused, r.Path = true, p.key
		return r, true
	}
	return Result{}, false
}
