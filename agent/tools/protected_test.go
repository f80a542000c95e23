package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// approverFunc answers with a function.
type approverFunc func(ctx context.Context, req ApprovalRequest) (Decision, error)

func (f approverFunc) Approve(ctx context.Context, req ApprovalRequest) (Decision, error) {
	return f(ctx, req)
}

func TestProtectedWrites(t *testing.T) {
	files := map[string]string{".vscode/settings.json": "{}", "a.txt": "x"}
	t.Run("nobody to ask", func(t *testing.T) {
		ws := workspace(t, files)
		r := Run(t.Context(), &Env{Workspace: ws}, Call{Name: "write_file", Args: map[string]any{"path": ".envrc", "content": "x"}})
		if !r.Refused || !strings.Contains(r.Output, "nobody can be asked") {
			t.Errorf("result %+v, want a refusal", r)
		}
		if _, err := os.Stat(filepath.Join(ws, ".envrc")); err == nil {
			t.Error(".envrc was written")
		}
	})
	t.Run("names folded as the file system may", func(t *testing.T) {
		ws := workspace(t, files)
		var asked []string
		env := &Env{Workspace: ws, Approver: approverFunc(func(_ context.Context, req ApprovalRequest) (Decision, error) {
			asked = append(asked, req.File)
			return Reject, nil
		})}
		for _, p := range []string{".VSCode/tasks.json", ".vs\u200ccode/tasks.json", "LEFTHOOK.yml"} {
			Run(t.Context(), env, Call{Name: "write_file", Args: map[string]any{"path": p, "content": "x"}})
		}
		if len(asked) != 3 {
			t.Errorf("asked about %q, want the three", asked)
		}
	})
	t.Run("changed while asked", func(t *testing.T) {
		ws := workspace(t, files)
		settings := filepath.Join(ws, ".vscode", "settings.json")
		env := &Env{Workspace: ws, Approver: approverFunc(func(context.Context, ApprovalRequest) (Decision, error) {
			if err := os.WriteFile(settings, []byte(`{"user": 1}`), 0o644); err != nil {
				t.Error(err)
			}
			return AllowOnce, nil
		})}
		r := Run(t.Context(), env, Call{Name: "edit_file", Args: map[string]any{"path": ".vscode/settings.json", "old": "{", "new": "{\"x\": 1, "}})
		if !r.IsError || !strings.Contains(r.Output, "changed while the user was asked") {
			t.Errorf("result %+v, want the change noticed", r)
		}
		if got := readText(t, settings); got != `{"user": 1}` {
			t.Errorf("the user's change was overwritten: %q", got)
		}
	})
	t.Run("cancelled while asked", func(t *testing.T) {
		ws := workspace(t, files)
		ctx, cancel := context.WithCancel(t.Context())
		env := &Env{Workspace: ws, Approver: approverFunc(func(ctx context.Context, _ ApprovalRequest) (Decision, error) {
			cancel()
			return Reject, ctx.Err()
		})}
		r := Run(ctx, env, Call{Name: "write_file", Args: map[string]any{"path": ".envrc", "content": "x"}})
		if r.Output != "cancelled" {
			t.Errorf("result %+v, want cancelled", r)
		}
	})
}

// BenchmarkWriteFile measures a write_file of an ordinary file five levels down in a repository
// whose configuration includes another file: what the protected-path check (git's configuration
// read, each parent looked at for a .git) adds to every write.
func BenchmarkWriteFile(b *testing.B) {
	ws := b.TempDir()
	for rel, body := range map[string]string{
		".git/config":      "[core]\n\thooksPath = .husky/_\n[include]\n\tpath = ../shared.gitconfig\n",
		"shared.gitconfig": "[user]\n\tname = x\n",
	} {
		p := filepath.Join(ws, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	env := &Env{Workspace: ws}
	call := Call{Name: "write_file", Args: map[string]any{"path": "a/b/c/d/e.go", "content": "package d\n"}}
	for i := 0; b.Loop(); i++ {
		call.Args["content"] = fmt.Sprintf("package d // %d\n", i)
		if r := Run(b.Context(), env, call); r.IsError {
			b.Fatal(r.Output)
		}
	}
}

// BenchmarkProtection measures the protected-path check alone, on the same repository.
func BenchmarkProtection(b *testing.B) {
	ws := b.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, ".git"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".git", "config"), []byte("[core]\n\thooksPath = .husky/_\n[include]\n\tpath = ../shared.gitconfig\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	env := &Env{Workspace: ws}
	p, problem := env.locate("a/b/c/d/e.go", false)
	if problem != "" {
		b.Fatal(problem)
	}
	defer p.close()
	for b.Loop() {
		if why := env.protection(p); why != "" {
			b.Fatal(why)
		}
	}
}
