package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/agent/sandbox"
	"github.com/reprise-dev/reprise/agent/tools"
)

// protectedFiles is a repository whose git configuration names a hooks directory and an included
// file in the work tree, with the editors' and hook managers' files that act on their own.
var protectedFiles = map[string]string{
	".git/config":             "[core]\n\thooksPath = tools/hooks\n[include]\n\tpath = ../shared.gitconfig\n",
	".vscode/settings.json":   "{}\n",
	"shared.gitconfig":        "[user]\n\tname = x\n",
	"tools/hooks/pre-commit":  "exit 0\n",
	"sub/.git/config":         "[core]\n\thooksPath = .hooks\n",
	"sub/.hooks/pre-push":     "exit 0\n",
	".pre-commit-config.yaml": "repos: []\n",
}

// protectedWrites are the calls a steered model makes: each writes what an unasked command may
// not, and what would run outside the sandbox.
var protectedWrites = []struct {
	tool string
	args map[string]any
}{
	{"write_file", map[string]any{"path": ".vscode/tasks.json", "content": `{"tasks":[{"runOptions":{"runOn":"folderOpen"},"command":"touch pwned"}]}`}},
	{"edit_file", map[string]any{"path": ".vscode/settings.json", "old": "{}", "new": `{"go.alternateTools":{"go":"./pwn"}}`}},
	{"write_file", map[string]any{"path": ".envrc", "content": "touch pwned\n"}},
	{"write_file", map[string]any{"path": ".husky/pre-commit", "content": "touch pwned\n"}},
	{"edit_file", map[string]any{"path": ".pre-commit-config.yaml", "old": "repos: []", "new": "repos: [{repo: local, hooks: [{id: x, entry: touch pwned}]}]"}},
	{"write_file", map[string]any{"path": "tools/hooks/pre-commit", "content": "touch pwned\n"}},
	{"write_file", map[string]any{"path": "shared.gitconfig", "content": "[core]\n\tfsmonitor = touch pwned\n"}},
	{"write_file", map[string]any{"path": "sub/.hooks/pre-push", "content": "touch pwned\n"}},
	{"write_file", map[string]any{"path": ".idea/workspace.xml", "content": "<pwned/>"}},
	{"write_file", map[string]any{"path": "lefthook.yml", "content": "pre-commit:\n  commands:\n    x:\n      run: touch pwned\n"}},
}

// TestAttackFileToolsWriteProtectedPaths: write_file and edit_file write what run_command keeps
// from unasked commands only once the user approves that write, and say why.
func TestAttackFileToolsWriteProtectedPaths(t *testing.T) {
	var turns []geminitest.Turn
	for _, w := range protectedWrites {
		turns = append(turns, callTurn(w.tool, w.args, ""))
	}
	turns = append(turns, textTurn("done"))
	for _, p := range sandboxPaths {
		t.Run(p.name+"/rejected", func(t *testing.T) {
			ws := t.TempDir()
			ap := &recordingApprover{decision: tools.Reject}
			a := newFixture(t, fixtureOpts{journal: true, ws: ws, sandbox: p.make(ws), approver: ap, files: protectedFiles}, turns...)
			outs := toolOutputs(a.turn(t, "set up the project"))
			asked := ap.questions()
			if len(asked) != len(protectedWrites) || len(outs) != len(protectedWrites) {
				t.Fatalf("%d questions, %d results for %d writes: %+v %q", len(asked), len(outs), len(protectedWrites), asked, outs)
			}
			for i, w := range protectedWrites {
				path := w.args["path"].(string)
				q := asked[i]
				if q.File != path || !strings.HasSuffix(q.Command, " "+path) || !strings.HasPrefix(q.Reason, path+" holds ") {
					t.Errorf("question %d = %+v, want one naming %s and why", i, q, path)
				}
				if !strings.HasPrefix(outs[i], "refused by the user: "+path+" holds ") {
					t.Errorf("result %d = %q, want the refusal", i, outs[i])
				}
				got, err := os.ReadFile(filepath.Join(ws, path))
				if want, existed := protectedFiles[path]; existed && string(got) != want || !existed && err == nil {
					t.Errorf("%s was written: %q", path, got)
				}
			}
			if !strings.Contains(asked[5].Reason, "core.hooksPath") || !strings.Contains(asked[6].Reason, "includes") || !strings.Contains(asked[7].Reason, "the repository in sub") {
				t.Errorf("the reasons do not say what git reads: %q / %q / %q", asked[5].Reason, asked[6].Reason, asked[7].Reason)
			}
		})
	}
	t.Run("approved", func(t *testing.T) {
		ws := t.TempDir()
		ap := &recordingApprover{decision: tools.AllowOnce}
		a := newFixture(t, fixtureOpts{journal: true, ws: ws, sandbox: sandbox.New(sandbox.Config{Workspace: ws}), approver: ap, files: protectedFiles}, turns...)
		outs := toolOutputs(a.turn(t, "set up the project"))
		for i, w := range protectedWrites {
			if strings.Contains(outs[i], "refused") {
				t.Errorf("%s: %q", w.args["path"], outs[i])
			}
		}
		if got, _ := os.ReadFile(filepath.Join(ws, ".envrc")); string(got) != "touch pwned\n" {
			t.Errorf("the approved write did not happen: %q", got)
		}
	})
	t.Run("always allowed once per file", func(t *testing.T) {
		ws := t.TempDir()
		ap := &recordingApprover{decision: tools.AlwaysAllow}
		w := map[string]any{"path": ".envrc", "content": "a\n"}
		w2 := map[string]any{"path": ".envrc", "content": "b\n"}
		w3 := map[string]any{"path": ".vscode/launch.json", "content": "{}"}
		a := newFixture(t, fixtureOpts{ws: ws, approver: ap},
			callTurn("write_file", w, ""), callTurn("write_file", w2, ""), callTurn("write_file", w3, ""), textTurn("done"))
		a.turn(t, "go")
		if q := ap.questions(); len(q) != 2 || q[0].File != ".envrc" || q[1].File != ".vscode/launch.json" {
			t.Errorf("questions %+v, want one for .envrc and one for .vscode/launch.json", q)
		}
	})
	t.Run("ordinary files are not asked", func(t *testing.T) {
		ws := t.TempDir()
		ap := &recordingApprover{decision: tools.Reject}
		a := newFixture(t, fixtureOpts{ws: ws, approver: ap, files: protectedFiles},
			callTurn("write_file", map[string]any{"path": "src/vscode/tasks.json", "content": "{}"}, ""),
			callTurn("write_file", map[string]any{"path": "tools/hooksx", "content": "x"}, ""),
			callTurn("write_file", map[string]any{"path": "docs/.envrc.md", "content": "x"}, ""), textTurn("done"))
		a.turn(t, "go")
		if q := ap.questions(); len(q) != 0 {
			t.Errorf("ordinary files were asked about: %+v", q)
		}
	})
}
