package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHardLinkedFiles: a file of the workspace that is also a file outside it under another name
// is neither read, searched, edited nor overwritten; the same content as a file of its own is.
func TestHardLinkedFiles(t *testing.T) {
	out := t.TempDir() // the same file system as the workspace: hard links cannot cross
	secret := filepath.Join(out, "credentials")
	if err := os.WriteFile(secret, []byte("token = s3cr3t-hard-link\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ws := workspace(t, map[string]string{"plain.txt": "token = visible\n", "dir/keep.txt": "keep\n"})
	if err := os.Link(secret, filepath.Join(ws, "notes.txt")); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	if err := os.Link(secret, filepath.Join(ws, "dir", "also.txt")); err != nil {
		t.Fatal(err)
	}
	env := &Env{Workspace: ws}
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"read_file", map[string]any{"path": "notes.txt"}, "refused: notes.txt has 3 names (hard links)"},
		{"read_file", map[string]any{"path": "dir/also.txt", "offset": 1}, "refused: dir/also.txt has 3 names"},
		{"edit_file", map[string]any{"path": "notes.txt", "old": "token", "new": "x"}, "refused: notes.txt has 3 names"},
		{"write_file", map[string]any{"path": "notes.txt", "content": "x"}, "refused: notes.txt has 3 names"},
		{"search", map[string]any{"pattern": "token"}, "2 files with more than one name (hard links) not searched"},
		{"search", map[string]any{"pattern": "s3cr3t", "path": "dir"}, "1 file with more than one name"},
	} {
		r := Run(t.Context(), env, Call{Name: c.tool, Args: c.args})
		if !strings.Contains(r.Output, c.want) || strings.Contains(r.Output, "s3cr3t-hard-link") {
			t.Errorf("%s %v: %q, want %q and no secret", c.tool, c.args, r.Output, c.want)
		}
	}
	if r := Run(t.Context(), env, Call{Name: "search", Args: map[string]any{"pattern": "token"}}); !strings.Contains(r.Output, "plain.txt:1: token = visible") {
		t.Errorf("the plain file was not searched: %q", r.Output)
	}
	if got, _ := os.ReadFile(secret); string(got) != "token = s3cr3t-hard-link\n" {
		t.Errorf("the file outside changed: %q", got)
	}
	// Its one name left, the file is the workspace's again.
	for _, name := range []string{"dir/also.txt", "notes.txt"} {
		if err := os.Remove(filepath.Join(ws, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Link(filepath.Join(ws, "plain.txt"), filepath.Join(ws, "plain2.txt")); err != nil {
		t.Fatal(err)
	}
	if r := Run(t.Context(), env, Call{Name: "read_file", Args: map[string]any{"path": "dir/keep.txt"}}); r.Output != "keep\n" {
		t.Errorf("an ordinary file: %q", r.Output)
	}
	// Two names, both in the workspace: still refused, as the tools cannot know.
	if r := Run(t.Context(), env, Call{Name: "read_file", Args: map[string]any{"path": "plain2.txt"}}); !strings.Contains(r.Output, "has 2 names") {
		t.Errorf("a file linked within the workspace: %q", r.Output)
	}
}
