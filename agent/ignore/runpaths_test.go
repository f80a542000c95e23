package ignore

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestGitRunPaths compares what GitRunPaths finds with what git itself reads: the files
// `git config --list --show-origin --includes` names, and the values of core.hooksPath it gives.
func TestGitRunPaths(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	tests := []struct {
		name  string
		files map[string]string // relative to the work tree; "~/" to the home
		hooks []string          // relative to the work tree
		incl  []string
		// gitFails: git refuses the configuration (an include cycle), so it runs no hook either
		gitFails bool
	}{
		{"husky", map[string]string{".git/config": "[core]\n\thooksPath = .husky/_\n"}, []string{".husky/_"}, nil, false},
		{"include in the work tree", map[string]string{
			".git/config": "[include]\n\tpath = ../.gitconfig\n",
			".gitconfig":  "[core]\n\thooksPath = tools/hooks\n",
		}, []string{"tools/hooks"}, []string{".gitconfig"}, false},
		{"includeIf and a nested include", map[string]string{
			".git/config":  "[includeIf \"gitdir:/\"]\n\tpath = ../conf/a\n",
			"conf/a":       "[include]\n\tpath = b\n",
			"conf/b":       "[core]\n\thooksPath = hooks-b\n",
			"~/.gitconfig": "[core]\n\thooksPath = .githooks\n",
		}, []string{".githooks", "hooks-b"}, []string{"conf/a", "conf/b"}, false},
		{"a cycle ends", map[string]string{
			".git/config": "[include]\n\tpath = ../x\n",
			"x":           "[include]\n\tpath = y\n",
			"y":           "[include]\n\tpath = x\n[core]\n\thooksPath = h\n",
		}, []string{"h"}, []string{"x", "y"}, true},
		{"none", map[string]string{".git/config": "[core]\n\tbare = false\n"}, nil, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, home := t.TempDir(), t.TempDir()
			if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
				t.Fatalf("git init: %v %s", err, out)
			}
			for name, body := range tt.files {
				p := filepath.Join(ws, name)
				if rest, ok := strings.CutPrefix(name, "~/"); ok {
					p = filepath.Join(home, rest)
				}
				if name == ".git/config" {
					base, _ := os.ReadFile(p)
					body = string(base) + body
				}
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			env := map[string]string{"HOME": home, "GIT_CONFIG_NOSYSTEM": "1"}
			got := GitRunPaths(ws, func(k string) string { return env[k] })
			abs := func(rels []string) []string {
				var out []string
				for _, r := range rels {
					out = append(out, filepath.Join(ws, r))
				}
				return out
			}
			want := RunPaths{Hooks: abs(tt.hooks), Includes: abs(tt.incl)}
			if diff := cmp.Diff(got, want); diff != "" {
				t.Errorf("GitRunPaths (-got +want):\n%s", diff)
			}

			// git reads every included file that GitRunPaths names, and no other.
			cmd := exec.Command("git", "-C", ws, "config", "--list", "--show-origin", "--includes")
			cmd.Env = []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1", "PATH=" + os.Getenv("PATH")}
			out, err := cmd.Output()
			if tt.gitFails {
				if err == nil {
					t.Errorf("git read the configuration: %s", out)
				}
				return
			}
			if err != nil {
				t.Fatalf("git config: %v", err)
			}
			var origins []string
			for line := range strings.Lines(string(out)) {
				file, _, _ := strings.Cut(strings.TrimPrefix(line, "file:"), "\t")
				p := filepath.Clean(filepath.Join(ws, file))
				if filepath.IsAbs(file) {
					p = filepath.Clean(file)
				}
				if !slices.Contains(origins, p) && !strings.Contains(p, ".git"+string(filepath.Separator)) && p != filepath.Join(home, ".gitconfig") {
					origins = append(origins, p)
				}
			}
			for _, o := range origins {
				if !slices.Contains(got.Includes, o) {
					t.Errorf("git reads %s, which GitRunPaths does not name", o)
				}
			}
			hooks := exec.Command("git", "-C", ws, "config", "--get-all", "--includes", "core.hooksPath")
			hooks.Env = cmd.Env
			hout, _ := hooks.Output()
			for h := range strings.FieldsSeq(string(hout)) {
				if !slices.Contains(got.Hooks, filepath.Join(ws, h)) {
					t.Errorf("git's core.hooksPath %s is not in %v", h, got.Hooks)
				}
			}
		})
	}
}

func TestConfigEntriesSubsections(t *testing.T) {
	var got []string
	configEntries([]byte("[includeIf \"gitdir:~/w/\"]\npath = a\n[include]\npath = b\n[x.y]\nk = c\n"), func(section string, sub bool, key, val string) {
		got = append(got, section+"|"+key+"|"+val+"|"+map[bool]string{true: "sub", false: ""}[sub])
	})
	want := []string{"includeif|path|a|sub", "include|path|b|", "x|k|c|sub"}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
}
