package tools

import (
	"context"
	"fmt"
	"strings"

	"google.golang.org/genai"
)

var editFileTool = tool{
	decl: func() *genai.FunctionDeclaration {
		return &genai.FunctionDeclaration{
			Description: "Replace the one exact occurrence of old with new in a file.",
			ParametersJsonSchema: object(map[string]any{
				"path": prop("string", "Relative to the workspace."),
				"old":  prop("string", "Exact text, unique in the file; include nearby lines."),
				"new":  prop("string", "Replacement text."),
			}, "path", "old", "new"),
		}
	},
	run: runEditFile,
	describe: func(a *args) string {
		p, _ := a.str("path", false)
		return "Edit " + p
	},
	kind: KindEdit,
}

// runEditFile works on the file on disk, not on an editor's buffer: a file with unsaved changes
// is what Env.Guard is for. An exact, unique match keeps an edit from landing in the wrong place;
// the only leniency is line endings, since models write \n into files that use \r\n.
func runEditFile(ctx context.Context, env *Env, call Call, a *args) Result {
	given, _ := a.str("path", true)
	old, _ := a.str("old", true)
	repl, _ := a.str("new", true)
	if a.problem != "" {
		return failure(a.problem)
	}
	if old == "" {
		return failure("old is empty; to create or overwrite a file use write_file")
	}
	if old == repl {
		return failure("old and new are the same; nothing to change")
	}
	p, problem := env.locate(given, false)
	if problem != "" {
		return failure(problem)
	}
	defer p.close()
	if r, refused := vcsRefusal(p, given); refused {
		return r
	}
	// The user's unsaved buffer wins over any match: the model may have read that buffer, so a
	// match (or a miss) against the disk would be against the wrong text.
	if r, refused := env.guard(p); refused {
		return r
	}
	cur, problem := current(p, given)
	if problem != "" {
		return failure(problem)
	}
	if !cur.existed {
		return failure("file not found: " + given)
	}
	content := string(cur.data)
	n := strings.Count(content, old)
	if n == 0 && strings.Contains(content, "\r\n") && !strings.Contains(old, "\r") {
		crlf := strings.ReplaceAll(old, "\n", "\r\n")
		if n = strings.Count(content, crlf); n > 0 {
			old, repl = crlf, strings.ReplaceAll(repl, "\n", "\r\n")
		}
	}
	switch {
	case n == 0:
		return failure("old not found in " + given)
	case n > 1:
		return failure(fmt.Sprintf("old found %d times in %s; add surrounding lines to make it unique", n, given))
	}
	if r, ok := env.askWrite(ctx, call, p, given, "edit", cur); !ok {
		return r
	}
	if env.BeforeChange != nil {
		env.BeforeChange(p.key, cur.data, true)
	}
	i := strings.Index(content, old)
	updated := content[:i] + repl + content[i+len(old):]
	if err := WriteAtomic(p.root, p.rel, []byte(updated), cur.mode, env.Temps); err != nil {
		return failure(fmt.Sprintf("cannot write %s: %v", given, unwrapPath(err)))
	}
	return Result{
		Output:  fmt.Sprintf("edited %s at line %d", given, strings.Count(content[:i], "\n")+1),
		Path:    p.key,
		Changed: []string{p.key},
		Edit:    &Edit{Path: p.key, Old: cur.data, New: []byte(updated), Existed: true},
	}
}
