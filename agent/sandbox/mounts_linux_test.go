package sandbox

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCredentialsHidden: the home directory (here a home of the test's) is hidden from commands
// but for the toolchains and what the readPaths setting shows, read-only: the credential files
// read as empty even there (the default list and the hidePaths setting), and what no list names
// (a shell history with an exported key, ~/.pgpass, a token in ~/.gitconfig, the Copilot token,
// Reprise's own settings and sessions) is not there at all. Nothing can be written.
func TestCredentialsHidden(t *testing.T) {
	home := outsideDir(t)
	t.Setenv("HOME", home)
	for _, v := range []string{"XDG_CONFIG_HOME", "XDG_STATE_HOME", "REPRISE_HOME", "GOPATH", "GOMODCACHE"} {
		t.Setenv(v, "")
	}
	files := map[string]string{
		".ssh/id_ed25519":  "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n",
		".aws/credentials": "[default]\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG\n",
		".config/gcloud/application_default_credentials.json": `{"refresh_token": "1//0gSecretToken"}`,
		".netrc":                                    "machine example.com login u password hunter2\n",
		".docker/config.json":                       `{"auths": {"r.example.com": {"auth": "dTpzZWNyZXQ="}}}`,
		".kube/config":                              "token: kubesecret\n",
		"notes/private.txt":                         "hidden by the setting\n",
		"run/user/bus-secret":                       "the runtime directory: session bus, agents\n",
		".bash_history":                             "export OPENAI_API_KEY=sk-fromhistory\n",
		".pgpass":                                   "db:5432:*:u:pgsecret\n",
		".gitconfig":                                "[http]\n\textraheader = AUTHORIZATION: bearer ghp_gitconfigtoken\n",
		".config/github-copilot/hosts.json":         `{"github.com": {"oauth_token": "gho_copilottoken"}}`,
		".config/reprise/settings.json":             `{"allow": ["secret-rule"]}`,
		".local/state/reprise/sessions/s/x.jsonl":   "another project's chat\n",
		".cargo/credentials.toml":                   "token = \"cargosecret\"\n",
		"notes/public.txt":                          "readable\n",
		"go/pkg/mod/example.com/m@v1/go.mod":        "module example.com/m\n",
		".cargo/registry/index/readable-from-cargo": "readable\n",
	}
	readable := map[string]bool{"notes/public.txt": true, "go/pkg/mod/example.com/m@v1/go.mod": true, ".cargo/registry/index/readable-from-cargo": true}
	for rel, content := range files {
		p := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("XDG_RUNTIME_DIR", filepath.Join(home, "run/user"))
	ws := t.TempDir()
	sb := New(Config{Workspace: ws, Writable: []string{}, HidePaths: []string{"~/notes/private.txt"}, ReadPaths: []string{"~/notes"}})
	for rel, content := range files {
		out, _ := run(t, sb, ws, "cat "+filepath.Join(home, rel)+"; ls -A "+filepath.Dir(filepath.Join(home, rel)))
		secret := strings.TrimSpace(strings.Split(content, "\n")[len(strings.Split(strings.TrimSpace(content), "\n"))-1])
		if readable[rel] {
			if !strings.Contains(out, secret) {
				t.Errorf("%s: a file the sandbox shows is unreadable: %q", rel, out)
			}
			continue
		}
		if strings.Contains(out, secret) {
			t.Errorf("%s was read from the sandbox: %q", rel, out)
		}
	}
	run(t, sb, ws, "echo x >> "+filepath.Join(home, ".netrc")+"; rm -rf "+filepath.Join(home, ".ssh")+"; echo x > "+filepath.Join(home, "notes/public.txt")+"; echo x > "+filepath.Join(home, ".profile"))
	for rel, content := range files {
		if b, err := os.ReadFile(filepath.Join(home, rel)); err != nil || string(b) != content {
			t.Errorf("%s changed: %q %v", rel, b, err)
		}
	}
	if _, err := os.Stat(filepath.Join(home, ".profile")); err == nil {
		t.Error("a file was created in the home directory")
	}
}

// TestNothingOutsideChanges: a command changes no mode, time or extended attribute outside the
// workspace (Landlock has no right for those; the read-only mounts refuse them), sees a /dev/shm
// of its own, and still changes what it likes inside the workspace.
func TestNothingOutsideChanges(t *testing.T) {
	sb, ws := confined(t, false)
	outside := outsideDir(t)
	victim := filepath.Join(outside, ".bashrc")
	if err := os.WriteFile(victim, []byte("safe\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(victim)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"chmod 0666 " + victim, "chmod 0777 " + outside, "touch -d 2001-01-01 " + victim,
		"setfattr -n user.x -v y " + victim, "python3 -c 'import os; os.setxattr(\"" + victim + "\", \"user.x\", b\"y\")'",
	} {
		if out, st := run(t, sb, ws, line); st.Code == 0 {
			t.Errorf("%q succeeded: %q", line, out)
		}
	}
	after, err := os.Stat(victim)
	if err != nil || after.Mode() != before.Mode() || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("the file outside changed: %v → %v, %v", before.Mode(), after.Mode(), err)
	}
	if st, _ := os.Stat(outside); st.Mode().Perm() != 0o700 {
		t.Errorf("the directory outside changed: %v", st.Mode())
	}
	if out, st := run(t, sb, ws, "echo x > f && chmod 0600 f && touch -d 2001-01-01 f"); st.Code != 0 {
		t.Errorf("inside the workspace: %v %q", st, out)
	}

	seg := "/dev/shm/reprise-test-" + filepath.Base(outside)
	if err := os.WriteFile(seg, []byte("host"), 0o666); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(seg) })
	out, _ := run(t, sb, ws, "cat "+seg+"; echo pwned > "+seg+"; echo mine > /dev/shm/own && cat /dev/shm/own")
	if strings.Contains(out, "host") || !strings.Contains(out, "mine") {
		t.Errorf("/dev/shm is not the command's own: %q", out)
	}
	if b, _ := os.ReadFile(seg); string(b) != "host" {
		t.Errorf("the user's segment changed: %q", b)
	}
}

