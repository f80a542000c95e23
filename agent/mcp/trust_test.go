package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTrustStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config", "trusted-mcp.json")
	s := NewTrustStore(path)
	if s.Trusted("abc") {
		t.Fatal("trusted before any consent")
	}
	if err := s.Trust("abc"); err != nil {
		t.Fatal(err)
	}
	if err := s.Trust("abc"); err != nil {
		t.Fatal(err)
	}
	again := NewTrustStore(path)
	if !again.Trusted("abc") || again.Trusted("abd") {
		t.Error("the consent is not kept by fingerprint")
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("trust file: %v, mode %v; want 0600", err, st.Mode().Perm())
	}
	// A damaged file trusts nothing and is not overwritten silently.
	os.WriteFile(path, []byte("{not json"), 0o600)
	if again.Trusted("abc") {
		t.Error("a damaged trust file still trusts")
	}
	if err := again.Trust("xyz"); err == nil {
		t.Error("Trust over a damaged file succeeded")
	}
}

// TestTrustFingerprintFollowsTheScript: a workspace server's trust covers the workspace files it
// names; a sandboxed command that edits one makes the server a new one, asked about again.
func TestTrustFingerprintFollowsTheScript(t *testing.T) {
	ws := t.TempDir()
	write := func(rel, content string) {
		t.Helper()
		p := filepath.Join(ws, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("tools/server.js", "serve()\n")
	write("bin/mcp", "#!/bin/sh\n")
	outside := filepath.Join(t.TempDir(), "x.js")
	for _, sc := range []ServerConfig{
		{Name: "node", Type: TypeStdio, Command: "node", Args: []string{"./tools/server.js"}, Workspace: true},
		{Name: "folder", Type: TypeStdio, Command: "${workspaceFolder}/bin/mcp", Workspace: true},
		{Name: "cwd", Type: TypeStdio, Command: "node", Args: []string{"server.js"}, Cwd: "tools", Workspace: true},
		{Name: "option", Type: TypeStdio, Command: "node", Args: []string{"--script=tools/server.js"}, Workspace: true},
	} {
		write("tools/server.js", "serve()\n")
		write("bin/mcp", "#!/bin/sh\n")
		before := TrustFingerprint(sc, ws)
		if before == Fingerprint(sc) {
			t.Errorf("%s: the files it names are not in its fingerprint", sc.Name)
		}
		write("tools/server.js", "serve(); steal()\n")
		write("bin/mcp", "#!/bin/sh\nsteal\n")
		if TrustFingerprint(sc, ws) == before {
			t.Errorf("%s: the script changed, the fingerprint did not", sc.Name)
		}
	}
	user := ServerConfig{Name: "u", Type: TypeStdio, Command: "node", Args: []string{"./tools/server.js"}}
	if TrustFingerprint(user, ws) != Fingerprint(user) {
		t.Error("a user server's fingerprint depends on the workspace")
	}
	out := ServerConfig{Name: "o", Type: TypeStdio, Command: "node", Args: []string{outside, "../../etc/passwd"}, Workspace: true}
	if len(Loads(out, ws)) != 0 {
		t.Errorf("files outside the workspace are read: %q", Loads(out, ws))
	}
}

// TestTrustFingerprintFollowsWhatTheServerLoads: trust covers what a workspace server loads from
// the workspace, not only the file it names: a module beside the script, a required file in a
// sub-directory, node_modules, the package of `python -m`, another package of the module `go run`
// builds, the project npx runs from, and a file past the bounds of what is read. A change elsewhere
// (the docs) keeps the trust; a script at the workspace's root covers the whole workspace.
func TestTrustFingerprintFollowsWhatTheServerLoads(t *testing.T) {
	big := strings.Repeat("x", maxHashedFile+1)
	tests := []struct {
		name    string
		sc      ServerConfig
		files   map[string]string
		changed string
	}{
		{"python module beside", ServerConfig{Command: "python3", Args: []string{"mcp/server.py"}}, map[string]string{"mcp/server.py": "import json", "mcp/json.py": "ok"}, "mcp/json.py"},
		{"required js", ServerConfig{Command: "node", Args: []string{"srv/index.js"}}, map[string]string{"srv/index.js": "require('./lib/x')", "srv/lib/x.js": "ok"}, "srv/lib/x.js"},
		{"node_modules", ServerConfig{Command: "node", Args: []string{"index.js"}, Cwd: "srv"}, map[string]string{"srv/index.js": "require('dep')", "srv/node_modules/dep/index.js": "ok"}, "srv/node_modules/dep/index.js"},
		{"python -m", ServerConfig{Command: "python3", Args: []string{"-m", "pkg.server"}}, map[string]string{"pkg/server.py": "from . import util", "pkg/util.py": "ok"}, "pkg/util.py"},
		{"go run", ServerConfig{Command: "go", Args: []string{"run", "./cmd/srv"}, Cwd: "mcp"}, map[string]string{"mcp/go.mod": "module m", "mcp/cmd/srv/main.go": "package main", "mcp/internal/x/x.go": "package x"}, "mcp/internal/x/x.go"},
		{"npx", ServerConfig{Command: "npx", Args: []string{"my-server"}, Cwd: "tools"}, map[string]string{"tools/package.json": "{}", "tools/node_modules/my-server/bin.js": "ok"}, "tools/node_modules/my-server/bin.js"},
		{"past the bounds", ServerConfig{Command: "node", Args: []string{"srv/index.js"}}, map[string]string{"srv/index.js": "ok", "srv/big.bin": big}, "srv/big.bin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := t.TempDir()
			tt.files["docs/README.md"] = "docs"
			for rel, body := range tt.files {
				p := filepath.Join(ws, filepath.FromSlash(rel))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			sc := tt.sc
			sc.Name, sc.Type, sc.Workspace = tt.name, TypeStdio, true
			before := TrustFingerprint(sc, ws)
			if err := os.WriteFile(filepath.Join(ws, "docs/README.md"), []byte("docs, edited"), 0o644); err != nil {
				t.Fatal(err)
			}
			if TrustFingerprint(sc, ws) != before {
				t.Errorf("a change to the docs changed the trust (loads: %q)", Loads(sc, ws))
			}
			before = TrustFingerprint(sc, ws)
			body := tt.files[tt.changed]
			if err := os.WriteFile(filepath.Join(ws, filepath.FromSlash(tt.changed)), []byte(body[:len(body)-1]+"!"), 0o644); err != nil {
				t.Fatal(err)
			}
			if TrustFingerprint(sc, ws) == before {
				t.Errorf("%s changed, the trust did not (loads: %q)", tt.changed, Loads(sc, ws))
			}
		})
	}
}

func TestLoadsOfAScriptAtTheRoot(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "server.js"), []byte("require('./anything')"), 0o644); err != nil {
		t.Fatal(err)
	}
	sc := ServerConfig{Name: "r", Type: TypeStdio, Command: "node", Args: []string{"server.js"}, Workspace: true}
	if got := Loads(sc, ws); len(got) != 1 || got[0] != ws {
		t.Errorf("Loads = %q, want the whole workspace", got)
	}
}
