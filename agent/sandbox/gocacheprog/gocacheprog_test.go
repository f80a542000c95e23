package gocacheprog

import (
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The test binary is the cache program too: started by the go command with serve set, it
// serves the layers named in the environment and leaves its counts in a file.
func TestMain(m *testing.M) {
	if os.Getenv("GOCACHEPROG_TEST_SERVE") == "" {
		os.Exit(m.Run())
	}
	c := &Cache{Read: os.Getenv("GOCACHEPROG_TEST_READ"), Write: os.Getenv("GOCACHEPROG_TEST_WRITE")}
	err := c.Serve(os.Stdin, os.Stdout)
	b, _ := json.Marshal(c.Stats)
	_ = os.WriteFile(os.Getenv("GOCACHEPROG_TEST_STATS"), b, 0o600)
	if err != nil {
		os.Exit(1)
	}
	os.Exit(0)
}

// files lists the files under dir, relative.
func files(t *testing.T, dir string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out[rel] = true
		}
		return nil
	})
	return out
}

// TestLayersThroughTheGoCommand: a module built once with the user's cache, then in a new
// workspace through the cache program, is served from the user's layer, writes only to the
// workspace's, and leaves the user's cache as it was; built again in that workspace, it needs
// neither compile nor put.
func TestLayersThroughTheGoCommand(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		// The test binary runs, so Go is here: only a PATH without it gets there.
		t.Fatalf("the go command is not on PATH: %v", err)
	}
	mod := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(mod, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/layers\n\ngo 1.24\n")
	write("main.go", "package main\n\nimport (\n\t\"encoding/json\"\n\t\"fmt\"\n\t\"text/template\"\n)\n\nfunc main() {\n\tb, _ := json.Marshal(1)\n\tfmt.Println(string(b), template.HTMLEscapeString(\"<\"))\n}\n")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	user, ws := t.TempDir(), t.TempDir()
	build := func(gocache string, prog bool) Stats {
		t.Helper()
		stats := filepath.Join(t.TempDir(), "stats.json")
		cmd := exec.Command(gobin, "build", "-o", filepath.Join(t.TempDir(), "out"), ".")
		cmd.Dir = mod
		cmd.Env = append(os.Environ(), "GOCACHE="+gocache, "GOFLAGS=", "GOTOOLCHAIN=local")
		if prog {
			cmd.Env = append(cmd.Env, "GOCACHEPROG="+self, "GOCACHEPROG_TEST_SERVE=1", "GOCACHEPROG_TEST_READ="+user,
				"GOCACHEPROG_TEST_WRITE="+filepath.Join(ws, "layer"), "GOCACHEPROG_TEST_STATS="+stats)
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
		var s Stats
		if prog {
			b, err := os.ReadFile(stats)
			if err != nil || json.Unmarshal(b, &s) != nil {
				t.Fatalf("the cache program's counts: %v %s", err, b)
			}
		}
		return s
	}
	build(user, false) // the user's cache, warm
	before := files(t, user)
	first := build(filepath.Join(ws, "gocache"), true)
	t.Logf("first build in the workspace: %+v", first)
	if first.ReadHits == 0 || first.Misses > first.Gets/4 {
		t.Errorf("the user's layer served %d of %d gets (%d misses): want most", first.ReadHits, first.Gets, first.Misses)
	}
	after := files(t, user)
	if len(after) != len(before) {
		t.Errorf("the user's cache changed: %d files, then %d", len(before), len(after))
	}
	for f := range after {
		if !before[f] {
			t.Errorf("written into the user's cache: %s", f)
		}
	}
	second := build(filepath.Join(ws, "gocache"), true)
	t.Logf("second build in the workspace: %+v", second)
	// The link of -o is redone each time (one miss, one put), as with a plain GOCACHE.
	if second.Misses > 1 || second.Puts > 1 {
		t.Errorf("built again in the same workspace: %+v, want every get but the link a hit", second)
	}
	// A cold workspace with no user cache at all still builds, into its own layer only.
	cold := t.TempDir()
	user = ""
	s := build(filepath.Join(cold, "gocache"), true)
	if s.Puts == 0 || s.ReadHits != 0 {
		t.Errorf("with no user cache: %+v", s)
	}
	if len(files(t, filepath.Join(ws, "layer"))) == 0 {
		t.Error("nothing was written to the workspace's layer")
	}
}
