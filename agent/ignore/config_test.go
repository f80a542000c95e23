package ignore

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

// writeFiles writes files (slash paths under dir) with their content.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestUserAndRepoFiles places the user's config and excludes files, and the repository's
// info/exclude and config, in a fake home; each verdict must be the one wanted and git's.
func TestUserAndRepoFiles(t *testing.T) {
	tests := []struct {
		name   string
		noXDG  bool              // XDG_CONFIG_HOME unset
		global string            // GIT_CONFIG_GLOBAL, relative to home
		home   map[string]string // files under the fake home; "xdg/" is XDG_CONFIG_HOME
		repo   map[string]string // files in the repository
		want   map[string]string // path → deciding rule, as "source:line:pattern" with ~ for home
	}{
		{
			name: "XDG default excludes file",
			home: map[string]string{"xdg/git/ignore": "*.log\n"},
			want: map[string]string{"a.log": "~/xdg/git/ignore:1:*.log", "a.txt": ""},
		},
		{
			name:  "~/.config/git/ignore without XDG_CONFIG_HOME",
			noXDG: true,
			home:  map[string]string{".config/git/ignore": "\n*.log\n", "xdg/git/ignore": "*.txt\n"},
			want:  map[string]string{"a.log": "~/.config/git/ignore:2:*.log", "a.txt": ""},
		},
		{
			name: "core.excludesFile in ~/.gitconfig, with ~",
			home: map[string]string{
				".gitconfig":     "[user]\n\tname = x\n[core]\n\texcludesFile = ~/my ignore\n",
				"my ignore":      "*.log\n",
				"xdg/git/ignore": "*.txt\n",
			},
			want: map[string]string{"a.log": "~/my ignore:1:*.log", "a.txt": ""},
		},
		{
			name: "~/.gitconfig wins over the XDG config",
			home: map[string]string{
				"xdg/git/config": "[core]\nexcludesfile = ~/one\n",
				".gitconfig":     "[Core]\n\tExcludesFile = \"~/two\" ; a comment\n",
				"one":            "*.log\n",
				"two":            "*.txt\n",
			},
			want: map[string]string{"a.log": "", "a.txt": "~/two:1:*.txt"},
		},
		{
			name: "XDG config alone",
			home: map[string]string{"xdg/git/config": "[core] excludesFile = ~/one\n", "one": "*.log\n"},
			want: map[string]string{"a.log": "~/one:1:*.log"},
		},
		{
			name: "subsections and other keys are not core.excludesFile",
			home: map[string]string{
				".gitconfig": "[core \"x\"]\nexcludesFile = ~/one\n[core.y]\nexcludesFile = ~/one\n[other]\nexcludesFile = ~/one\n",
				"one":        "*.log\n",
			},
			want: map[string]string{"a.log": ""},
		},
		{
			name:   "GIT_CONFIG_GLOBAL replaces both",
			global: "custom",
			home: map[string]string{
				"custom":     "[core]\nexcludesFile = ~/one\n",
				".gitconfig": "[core]\nexcludesFile = ~/two\n",
				"one":        "*.log\n",
				"two":        "*.txt\n",
			},
			want: map[string]string{"a.log": "~/one:1:*.log", "a.txt": ""},
		},
		{
			name: "the repository's config wins",
			home: map[string]string{".gitconfig": "[core]\nexcludesFile = ~/one\n", "one": "*.log\n", "two": "*.txt\n"},
			repo: map[string]string{".git/config": "[core]\n\texcludesFile = ~/two\n"},
			want: map[string]string{"a.log": "", "a.txt": "~/two:1:*.txt"},
		},
		{
			name: "info/exclude beats the user's file, .gitignore beats both",
			home: map[string]string{"xdg/git/ignore": "a\nb\nc\n"},
			repo: map[string]string{".git/info/exclude": "!b\nc\nd\n", ".gitignore": "!c\n"},
			want: map[string]string{
				"a": "~/xdg/git/ignore:1:a", "b": ".git/info/exclude:1:!b", "c": ".gitignore:1:!c",
				"d": ".git/info/exclude:3:d", "e/d": ".git/info/exclude:3:d",
			},
		},
		{
			name: "the user's patterns anchor at the repository root",
			home: map[string]string{"xdg/git/ignore": "/top\nx/y\n"},
			want: map[string]string{"top": "~/xdg/git/ignore:1:/top", "d/top": "", "x/y": "~/xdg/git/ignore:2:x/y", "d/x/y": ""},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			home := filepath.Join(base, "home")
			root := filepath.Join(base, "repo")
			vars := map[string]string{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, "xdg")}
			if tt.noXDG {
				delete(vars, "XDG_CONFIG_HOME")
			}
			if tt.global != "" {
				vars["GIT_CONFIG_GLOBAL"] = filepath.Join(home, tt.global)
			}
			writeFiles(t, home, tt.home)
			writeFiles(t, root, map[string]string{".git/HEAD": "ref: refs/heads/main\n"})
			writeFiles(t, root, tt.repo)
			var paths []string
			for p := range tt.want {
				paths = append(paths, p)
				writeFiles(t, root, map[string]string{p: ""})
			}
			m := New(os.DirFS(root), Options{Case: CaseSensitive, Getenv: func(k string) string { return vars[k] }})
			got := map[string]string{}
			for _, p := range paths {
				got[p] = ""
				if r, ok := m.Explain(p, false); ok {
					got[p] = strings.ReplaceAll(r.Source, home, "~") + ":" + strconv.Itoa(r.Line) + ":" + r.Pattern
				}
			}
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("rules (-got +want):\n%s", diff)
			}

			if _, err := exec.LookPath("git"); err != nil {
				return
			}
			env := fakeEnv{home: home, xdg: vars["XDG_CONFIG_HOME"]}
			cmd := exec.Command("git", "init", "-q", "--template=")
			cmd.Dir = root
			cmd.Env = env.gitEnv()
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git init: %v\n%s", err, out)
			}
			writeFiles(t, root, tt.repo) // git init rewrote the config
			if tt.global != "" {
				env.extra = []string{"GIT_CONFIG_GLOBAL=" + vars["GIT_CONFIG_GLOBAL"]}
			}
			gitGot := gitVerdicts(t, root, env, false, paths)
			for p, v := range gitGot {
				gitGot[p] = strings.ReplaceAll(v, home, "~")
			}
			if diff := cmp.Diff(gitGot, tt.want); diff != "" {
				t.Errorf("git check-ignore (-git +want):\n%s", diff)
			}
		})
	}
}

