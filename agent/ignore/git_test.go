package ignore

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// tree is a test scenario: a working tree and the rule files around it.
type tree struct {
	dirs  []string          // parents before children
	files []string          // empty files
	rules map[string]string // rule files by path in the tree, plus globalKey for the user's file
}

// globalKey names the user's excludes file in tree.rules; it lands in $XDG_CONFIG_HOME/git/ignore.
const globalKey = "~global"

// fakeEnv is a HOME and XDG_CONFIG_HOME under dir, for both git and the matcher.
type fakeEnv struct {
	home, xdg string
	extra     []string // more variables for git
}

func newFakeEnv(dir string) fakeEnv {
	return fakeEnv{home: filepath.Join(dir, "home"), xdg: filepath.Join(dir, "home", "xdg")}
}

func (e fakeEnv) getenv(key string) string {
	switch key {
	case "HOME":
		return e.home
	case "XDG_CONFIG_HOME":
		return e.xdg
	}
	return ""
}

// gitEnv is the process environment with git's own variables (set when tests run from a hook)
// replaced by the fake home and no system config.
func (e fakeEnv) gitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") && !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+e.home, "GIT_CONFIG_NOSYSTEM=1")
	if e.xdg != "" {
		env = append(env, "XDG_CONFIG_HOME="+e.xdg)
	}
	return append(env, e.extra...)
}

func needGit(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH: the comparison with git check-ignore needs it")
	}
}

