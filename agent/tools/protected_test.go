package tools

import (
	"context"
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