// TestLinkedWorktree finds info/exclude and core.ignoreCase through a linked worktree's .git
// file, in the main repository outside the matcher's tree.
func TestLinkedWorktree(t *testing.T) {
	needGit(t)
	base := t.TempDir()
	env := newFakeEnv(base)
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		cmd.Dir = dir
		cmd.Env = env.gitEnv()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	main, wt := filepath.Join(base, "main"), filepath.Join(base, "wt")
	if err := os.Mkdir(main, 0o755); err != nil {
		t.Fatal(err)
	}
	git(main, "init", "-q")
	git(main, "commit", "-q", "--allow-empty", "-m", "x")
	git(main, "worktree", "add", "-q", wt)
	git(main, "config", "core.ignorecase", "true")
	writeFiles(t, main, map[string]string{".git/info/exclude": "*.log\n"})
	writeFiles(t, wt, map[string]string{"a.log": "", "B.LOG": "", "a.txt": ""})

	m := New(os.DirFS(wt), Options{Getenv: env.getenv})
	got := map[string]bool{}
	for _, p := range []string{"a.log", "B.LOG", "a.txt"} {
		got[p] = m.Ignored(p, false)
	}
	want := map[string]bool{"a.log": true, "B.LOG": true, "a.txt": false}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("ignored (-got +want):\n%s", diff)
	}
	r, _ := m.Explain("a.log", false)
	if wantSrc := filepath.Join(main, ".git", "info", "exclude"); r.Source != wantSrc {
		t.Errorf("source %q, want %q", r.Source, wantSrc)
	}
}

