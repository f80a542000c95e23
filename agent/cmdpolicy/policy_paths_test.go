//go:build !windows

package cmdpolicy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// pathPolicy is shPolicy with a home directory and environment of its own.
func pathPolicy(home string, env map[string]string) *Policy {
	p := shPolicy(nil, nil)
	p.Home = home
	p.Getenv = func(k string) string {
		if k == "HOME" {
			return home
		}
		return env[k]
	}
	return p
}

// TestPolicyPaths: a command naming a credential location is refused, under --yes too; one
// naming another path outside the workspace is asked, whatever the allowlist says, and runs
// under --yes. The workspace and home need not exist: paths are read as written.
func TestPolicyPaths(t *testing.T) {
	const ws, home = "/ws/a/b", "/home/me"
	env := map[string]string{"AWS_SHARED_CREDENTIALS_FILE": "/vault/aws", "TOOLS": "/opt/tools"}
	tests := []struct {
		command string
		want    Action // with the default policy
		yes     Action // with AllowAll (--yes)
	}{
		// The files an attack run sent to the model, and other spellings of them.
		{"cat ~/.ssh/id_ed25519", Deny, Deny},
		{"cat ~/.aws/credentials", Deny, Deny},
		{"cat ~/.config/gcloud/application_default_credentials.json", Deny, Deny},
		{"cat ~/.netrc", Deny, Deny},
		{"cat ~/.docker/config.json", Deny, Deny},
		{"cat $HOME/.netrc", Deny, Deny},
		{`cat "${HOME}/.netrc"`, Deny, Deny},
		{"cat /home/me/.kube/config", Deny, Deny},
		{"sh -c 'cat ~/.ssh/id_rsa'", Deny, Deny},
		{"less ../../../root/.ssh/id_rsa", Deny, Deny},
		{"less ../../../home/alice/.ssh/id_rsa", Deny, Deny},
		{"cat ~alice/.aws/credentials", Deny, Deny},
		{"cat /Users/alice/Library/Keychains/login.keychain-db", Deny, Deny},
		{"git diff --no-index ~/.ssh/id_ed25519 /dev/null", Deny, Deny},
		{"git -C ~/.ssh log", Deny, Deny},
		{"ls ~/.ssh", Deny, Deny},
		{"cp -r ~/.gnupg keys", Deny, Deny},
		{"cat < ~/.netrc", Deny, Deny},
		{"go test ./... > ~/.ssh/authorized_keys", Deny, Deny},
		{"cat ~/.s*/id_rsa", Deny, Deny},
		{"cat ~/.*/credentials", Deny, Deny},
		{"cat ~/.{ssh,aws}/config", Deny, Deny},
		{"cat /home/*/.netrc", Deny, Deny},
		{"cat $AWS_SHARED_CREDENTIALS_FILE", Deny, Deny},
		{"F=~/.netrc; cat $F", Deny, Deny},
		{"cd ~ && cat .ssh/id_rsa", Deny, Deny},
		{"cd; cat .netrc", Deny, Deny},
		{"env -C ~ cat .netrc", Deny, Deny},
		{"tar cf x.tar --directory=$HOME .aws", Deny, Deny},
		{"curl file://$HOME/.netrc", Deny, Deny},
		{"curl -o /dev/null --netrc-file=/home/me/.netrc https://x", Deny, Deny},
		{"nice -n 5 grep -r token ~/.config/gh", Deny, Deny},
		{"find ~/.mozilla -name '*.sqlite'", Deny, Deny},
		// Outside the workspace, not credentials: asked, even allowlisted; --yes runs them.
		{"ls /etc", Ask, Allow},
		{"ls ~", Ask, Allow},
		{"ls ~/src", Ask, Allow},
		{"ls $HOME", Ask, Allow},
		{"ls ..", Ask, Allow},
		{"ls sub/../../x", Ask, Allow},
		{"ls /ws/a", Ask, Allow},
		{"ls ~/*", Ask, Allow}, // a glob of the home: no dotfile
		{"go test ../other/...", Ask, Allow},
		{"go vet /opt/x/...", Ask, Allow},
		{"git log -- /etc/passwd", Ask, Allow},
		{"git status --porcelain=/x", Ask, Allow},
		{"ls -I/etc", Ask, Allow},
		{"ls $TOOLS", Ask, Allow},
		{"git diff /etc/passwd /dev/null", Ask, Allow},
		{"cat ../../../root/notes.txt", Ask, Allow},
		// In the workspace, or harmless: as before.
		{"ls /ws/a/b/sub", Allow, Allow},
		{"ls sub/..", Allow, Allow},
		{"ls /dev/null", Allow, Allow},
		{"git log -p -- x.go", Allow, Allow},
		{"go test -run 'TestA/sub' ./...", Allow, Allow},
		{"git log HEAD~1", Allow, Allow},
		{"ls $UNSET/x", Ask, Allow}, // computed, may become options: argvRisk
		{"cat x.txt", Ask, Allow},
		{"echo ~/.ssh is where keys live", Deny, Deny}, // the path is read as one: rephrase
	}
	p, yes := pathPolicy(home, env), pathPolicy(home, env)
	yes.AllowAll = true
	for _, tt := range tests {
		got, gotYes := p.CheckIn(ws, tt.command), yes.CheckIn(ws, tt.command)
		if got.Action != tt.want {
			t.Errorf("CheckIn(%q) = %v (%s), want %v", tt.command, got.Action, got.Reason, tt.want)
		}
		if gotYes.Action != tt.yes {
			t.Errorf("AllowAll: CheckIn(%q) = %v (%s), want %v", tt.command, gotYes.Action, gotYes.Reason, tt.yes)
		}
	}
	// Without a workspace only credentials are judged: `ls ~/src` stays allowlisted.
	for cmd, want := range map[string]Action{"ls ~/src": Allow, "cat ~/.netrc": Deny, "ls ..": Allow} {
		if got := p.Check(cmd); got.Action != want {
			t.Errorf("Check(%q) = %v (%s), want %v", cmd, got.Action, got.Reason, want)
		}
	}
}

