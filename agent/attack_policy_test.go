package agent

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-dev/reprise/agent/cmdpolicy"
	"github.com/reprise-dev/reprise/agent/tools"
)

// The attacks below were found against the word-prefix policy. Each runs a real session: the
// fake model calls the tool with the hostile arguments, the real tools and policy answer, and
// the test looks at the disk to see whether the command ran.

// attackRun scripts one hostile run_command call and returns what the model got back.
func attackRun(t *testing.T, o fixtureOpts, command string) (f *fixture, got string) {
	t.Helper()
	f = newFixture(t, o, callTurn("run_command", map[string]any{"command": command}, ""), textTurn("done"))
	if _, err := f.run(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	reqs := mainRequests(f.srv)
	out := responses(reqs[len(reqs)-1])["run_command"]
	if len(out) != 1 {
		t.Fatalf("run_command results: %q", out)
	}
	return f, out[0]
}

func exists(t *testing.T, path string) bool {
	t.Helper()
	_, err := os.Lstat(path)
	return err == nil
}

// TestAttackAllowlistedOptionsAsk: options of allowlisted commands that run other programs or
// write files are asked, so with no one to ask they are refused and nothing runs.
func TestAttackAllowlistedOptionsAsk(t *testing.T) {
	files := map[string]string{
		"go.mod":     "module m\n\ngo 1.22\n",
		"m_test.go":  "package m\n\nimport \"testing\"\n\nfunc TestM(t *testing.T) {}\n",
		"evil.sh":    "#!/bin/sh\ntouch pwned\n",
		"x/keep.txt": "",
	}
	for _, command := range []string{
		`go test -exec 'sh -c "touch pwned; exec \"$0\" \"$@\""' ./...`,
		`go test -toolexec='sh evil.sh' ./...`,
		`go vet -vettool=./evil.sh ./...`,
		`go test -c -o pwned .`,
		`go test -coverprofile=pwned ./...`,
		`gofmt -l -w pwned.go`,
		`git log --output=pwned`,
		`make test SHELL=./evil.sh`,
		`sh -xc 'touch pwned'`,
		`find . -name keep.txt -exec touch pwned \;`,
	} {
		t.Run(command, func(t *testing.T) {
			f, got := attackRun(t, fixtureOpts{files: files}, command)
			contains(t, got, "refused by policy: "+command)
			if exists(t, filepath.Join(f.ws, "pwned")) {
				t.Errorf("%q ran", command)
			}
		})
	}
}

// TestAttackYesStillDenies: under --yes the denylist still refuses what it lists, behind any
// wrapper, shell, path or alias. `touch` is added to the denylist so that running shows on disk;
// the control runs show the same lines do create the file when nothing denies them.
func TestAttackYesStillDenies(t *testing.T) {
	yes := func(deny ...string) *cmdpolicy.Policy {
		p := cmdpolicy.New(nil, deny)
		p.AllowAll = true
		return p
	}
	for _, command := range []string{
		`nice -n 5 touch pwned`,
		`timeout -s KILL 5 touch pwned`,
		`sh -xc 'touch pwned'`,
		`bash -o pipefail -c 'true | touch pwned'`,
		`env -u HOME -S 'touch pwned'`,
		`/usr/bin/env touch pwned`,
		`git -c alias.t='!touch pwned' t`,
		`find . -maxdepth 0 -exec touch pwned \;`,
		`echo pwned | xargs -n 1 touch`,
		`$(echo touch) pwned`,
	} {
		t.Run(command, func(t *testing.T) {
			f, got := attackRun(t, fixtureOpts{commands: yes("touch")}, command)
			contains(t, got, "refused by policy: "+command)
			if exists(t, filepath.Join(f.ws, "pwned")) {
				t.Errorf("%q ran under --yes", command)
			}
		})
	}
	for _, command := range []string{`nice -n 5 touch pwned`, `env -S 'touch pwned'`, `sh -xc 'touch pwned'`} {
		f, got := attackRun(t, fixtureOpts{commands: yes()}, command)
		if !exists(t, filepath.Join(f.ws, "pwned")) {
			t.Errorf("control: %q did not run under --yes: %s", command, got)
		}
	}
}

// TestAttackYesNeverPushes: with the default denylist and --yes, the spellings of git push that
// the word-prefix policy let through never reach the remote.
func TestAttackYesNeverPushes(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	for _, command := range []string{
		`/usr/bin/git push origin HEAD:refs/heads/main`,
		`git -C . push origin HEAD:refs/heads/main`,
		`git -c alias.p=push p origin HEAD:refs/heads/main`,
		`git --no-pager -c x.y=z push origin HEAD:refs/heads/main`,
		`sh -ec 'git push origin HEAD:refs/heads/main'`,
		`timeout -s KILL 30 git push origin HEAD:refs/heads/main`,
	} {
		t.Run(command, func(t *testing.T) {
			p := cmdpolicy.New(nil, nil)
			p.AllowAll = true
			f := newFixture(t, fixtureOpts{commands: p, files: map[string]string{"a.txt": "a\n"}},
				callTurn("run_command", map[string]any{"command": command}, ""), textTurn("done"))
			remote := filepath.Join(t.TempDir(), "remote.git")
			git(t, "", "init", "-q", "--bare", remote)
			git(t, f.ws, "init", "-q")
			git(t, f.ws, "add", "a.txt")
			git(t, f.ws, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "a")
			git(t, f.ws, "remote", "add", "origin", remote)
			if _, err := f.run(t.Context(), "push it"); err != nil {
				t.Fatal(err)
			}
			reqs := mainRequests(f.srv)
			contains(t, responses(reqs[len(reqs)-1])["run_command"][0], "refused by policy")
			if out, err := exec.CommandContext(t.Context(), "git", "--git-dir", remote, "for-each-ref").Output(); err != nil || len(out) > 0 {
				t.Errorf("the remote has refs %q (%v)", out, err)
			}
		})
	}
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// TestAttackGitConfigFsmonitor: the model cannot plant core.fsmonitor (run by the next
// `git status`, which is allowlisted) nor a hook through write_file or edit_file.
func TestAttackGitConfigFsmonitor(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	config := "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = touch pwned; false\n"
	f := newFixture(t, fixtureOpts{},
		callTurn("write_file", map[string]any{"path": ".git/config", "content": config}, ""),
		callTurn("edit_file", map[string]any{"path": "src/../.git/config", "old": "[core]", "new": "[core]\n\tfsmonitor = touch pwned; false"}, ""),
		callTurn("write_file", map[string]any{"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\ntouch pwned\n"}, ""),
		callTurn("run_command", map[string]any{"command": "git status"}, ""),
		textTurn("done"),
	)
	git(t, f.ws, "init", "-q")
	before, err := os.ReadFile(filepath.Join(f.ws, ".git", "config"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.run(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	reqs := mainRequests(f.srv)
	got := responses(reqs[len(reqs)-1])
	want := map[string][]string{
		"write_file": {"error: refused: .git/config is version-control metadata", "error: refused: .git/hooks/pre-commit is version-control metadata"},
		"edit_file":  {"error: refused: src/../.git/config is version-control metadata"},
	}
	if diff := cmp.Diff(map[string][]string{"write_file": got["write_file"], "edit_file": got["edit_file"]}, want); diff != "" {
		t.Errorf("write results (-got +want):\n%s", diff)
	}
	after, _ := os.ReadFile(filepath.Join(f.ws, ".git", "config"))
	if diff := cmp.Diff(string(after), string(before)); diff != "" {
		t.Errorf(".git/config changed (-got +want):\n%s", diff)
	}
	if exists(t, filepath.Join(f.ws, "pwned")) || exists(t, filepath.Join(f.ws, ".git", "hooks", "pre-commit")) {
		t.Error("the planted command ran or the hook was written")
	}
}

// scriptedUser answers approvals in order (Reject once they run out) and records them.
type scriptedUser struct {
	mu      sync.Mutex
	answers []tools.Decision
	asked   []tools.ApprovalRequest
}

func (u *scriptedUser) Approve(_ context.Context, req tools.ApprovalRequest) (tools.Decision, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.asked = append(u.asked, req)
	if len(u.asked) > len(u.answers) {
		return tools.Reject, nil
	}
	return u.answers[len(u.asked)-1], nil
}

// TestAttackAlwaysAllowIsNotAPrefix: "Always allow" on a harmless command does not let its
// hostile extensions through; the question says what is remembered.
func TestAttackAlwaysAllowIsNotAPrefix(t *testing.T) {
	tests := []struct {
		approved, hostile string
		rule              string
	}{
		{"env true", "env sh -c 'touch pwned'", "env true (exactly)"},
		{"find . -name x.go", "find . -name x.go -exec touch pwned \\;", "find . -name x.go (exactly)"},
		{"git diff", "git diff --output=pwned", "git diff (and any arguments)"},
		{"xargs echo", "xargs touch pwned", "xargs echo (exactly)"},
	}
	for _, tt := range tests {
		t.Run(tt.approved, func(t *testing.T) {
			user := &scriptedUser{answers: []tools.Decision{tools.AlwaysAllow}}
			f := newFixture(t, fixtureOpts{approver: user, commands: cmdpolicy.New(nil, nil)},
				callTurn("run_command", map[string]any{"command": tt.approved}, ""),
				callTurn("run_command", map[string]any{"command": tt.hostile}, ""),
				textTurn("done"),
			)
			if _, err := f.run(t.Context(), "go"); err != nil {
				t.Fatal(err)
			}
			reqs := mainRequests(f.srv)
			got := responses(reqs[len(reqs)-1])["run_command"]
			if len(got) != 2 {
				t.Fatalf("run_command results: %q", got)
			}
			contains(t, got[1], "refused by policy: "+tt.hostile)
			if exists(t, filepath.Join(f.ws, "pwned")) {
				t.Errorf("%q ran after Always allow on %q", tt.hostile, tt.approved)
			}
			if len(user.asked) != 2 {
				t.Fatalf("asked %d times, want 2: %+v", len(user.asked), user.asked)
			}
			if user.asked[0].Rule != tt.rule {
				t.Errorf("the question said Always allow remembers %q, want %q", user.asked[0].Rule, tt.rule)
			}
		})
	}
}
