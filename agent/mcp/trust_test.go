package mcp

import (
	"os"
	"path/filepath"
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
	if len(workspaceFiles(out, ws)) != 0 {
		t.Errorf("files outside the workspace are read: %q", workspaceFiles(out, ws))
	}
}
