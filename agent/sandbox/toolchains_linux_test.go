package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestToolchainsWithHomeHidden: a Go, a Node, a Python, a Rust and a Java project build and pass
// their tests in the sandbox with the home directory hidden, each where the machine has its
// toolchain (installed under the home or not: pyenv's shims, rustup's cargo). The command and its
// output are logged: the note of a change to the home's view quotes them.
func TestToolchainsWithHomeHidden(t *testing.T) {
	if ok, why := New(Config{Workspace: t.TempDir()}).Confined(); !ok {
		t.Skip("commands are not confined here: " + why)
	}
	projects := []struct {
		name, tool, line string
		files            map[string]string
		want             string
		needs            string // a path under GOMODCACHE the project needs
	}{
		{"go", "go", "go test ./...", map[string]string{
			"go.mod":    "module example.com/t\n\ngo 1.22\n",
			"t_test.go": "package t\n\nimport \"testing\"\n\nfunc TestOK(t *testing.T) {}\n",
		}, "ok  \texample.com/t", ""},
		// A dependency from the module cache, under the home: read there, offline.
		{"go with a module", "go", "GOPROXY=off go test ./...", map[string]string{
			"go.mod": "module example.com/t\n\ngo 1.22\n\nrequire github.com/google/go-cmp v0.7.0\n",
			"go.sum": "github.com/google/go-cmp v0.7.0 h1:wk8382ETsv4JYUZwIsn6YpYiWiBsYLSJiTsyBybVuN8=\n" +
				"github.com/google/go-cmp v0.7.0/go.mod h1:pXiqmnSA92OHEEa9HXL2W4E7lf9JzCmGVUdgjX3N/iU=\n",
			"t_test.go": "package t\n\nimport (\n\t\"testing\"\n\n\t\"github.com/google/go-cmp/cmp\"\n)\n\nfunc TestOK(t *testing.T) {\n\tif d := cmp.Diff(1, 1); d != \"\" {\n\t\tt.Fatal(d)\n\t}\n}\n",
		}, "ok  \texample.com/t", "github.com/google/go-cmp@v0.7.0"},
		{"node", "npm", "npm test", map[string]string{
			"package.json": `{"name": "t", "version": "1.0.0", "scripts": {"test": "node --test"}}`,
			"t.test.js":    "const test = require('node:test');\nconst assert = require('node:assert');\ntest('ok', () => assert.strictEqual(1 + 1, 2));\n",
		}, "# pass 1", ""},
		{"python", "python3", "python3 -m unittest -v", map[string]string{
			"test_t.py": "import unittest\n\nclass T(unittest.TestCase):\n    def test_ok(self):\n        self.assertEqual(1 + 1, 2)\n",
		}, "OK", ""},
		{"rust", "cargo", "cargo test --offline", map[string]string{
			"Cargo.toml": "[package]\nname = \"t\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
			"src/lib.rs": "#[cfg(test)]\nmod tests {\n    #[test]\n    fn ok() { assert_eq!(1 + 1, 2); }\n}\n",
		}, "test result: ok. 1 passed", ""},
		{"java", "javac", "javac T.java && java T", map[string]string{
			"T.java": "public class T { public static void main(String[] a) { System.out.println(1 + 1 == 2 ? \"java ok\" : \"wrong\"); } }\n",
		}, "java ok", ""},
	}
	cache := t.TempDir() // one build cache, as a workspace's commands share theirs
	for _, p := range projects {
		t.Run(p.name, func(t *testing.T) {
			if _, err := exec.LookPath(p.tool); err != nil {
				t.Skip(p.tool + " is not installed")
			}
			if p.needs != "" {
				cache, _ := exec.Command("go", "env", "GOMODCACHE").Output()
				if _, err := os.Stat(filepath.Join(strings.TrimSpace(string(cache)), p.needs)); err != nil {
					t.Skip(p.needs + " is not in the module cache")
				}
			}
			ws := t.TempDir()
			for name, body := range p.files {
				if err := os.MkdirAll(filepath.Dir(filepath.Join(ws, name)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			sb := New(Config{Workspace: ws, Cache: cache})
			if sp, _ := sb.spec(Unasked); sp.Home == "" {
				t.Skip("no home directory to hide")
			}
			c, err := sb.Command(t.Context(), Unasked, "/bin/sh", "-c", p.line)
			if err != nil {
				t.Fatal(err)
			}
			var out strings.Builder
			c.Dir, c.Env, c.Stdout, c.Stderr = ws, sb.Env(os.Environ()), &out, &out
			c.WaitDelay = 2 * time.Second
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			st, err := c.Wait()
			t.Logf("$ %s\n%s(exit %d)", p.line, out.String(), st.Code)
			if err != nil || st.Code != 0 || !strings.Contains(out.String(), p.want) {
				t.Errorf("%s in the sandbox: exit %d, %v:\n%s", p.line, st.Code, err, out.String())
			}
		})
	}
}