// TestEveryRepositoryReadOnly: version-control directories at any depth, under dependency trees
// too, and the editors' files at the root, are read-only to a command nobody approved.
func TestEveryRepositoryReadOnly(t *testing.T) {
	sb, ws := confined(t, false)
	nested := []string{".git", "a/b/c/d/e/.git", "node_modules/dep/.git", "vendor/x/.hg", "sub/.git"}
	for _, d := range nested {
		if err := os.MkdirAll(filepath.Join(ws, d, "hooks"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, "wt", ".git"), nil, 0o644); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	for _, f := range []string{".vscode/settings.json", ".envrc", ".dir-locals.el"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(ws, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, f), []byte("safe"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range nested {
		line := "printf '#!/bin/sh\\ntouch pwned\\n' > " + d + "/hooks/pre-commit"
		if out, st := run(t, sb, ws, line); st.Code == 0 {
			t.Errorf("unasked %q succeeded: %q", line, out)
		}
		if out, st := runTrusted(t, sb, Approved, ws, line); st.Code != 0 {
			t.Errorf("approved %q failed: %q", line, out)
		}
	}
	for _, f := range []string{".vscode/settings.json", ".envrc", ".dir-locals.el"} {
		if out, st := run(t, sb, ws, "echo evil > "+f); st.Code == 0 {
			t.Errorf("unasked write to %s succeeded: %q", f, out)
		}
	}
}

// TestPrivateTemp: commands get a /tmp of their own, which persists between the commands of a
// workspace and hides the user's temporary files; a workspace under /tmp is still there.
func TestPrivateTemp(t *testing.T) {
	hostFile, err := os.CreateTemp("/tmp", "reprise-host-") // /tmp itself is what is replaced
	if err != nil {
		t.Fatal(err)
	}
	hostFile.Close()
	t.Cleanup(func() { os.Remove(hostFile.Name()) })
	ws, tmp := t.TempDir(), t.TempDir()
	sb := New(Config{Workspace: ws, Writable: []string{}, TempDir: tmp})
	run1, st := run(t, sb, ws, "test -e "+hostFile.Name()+" && echo seen; echo $TMPDIR; echo kept > /tmp/x; echo in-ws > here")
	if st.Code != 0 || strings.Contains(run1, "seen") || !strings.Contains(run1, "/tmp") {
		t.Errorf("first command: %v %q", st, run1)
	}
	if out, _ := run(t, sb, ws, "cat /tmp/x"); !strings.Contains(out, "kept") {
		t.Errorf("the temp dir did not persist: %q", out)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "here")); err != nil || string(b) != "in-ws\n" {
		t.Errorf("the workspace under /tmp: %q %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(tmp, "x")); err != nil || string(b) != "kept\n" {
		t.Errorf("the private temp dir holds %q, %v", b, err)
	}
}

// TestGoTestAgainstLoopback: with the network off, a test server on loopback still works (it is
// the command's own), so `go test` of an HTTP handler passes.
func TestGoTestAgainstLoopback(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatal("python3 is needed")
	}
	sb, ws := confined(t, false)
	line := `python3 -c '
import socket, threading
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
c = socket.create_connection(s.getsockname()); a, _ = s.accept(); c.sendall(b"ok"); print(a.recv(2).decode())'`
	if out, st := run(t, sb, ws, line); st.Code != 0 || !strings.Contains(out, "ok") {
		t.Errorf("loopback inside: %v %q", st, out)
	}
}

// TestWorkspaceInsideCredentials: a workspace opened inside a credential directory (~/.aws/proj,
// ~/.config/gh/x) is the command's, but the credentials beside it are not there.
func TestWorkspaceInsideCredentials(t *testing.T) {
	home := outsideDir(t)
	t.Setenv("HOME", home)
	for _, rel := range []string{".aws/proj", ".config/gh/x"} {
		dir := filepath.Dir(filepath.Join(home, rel))
		secretFile := filepath.Join(dir, "credentials")
		if err := os.MkdirAll(filepath.Join(home, rel), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(secretFile, []byte("beside-the-workspace\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		ws := filepath.Join(home, rel)
		sb := New(Config{Workspace: ws, Writable: []string{}})
		out, st := run(t, sb, ws, "cat "+secretFile+"; echo made > here")
		if strings.Contains(out, "beside-the-workspace") {
			t.Errorf("%s: the credentials beside the workspace were read: %q", rel, out)
		}
		if b, err := os.ReadFile(filepath.Join(ws, "here")); err != nil || string(b) != "made\n" || st.Code != 0 {
			t.Errorf("%s: the workspace is not the command's: %v %q", rel, err, out)
		}
	}
}

// TestHomeThroughASymlink: a home reached through a symlink (HOME=/x/link, the real one beside)
// is covered where it is, the workspace inside it stays the command's, and a toolchain there
// comes back, as does one whose directory is a link to elsewhere (~/.cargo → /x/data/cargo).
func TestHomeThroughASymlink(t *testing.T) {
	base := outsideDir(t)
	real := filepath.Join(base, "real-home")
	if err := os.MkdirAll(filepath.Join(base, "data", "cargo", "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "data", "cargo", "bin", "cargo"), []byte("linked tool\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"ws", "go/bin", "secret"} {
		if err := os.MkdirAll(filepath.Join(real, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(real, "secret", "x"), []byte("hidden-behind-a-link\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(real, "go", "bin", "tool"), []byte("a tool\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "home")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(base, "data", "cargo"), filepath.Join(real, ".cargo")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", link)
	t.Setenv("GOPATH", "")
	ws := filepath.Join(link, "ws")
	sb := New(Config{Workspace: ws, Writable: []string{}})
	out, st := run(t, sb, ws, "cat "+filepath.Join(link, "secret", "x")+"; cat "+filepath.Join(link, "go", "bin", "tool")+
		"; cat "+filepath.Join(link, ".cargo", "bin", "cargo")+"; echo made > here")
	if strings.Contains(out, "hidden-behind-a-link") || !strings.Contains(out, "a tool") || !strings.Contains(out, "linked tool") {
		t.Errorf("through the link: %q", out)
	}
	if b, err := os.ReadFile(filepath.Join(real, "ws", "here")); err != nil || string(b) != "made\n" || st.Code != 0 {
		t.Errorf("the workspace is not the command's: %v %+v %q", err, st, out)
	}
}