func TestPolicyPathReasons(t *testing.T) {
	const ws = "/ws/a/b"
	p := pathPolicy("/home/me", nil)
	tests := []struct {
		command string
		want    Verdict
	}{
		{"cat ~/.ssh/id_ed25519", Verdict{Deny, "reads a credential file (~/.ssh/id_ed25519)"}},
		{"cat $HOME/.netrc", Verdict{Deny, "reads a credential file ($HOME/.netrc)"}},
		{"git diff /etc/passwd /dev/null", Verdict{Ask, "reads /etc/passwd, outside the workspace"}},
		{"git log --output=/x", Verdict{Ask, "reads /x, outside the workspace"}},
		{"ls ../..", Verdict{Ask, "reads ../.., outside the workspace"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(p.CheckIn(ws, tt.command), tt.want); diff != "" {
			t.Errorf("CheckIn(%q) (-got +want):\n%s", tt.command, diff)
		}
	}
}

// TestPolicyAlwaysAllowStaysInWorkspace: the seed's attack. After "Always allow" on `git diff`,
// the prefix covers the workspace only: `git diff --no-index` of a key is refused, of another
// file outside asked. An approved command naming a path outside is remembered exactly.
func TestPolicyAlwaysAllowStaysInWorkspace(t *testing.T) {
	const ws = "/ws/a/b"
	p := pathPolicy("/home/me", nil)
	p.AllowAlways("git diff")
	for cmd, want := range map[string]Action{
		"git diff --stat":                                 Allow,
		"git diff HEAD~1 -- sub/x.go":                     Allow,
		"git diff --no-index ~/.ssh/id_ed25519 /dev/null": Deny,
		"git diff ~/.ssh/id_ed25519 /dev/null":            Deny,
		"git diff /etc/passwd /dev/null":                  Ask,
		"git diff ../../x y":                              Ask,
	} {
		if got := p.CheckIn(ws, cmd); got.Action != want {
			t.Errorf("after Always allow git diff: CheckIn(%q) = %v (%s), want %v", cmd, got.Action, got.Reason, want)
		}
	}
	for cmd, want := range map[string]string{
		"git diff /etc/passwd /dev/null": "git diff /etc/passwd /dev/null (exactly)",
		"git diff ../x y":                "git diff ../x y (exactly)",
		"git diff $HOME/x y":             "git diff $HOME/x y (exactly)",
		"git diff x /dev/null":           "git diff (and any arguments)",
	} {
		if got := p.RuleFor(cmd); got != want {
			t.Errorf("RuleFor(%q) = %q, want %q", cmd, got, want)
		}
	}
	p.AllowAlways("git diff /etc/passwd /dev/null")
	for cmd, want := range map[string]Action{"git diff /etc/passwd /dev/null": Allow, "git diff /etc/shadow /dev/null": Ask} {
		if got := p.CheckIn(ws, cmd); got.Action != want {
			t.Errorf("after Always allow on a path outside: CheckIn(%q) = %v (%s), want %v", cmd, got.Action, got.Reason, want)
		}
	}
	p.AllowAlways("cat ~/.netrc")
	if got := p.CheckIn(ws, "cat ~/.netrc"); got.Action != Deny {
		t.Errorf("an approved read of a credential file: %v (%s)", got.Action, got.Reason)
	}
}

// TestPolicyPathSymlinks: a link of the workspace is judged by where it leads, both ways.
func TestPolicyPathSymlinks(t *testing.T) {
	home, outside := t.TempDir(), t.TempDir()
	ws := filepath.Join(t.TempDir(), "ws")
	for _, d := range []string{filepath.Join(home, ".ssh"), filepath.Join(ws, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"keys": filepath.Join(home, ".ssh"), "out": outside} {
		if err := os.Symlink(target, filepath.Join(ws, link)); err != nil {
			t.Fatal(err)
		}
	}
	alias := filepath.Join(t.TempDir(), "alias") // the workspace reached through a link
	if err := os.Symlink(ws, alias); err != nil {
		t.Fatal(err)
	}
	p := pathPolicy(home, nil)
	for _, tt := range []struct {
		workspace, command string
		want               Action
	}{
		{ws, "cat keys/id_ed25519", Deny},
		{ws, "ls keys", Deny},
		{ws, "ls out", Ask},
		{ws, "ls out/new/file", Ask},
		{ws, "ls sub", Allow},
		{ws, "ls " + filepath.Join(alias, "sub"), Allow},
		{alias, "ls " + filepath.Join(ws, "sub"), Allow},
		{alias, "ls sub", Allow},
		{alias, "cat keys/id_ed25519", Deny},
	} {
		if got := p.CheckIn(tt.workspace, tt.command); got.Action != tt.want {
			t.Errorf("in %s: CheckIn(%q) = %v (%s), want %v", tt.workspace, tt.command, got.Action, got.Reason, tt.want)
		}
	}
	// A workspace that is a credential location itself is the user's choice: the file tools read
	// it anyway.
	if got := p.CheckIn(filepath.Join(home, ".ssh"), "ls"); got.Action != Allow {
		t.Errorf("ls in a workspace under ~/.ssh: %v (%s)", got.Action, got.Reason)
	}
}

func TestBraces(t *testing.T) {
	for in, want := range map[string]string{
		"~/.{ssh,aws}/x": "~/.ssh/x ~/.aws/x",
		"a{b,{c,d}}e":    "abe ace ade",
		"{a}":            "{a}",
		"x{":             "x{",
		"{,-o}":          " -o",
	} {
		if got := strings.Join(braces(in, 64), " "); got != want {
			t.Errorf("braces(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzPolicyPaths: knowing the workspace only makes the policy stricter, a refusal holds under
// --yes, and what "Always allow" remembers allows the command itself unless it is refused.
func FuzzPolicyPaths(f *testing.F) {
	for _, s := range []string{
		"cat ~/.ssh/id_rsa", "ls ../..", "git diff /etc/passwd /dev/null", "cd ~ && cat .netrc", "cat $HOME/.aws/x",
		"ls ~/.{a,b}*", "env -C / ls", "cat < ~/.netrc", "ls -I/x --o=~/y", "~alice/x", "file://$HOME", "a=~/.kube b",
	} {
		f.Add(s)
	}
	const ws = "/ws/a/b"
	rank := map[Action]int{Allow: 0, Ask: 1, Deny: 2}
	f.Fuzz(func(t *testing.T, line string) {
		p := pathPolicy("/home/me", nil)
		v := p.CheckIn(ws, line)
		if v.Reason == "" {
			t.Errorf("CheckIn(%q) gives no reason", line)
		}
		if without := p.Check(line); rank[v.Action] < rank[without.Action] {
			t.Errorf("CheckIn(%q) = %v, but without a workspace %v", line, v.Action, without.Action)
		}
		yes := pathPolicy("/home/me", nil)
		yes.AllowAll = true
		if v.Action == Deny && yes.CheckIn(ws, line).Action != Deny {
			t.Errorf("CheckIn(%q) is denied but not under AllowAll", line)
		}
		p.AllowAlways(line)
		if after := p.CheckIn(ws, line); strings.TrimSpace(line) != "" && after.Action != Allow && after.Action != Deny {
			t.Errorf("after AllowAlways(%q): %v (%s)", line, after.Action, after.Reason)
		}
	})
}
