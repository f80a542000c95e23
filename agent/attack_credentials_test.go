package agent

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/reprise-dev/reprise/agent/cmdpolicy"
	"github.com/reprise-dev/reprise/agent/sandbox"
	"github.com/reprise-dev/reprise/agent/secret/secrettest"
	"github.com/reprise-dev/reprise/agent/tools"
)

// The attack run of issue 25: under --yes, `cat` of five credential files sent all five to the
// model, and after "Always allow git diff", `git diff --no-index KEY /dev/null` showed a key.
// Each test runs a real session in a home made of such files (HOME is the test's), so the
// policy, the redactor and run_command are the ones every front-end builds.

// yesPolicy is --yes with the default lists.
func yesPolicy() *cmdpolicy.Policy {
	p := cmdpolicy.New(nil, nil)
	p.AllowAll = true
	return p
}

// noLeak fails when got holds one of the home's secrets.
func noLeak(t *testing.T, h *secrettest.Home, got string) {
	t.Helper()
	for _, s := range h.Secrets {
		if strings.Contains(got, s) {
			t.Errorf("a secret reached the model (%q) in:\n%s", s, got)
		}
	}
}

// TestAttackYesReadsNoCredentials: under --yes, the lines of the attack run are refused before
// they run.
func TestAttackYesReadsNoCredentials(t *testing.T) {
	h := secrettest.NewHome(t)
	t.Setenv("HOME", h.Dir)
	for _, command := range []string{
		"cat ~/.ssh/id_ed25519",
		"cat ~/.aws/credentials",
		"cat ~/.config/gcloud/application_default_credentials.json",
		"cat $HOME/.netrc",
		"cat ~/.docker/config.json",
		"sh -c 'cat ~/.ssh/id_ed25519'",
		"cd && cat .netrc",
		"cat " + filepath.Join(h.Dir, ".aws", "credentials"),
	} {
		t.Run(command, func(t *testing.T) {
			_, got := attackRun(t, fixtureOpts{commands: yesPolicy()}, command)
			contains(t, got, "refused by policy: "+command)
			noLeak(t, h, got)
		})
	}
}

// TestAttackAlwaysAllowGitDiffStaysInWorkspace: "Always allow" on `git diff` covers the
// workspace; a key is refused without a question, another file outside is asked about, and
// the question says why.
func TestAttackAlwaysAllowGitDiffStaysInWorkspace(t *testing.T) {
	h := secrettest.NewHome(t)
	t.Setenv("HOME", h.Dir)
	user := &scriptedUser{answers: []tools.Decision{tools.AlwaysAllow}}
	outside := filepath.Join(t.TempDir(), "notes.txt")
	f := newFixture(t, fixtureOpts{approver: user, commands: cmdpolicy.New(nil, nil), files: map[string]string{"a.txt": "a\n"}},
		callTurn("run_command", map[string]any{"command": "git diff"}, ""),
		callTurn("run_command", map[string]any{"command": "git diff --no-index ~/.ssh/id_ed25519 /dev/null"}, ""),
		callTurn("run_command", map[string]any{"command": "git diff --no-index " + outside + " /dev/null"}, ""),
		textTurn("done"),
	)
	if _, err := f.run(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	reqs := mainRequests(f.srv)
	got := responses(reqs[len(reqs)-1])["run_command"]
	if len(got) != 3 {
		t.Fatalf("run_command results: %q", got)
	}
	contains(t, got[1], "refused by policy: git diff --no-index ~/.ssh/id_ed25519 /dev/null")
	contains(t, got[2], "refused by policy")
	noLeak(t, h, strings.Join(got, "\n"))
	if len(user.asked) != 2 {
		t.Fatalf("asked %d times, want 2 (git diff, then the file outside): %+v", len(user.asked), user.asked)
	}
	if want := "reads " + outside + ", outside the workspace"; user.asked[1].Reason != want {
		t.Errorf("the question's reason is %q, want %q", user.asked[1].Reason, want)
	}
}

// TestRedactionCatchesUnconfinedReads is the last line of defence: a command the policy cannot
// read (a script) runs unconfined under --yes and prints every credential file, and the model
// still gets none of their secrets, while the rest of the output is untouched.
func TestRedactionCatchesUnconfinedReads(t *testing.T) {
	h := secrettest.NewHome(t)
	t.Setenv("HOME", h.Dir)
	var script strings.Builder
	script.WriteString("echo before-the-files\n")
	for _, rel := range h.Files {
		script.WriteString(`cat "$HOME/` + rel + "\"\n")
	}
	script.WriteString("cat \"$HOME/.ssh/id_ed25519.pub\"\necho after-the-files\n")
	ws := t.TempDir()
	_, got := attackRun(t, fixtureOpts{
		commands: yesPolicy(),
		ws:       ws,
		sandbox:  sandbox.Unavailable(sandbox.Config{Workspace: ws}, "no sandbox in this test"),
		files:    map[string]string{"dump.sh": script.String()},
	}, "sh dump.sh")
	noLeak(t, h, got)
	for _, want := range append([]string{"before-the-files", "after-the-files", "exit status 0",
		"[redacted ~/.ssh/id_ed25519]", "[redacted ~/.aws/credentials]", "[redacted ~/.netrc]",
		"[redacted ~/.docker/config.json]", "[redacted ~/.config/gcloud/application_default_credentials.json]"}, h.Public...) {
		contains(t, got, want)
	}
}