func TestConfigValues(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want map[string]string
	}{
		{"plain", "[core]\n\texcludesFile = /x\n", map[string]string{"core.excludesfile": "/x"}},
		{"case of names", "[CORE]\nExcludesFILE=/x", map[string]string{"core.excludesfile": "/x"}},
		{"key on the header line", "[core] ignorecase = true", map[string]string{"core.ignorecase": "true"}},
		{"lone key is true", "[core]\nignorecase\n", map[string]string{"core.ignorecase": "true"}},
		{"lone key before a comment", "[core]\nignorecase # yes\n", map[string]string{"core.ignorecase": "true"}},
		{"comments", "# c\n; c\n[core] ; c\nx = a # c\ny = b;c\n", map[string]string{"core.x": "a", "core.y": "b"}},
		{"quotes keep spaces and comment signs", "[core]\nx = \" a # b \"  \n", map[string]string{"core.x": " a # b "}},
		{"inner spaces kept, outer dropped", "[core]\nx =   a  b   \n", map[string]string{"core.x": "a  b"}},
		{"escapes", "[core]\nx = a\\tb\\\\c\\\"d\\n\n", map[string]string{"core.x": "a\tb\\c\"d\n"}},
		{"continuation", "[core]\nx = a\\\nb\n", map[string]string{"core.x": "ab"}},
		{"CRLF", "[core]\r\nx = a\r\n", map[string]string{"core.x": "a"}},
		{"last wins", "[core]\nx = a\n[core]\nx = b\n", map[string]string{"core.x": "b"}},
		{"subsection skipped", "[core \"a]\\\"b\"]\nx = a\n[core]\ny = b\n", map[string]string{"core.y": "b"}},
		{"bad escape ends reading", "[core]\nx = a\ny = \\q\nz = c\n", map[string]string{"core.x": "a"}},
		{"open quote ends reading", "[core]\nx = \"a\ny = b\n", map[string]string{}},
		{"no section", "x = a\n", map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(configValues([]byte(tt.in)), tt.want); diff != "" {
				t.Errorf("(-got +want):\n%s", diff)
			}
		})
	}
}

func TestParseBool(t *testing.T) {
	for in, want := range map[string]bool{"true": true, "Yes": true, "on": true, "1": true, "-2": true,
		"false": false, "no": false, "OFF": false, "": false, "0": false} {
		if got, ok := parseBool(in); !ok || got != want {
			t.Errorf("parseBool(%q) = %v, %v; want %v, true", in, got, ok, want)
		}
	}
	if _, ok := parseBool("maybe"); ok {
		t.Error(`parseBool("maybe") accepted`)
	}
}

// TestCaseDefault follows core.ignoreCase, and the OS's usual value outside a repository.
func TestCaseDefault(t *testing.T) {
	fsys := func(files map[string]string) fstest.MapFS {
		m := fstest.MapFS{}
		for name, content := range files {
			m[name] = &fstest.MapFile{Data: []byte(content)}
		}
		return m
	}
	osFolds := runtime.GOOS == "windows" || runtime.GOOS == "darwin"
	tests := []struct {
		name  string
		files map[string]string
		want  bool
	}{
		{"repository with ignorecase", map[string]string{".git/config": "[core]\nignorecase = true\n"}, true},
		{"repository without", map[string]string{".git/config": "[core]\nbare = false\n"}, false},
		{"no repository", map[string]string{"x": ""}, osFolds},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New(fsys(tt.files), Options{Getenv: noUserFiles})
			if m.fold != tt.want {
				t.Errorf("fold = %v, want %v", m.fold, tt.want)
			}
		})
	}
}
