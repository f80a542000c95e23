package tools

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestVCSMetadataRefused(t *testing.T) {
	ws := workspace(t, map[string]string{
		".git/config":      "[core]\n",
		".git/hooks/x":     "",
		"sub/.hg/hgrc":     "",
		"src/a.go":         "package a\n",
		"notes/.gitignore": "x\n",
	})
	if err := os.Symlink(".git", filepath.Join(ws, "meta")); err != nil {
		t.Fatal(err)
	}
	refused := func(given, key string) outcome {
		return outcome{Output: "refused: " + given + " is version-control metadata", IsError: true, Path: key, Refused: true}
	}
	tests := []struct {
		tool string
		args map[string]any
		want outcome
	}{
		{"write_file", map[string]any{"path": ".git/config", "content": "[core]\n\tfsmonitor = touch pwned\n"}, refused(".git/config", ".git/config")},
		{"write_file", map[string]any{"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\n"}, refused(".git/hooks/pre-commit", ".git/hooks/pre-commit")},
		{"write_file", map[string]any{"path": "src/../.git/config", "content": "x"}, refused("src/../.git/config", ".git/config")},
		{"write_file", map[string]any{"path": ".GIT/config", "content": "x"}, refused(".GIT/config", ".GIT/config")},
		{"write_file", map[string]any{"path": ".g\u200cit/config", "content": "x"}, refused(".g\u200cit/config", ".g\u200cit/config")},
		{"write_file", map[string]any{"path": "meta/config", "content": "x"}, refused("meta/config", ".git/config")},
		{"write_file", map[string]any{"path": "sub/.hg/hgrc", "content": "x"}, refused("sub/.hg/hgrc", "sub/.hg/hgrc")},
		{"write_file", map[string]any{"path": "new/.svn/entries", "content": "x"}, refused("new/.svn/entries", "new/.svn/entries")},
		{"write_file", map[string]any{"path": ".git", "content": "gitdir: /elsewhere\n"}, refused(".git", ".git")},
		{"edit_file", map[string]any{"path": ".git/config", "old": "[core]", "new": "[core]\n\tfsmonitor = touch pwned"}, refused(".git/config", ".git/config")},
		{"edit_file", map[string]any{"path": "meta/config", "old": "[core]", "new": "x"}, refused("meta/config", ".git/config")},
		// Look-alikes are ordinary files.
		{"write_file", map[string]any{"path": "notes/.gitignore", "content": "y\n"}, outcome{Output: "wrote notes/.gitignore (2 bytes)", Path: "notes/.gitignore", Changed: []string{"notes/.gitignore"}}},
		{"write_file", map[string]any{"path": "src/git/x.go", "content": "x"}, outcome{Output: "created src/git/x.go (1 bytes)", Path: "src/git/x.go", Changed: []string{"src/git/x.go"}}},
	}
	for _, tt := range tests {
		var rec recorder
		env := &Env{Workspace: ws, BeforeChange: rec.before}
		got := outcomeOf(Run(t.Context(), env, Call{Name: tt.tool, Args: tt.args}))
		if diff := cmp.Diff(got, tt.want); diff != "" {
			t.Errorf("%s %v (-got +want):\n%s", tt.tool, tt.args["path"], diff)
		}
		if tt.want.Refused && len(rec.changes) > 0 {
			t.Errorf("%s %v: BeforeChange was called for a refused write", tt.tool, tt.args["path"])
		}
	}
	if diff := cmp.Diff(readText(t, filepath.Join(ws, ".git/config")), "[core]\n"); diff != "" {
		t.Errorf(".git/config changed (-got +want):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(ws, ".git/hooks/pre-commit")); err == nil {
		t.Error("a hook was written")
	}
}