// write lays tr out in a new repository under root (which must not exist yet) and returns the
// environment to run git and the matcher in.
func (tr tree) write(t testing.TB, root string) fakeEnv {
	t.Helper()
	env := newFakeEnv(filepath.Dir(root))
	for _, d := range []string{root, env.home, env.xdg} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// What git needs to see a repository, without git init's 40 ms a case.
	for _, d := range []string{".git/objects", ".git/refs"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, d := range tr.dirs {
		if err := os.MkdirAll(filepath.Join(root, filepath.FromSlash(d)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range tr.files {
		if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(f)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range tr.rules {
		p := filepath.Join(root, filepath.FromSlash(name))
		if name == globalKey {
			p = filepath.Join(env.xdg, "git", "ignore")
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return env
}

// paths lists every directory and file of the tree, rule files included.
func (tr tree) paths() []string {
	var ps []string
	ps = append(ps, tr.dirs...)
	ps = append(ps, tr.files...)
	for name := range tr.rules {
		if name != globalKey && !strings.HasPrefix(name, ".git/") {
			ps = append(ps, name)
		}
	}
	sort.Strings(ps)
	return slices.Compact(ps)
}

// gitVerdicts asks git check-ignore which rule decides each path: "source:line:pattern", or ""
// for none.
func gitVerdicts(t testing.TB, root string, env fakeEnv, fold bool, paths []string) map[string]string {
	t.Helper()
	got := map[string]string{}
	if len(paths) == 0 {
		return got // git takes an empty line for an empty pathspec
	}
	cmd := exec.Command("git", "-c", fmt.Sprintf("core.ignorecase=%v", fold),
		"check-ignore", "--no-index", "-v", "-n", "-z", "--stdin")
	cmd.Dir = root
	cmd.Env = env.gitEnv()
	cmd.Stdin = strings.NewReader(strings.Join(paths, "\x00") + "\x00")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil && stderr.Len() > 0 {
		t.Fatalf("git check-ignore: %v\n%s", err, stderr.String())
	}
	fields := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if len(fields)%4 != 0 {
		t.Fatalf("git check-ignore printed %q", out)
	}
	for i := 0; i < len(fields); i += 4 {
		v := ""
		if fields[i] != "" {
			v = fields[i] + ":" + fields[i+1] + ":" + fields[i+2]
		}
		got[fields[i+3]] = v
	}
	return got
}

// matcherVerdicts is gitVerdicts for the Matcher.
func matcherVerdicts(t testing.TB, root string, env fakeEnv, fold bool, paths []string) map[string]string {
	t.Helper()
	c := CaseSensitive
	if fold {
		c = CaseInsensitive
	}
	m := New(os.DirFS(root), Options{Case: c, Getenv: env.getenv})
	got := map[string]string{}
	for _, p := range paths {
		fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(p)))
		if err != nil {
			t.Fatal(err)
		}
		v := ""
		if r, ok := m.Explain(p, fi.IsDir()); ok {
			v = fmt.Sprintf("%s:%d:%s", r.Source, r.Line, r.Pattern)
		}
		got[p] = v
	}
	return got
}

// diffWithGit lays tr out in a fresh directory and returns the paths on which the matcher and
// git disagree, case-sensitive and not, as "path: matcher … git …" lines. stats, if not nil,
// counts git's verdicts.
func diffWithGit(t testing.TB, tr tree, stats map[string]int) []string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "repo")
	env := tr.write(t, root)
	paths := tr.paths()
	var diffs []string
	for _, fold := range []bool{false, true} {
		want := gitVerdicts(t, root, env, fold, paths)
		got := matcherVerdicts(t, root, env, fold, paths)
		for _, p := range paths {
			if got[p] != want[p] {
				diffs = append(diffs, fmt.Sprintf("ignorecase=%v %q: matcher %q, git %q", fold, p, got[p], want[p]))
			}
		}
		if stats == nil || fold {
			continue
		}
		for _, v := range want {
			switch {
			case v == "":
			case strings.Contains(v, ":!"):
				stats["negated"]++
			case strings.HasPrefix(v, ".git/"):
				stats["info"]++
			case strings.HasPrefix(v, "/"):
				stats["global"]++
			default:
				stats["ignored"]++
			}
			stats["all"]++
		}
	}
	return diffs
}

// shrink removes rule lines, rule files and tree entries from a failing scenario as long as it
// keeps failing, so that the report shows what matters.
func shrink(t testing.TB, tr tree, fails func(tree) bool) tree {
	t.Helper()
	for changed := true; changed; {
		changed = false
		for _, name := range sortedKeys(tr.rules) {
			lines := strings.Split(tr.rules[name], "\n")
			for i := 0; i < len(lines); i++ {
				c := tr.clone()
				c.rules[name] = strings.Join(slices.Delete(slices.Clone(lines), i, i+1), "\n")
				if c.rules[name] == tr.rules[name] {
					continue // "" has one empty line, which is no line
				}
				if fails(c) {
					tr, lines, changed = c, strings.Split(c.rules[name], "\n"), true
					i--
				}
			}
			if c := tr.clone(); true {
				delete(c.rules, name)
				if fails(c) {
					tr, changed = c, true
				}
			}
		}
		for i := 0; i < len(tr.files); i++ {
			c := tr.clone()
			c.files = slices.Delete(c.files, i, i+1)
			if fails(c) {
				tr, changed = c, true
				i--
			}
		}
		for i := len(tr.dirs) - 1; i >= 0; i-- {
			d := tr.dirs[i]
			if tr.holds(d) {
				continue
			}
			c := tr.clone()
			c.dirs = slices.Delete(c.dirs, i, i+1)
			if fails(c) {
				tr, changed = c, true
			}
		}
	}
	return tr
}

// holds reports whether anything of the tree lies inside dir.
func (tr tree) holds(dir string) bool {
	for _, p := range tr.paths() {
		if strings.HasPrefix(p, dir+"/") {
			return true
		}
	}
	return false
}

func (tr tree) clone() tree {
	c := tree{dirs: slices.Clone(tr.dirs), files: slices.Clone(tr.files), rules: map[string]string{}}
	for k, v := range tr.rules {
		c.rules[k] = v
	}
	return c
}

func (tr tree) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "dirs: %q\nfiles: %q\n", tr.dirs, tr.files)
	for _, name := range sortedKeys(tr.rules) {
		fmt.Fprintf(&b, "-- %s --\n%q\n", name, tr.rules[name])
	}
	return b.String()
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// names are what generated trees are made of: near-misses of each other, case variants,
// spaces, glob characters, non-ASCII and hidden names.
var names = []string{
	"a", "b", "c", "ab", "ba", "abc", "A", "B", "Ab", "x.txt", "y.log", "a.txt", "b.log", "A.TXT",
	"a b", "a ", "[a]", "*", "?", "a*b", "\\", "!a", "#a", ".a", ".hidden", "foo", "Foo", "bar",
	"build", "é", "日本", "a-b", "_", "1", "z9",
}

// segments are pieces of generated patterns: names, wildcards, classes, escapes and mistakes.
var segments = []string{
	"a", "b", "ab", "A", "foo", "Foo", "build", "x.txt", "a b", "é", "日本", "1",
	"*", "*", "**", "**", "?", "a*", "*a", "*b", "*.txt", "*.log", "*.TXT", "a*b", "?b", "a?", "??",
	"[ab]", "[!a]", "[^a]", "[a-c]", "[A-Z]", "[a-z]*", "[[:upper:]]", "[[:alpha:]]*", "[[:digit:]]",
	"[[:punct:]]", "[[:space:]]*", "[[:bogus:]]", "[]a]", "[!]]", "[a-]", "[-a]", "[\\]]", "[a",
	"\\*", "\\?", "\\[a]", "\\!a", "\\#a", "a\\ ", "\\a", "a**", "**a", "a**b", ".a", ".*",
	"[[:alpha:]", "[\\!a]", "[a-c-e]", "[!a-c]", "é*", "[é]", "??*",
}

// genPattern makes one line of an ignore file.
func genPattern(r *rand.Rand) string {
	var b strings.Builder
	switch r.IntN(20) {
	case 0:
		return "#" + segments[r.IntN(len(segments))]
	case 1:
		return ""
	}
	if r.IntN(5) == 0 {
		b.WriteString("!")
	}
	if r.IntN(4) == 0 {
		b.WriteString("/")
	}
	n := 1 + r.IntN(3)
	for i := range n {
		if i > 0 {
			b.WriteString("/")
		}
		b.WriteString(segments[r.IntN(len(segments))])
	}
	if r.IntN(4) == 0 {
		b.WriteString("/")
	}
	switch r.IntN(12) {
	case 0:
		b.WriteString("  ")
	case 1:
		b.WriteString("\\ ")
	case 2:
		b.WriteString(" \\  ")
	case 3:
		b.WriteString("\t")
	case 4:
		b.WriteString("\\")
	}
	return b.String()
}

func genRules(r *rand.Rand) string {
	lines := make([]string, 1+r.IntN(6))
	for i := range lines {
		lines[i] = genPattern(r)
	}
	sep := "\n"
	if r.IntN(8) == 0 {
		sep = "\r\n"
	}
	s := strings.Join(lines, sep)
	if r.IntN(2) == 0 {
		s += sep
	}
	if r.IntN(10) == 0 {
		s = "\xef\xbb\xbf" + s
	}
	return s
}

// genTree makes a random tree up to three levels deep with rule files in some directories.
func genTree(r *rand.Rand) tree {
	tr := tree{rules: map[string]string{}}
	var fill func(dir string, depth int)
	fill = func(dir string, depth int) {
		if r.IntN(2) == 0 {
			tr.rules[join(dir, GitIgnore)] = genRules(r)
		}
		used := map[string]bool{}
		for range 1 + r.IntN(5) {
			name := names[r.IntN(len(names))]
			if used[name] {
				continue
			}
			used[name] = true
			p := join(dir, name)
			if depth < 3 && r.IntN(2) == 0 {
				tr.dirs = append(tr.dirs, p)
				fill(p, depth+1)
			} else {
				tr.files = append(tr.files, p)
			}
		}
	}
	fill("", 0)
	if r.IntN(3) == 0 {
		tr.rules[".git/info/exclude"] = genRules(r)
	}
	if r.IntN(3) == 0 {
		tr.rules[globalKey] = genRules(r)
	}
	return tr
}

// TestMatchesGit compares the matcher with git check-ignore on generated trees, case-sensitive
// and not, and reports a failing scenario shrunk to what it needs.
func TestMatchesGit(t *testing.T) {
	needGit(t)
	cases := 300
	if testing.Short() {
		cases = 40
	}
	r := rand.New(rand.NewPCG(1, 2))
	var mu sync.Mutex // guards stats
	stats := map[string]int{}
	var shrunk atomic.Bool
	t.Run("cases", func(t *testing.T) {
		for i := range cases {
			tr := genTree(r)
			// In parallel: most of the time goes to creating files and starting git.
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				t.Parallel()
				counts := map[string]int{}
				diffs := diffWithGit(t, tr, counts)
				mu.Lock()
				for k, v := range counts {
					stats[k] += v
				}
				mu.Unlock()
				switch {
				case len(diffs) == 0:
				case shrunk.CompareAndSwap(false, true):
					// Shrinking takes hundreds of git runs: only for the first case that fails.
					small := shrink(t, tr, func(c tree) bool { return len(diffWithGit(t, c, nil)) > 0 })
					t.Fatalf("differs from git; shrunk:\n%s%s", small, strings.Join(diffWithGit(t, small, nil), "\n"))
				default:
					t.Fatalf("differs from git on %d paths, first %s", len(diffs), diffs[0])
				}
			})
		}
	})
	t.Logf("%d trees, %d path verdicts compared with git check-ignore, twice (ignorecase false and true); "+
		"case-sensitive, %d ignored by a .gitignore, %d by info/exclude, %d by the user's file, %d re-included by a ! rule",
		cases, stats["all"], stats["ignored"], stats["info"], stats["global"], stats["negated"])
}
