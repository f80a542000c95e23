//go:build unix

package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-dev/reprise/agent/cmdpolicy"
	"github.com/reprise-dev/reprise/agent/secret"
)

// The tests of run_command through sh: the shell of every OS but Windows.

func TestRunCommand(t *testing.T) {
	ws := workspace(t, map[string]string{"a.txt": "hello\n"})
	realWS, err := filepath.EvalSymlinks(ws)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("GEMINI_API_KEY", "sekret")
	t.Setenv("REPRISE_TEST_VISIBLE", "visible")
	env := &Env{Workspace: ws, Commands: &cmdpolicy.Policy{AllowAll: true}}
	type want struct {
		Output   string
		IsError  bool
		ExitCode int
	}
	tests := []struct {
		command string
		want    want
	}{
		{"echo hi", want{"hi\nexit status 0", false, 0}},
		{"exit 3", want{"exit status 3", true, 3}},
		{"echo out; echo err >&2; exit 1", want{"out\nerr\nexit status 1", true, 1}},
		{"printf 'no newline'", want{"no newline\nexit status 0", false, 0}},
		{"cat a.txt", want{"hello\nexit status 0", false, 0}},
		{"pwd", want{realWS + "\nexit status 0", false, 0}},
		{"cat", want{"exit status 0", false, 0}}, // stdin is /dev/null: no wait for input
		{`echo "${GEMINI_API_KEY:-hidden} $REPRISE_TEST_VISIBLE"`, want{"hidden visible\nexit status 0", false, 0}},
		{"kill -SEGV $$", want{"killed by signal segmentation fault", true, -1}},
		{"sleep 100 & echo started", want{"started\nexit status 0", false, 0}}, // the background sleep holds the pipe: killed
	}
	for _, tt := range tests {
		t.Run(tt.command, func(t *testing.T) {
			r := runCmd(t, env, tt.command)
			if diff := cmp.Diff(want{r.Output, r.IsError, r.ExitCode}, tt.want); diff != "" {
				t.Errorf("(-got +want):\n%s", diff)
			}
			if r.Command != tt.command || r.Refused || r.TimedOut {
				t.Errorf("Command %q, Refused %v, TimedOut %v", r.Command, r.Refused, r.TimedOut)
			}
		})
	}
}

// TestRunCommandFlood checks that a huge output comes back bounded, saved up to MaxSavedBytes,
// with the saved file named in the output.
func TestRunCommandFlood(t *testing.T) {
	ws := workspace(t, nil)
	spill := filepath.Join(t.TempDir(), "tool-outputs")
	env := &Env{Workspace: ws, SpillDir: spill, MaxSavedBytes: 1 << 20, Commands: &cmdpolicy.Policy{AllowAll: true}}
	r := runCmd(t, env, "yes | head -c 50000000")
	if r.SavedPath == "" {
		t.Fatalf("not saved: %q", r.Output)
	}
	fi, err := os.Stat(r.SavedPath)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() != 1<<20 || fi.Mode().Perm() != 0o600 {
		t.Errorf("saved file: %d bytes, mode %v; want %d, 0600", fi.Size(), fi.Mode().Perm(), 1<<20)
	}
	if !strings.HasPrefix(filepath.Base(r.SavedPath), "run_command-call-1-") || filepath.Dir(r.SavedPath) != spill {
		t.Errorf("saved as %s", r.SavedPath)
	}
	first, rest, _ := strings.Cut(r.Output, "\n")
	wantFirst := fmt.Sprintf("[output of 50,000,000 bytes; its first 1,048,576 bytes saved to %s; read_file or search it]", r.SavedPath)
	if first != wantFirst {
		t.Errorf("first line %q, want %q", first, wantFirst)
	}
	preview := strings.Repeat("y\n", 800) + "\n[… 49996000 characters omitted …]\n" + strings.Repeat("y\n", 1200)
	if diff := cmp.Diff(rest, preview+"exit status 0"); diff != "" {
		t.Errorf("preview (-got +want):\n%s", diff)
	}
	if r.TotalChars != 50_000_000 || r.Omitted != 50_000_000-4000 {
		t.Errorf("TotalChars %d, Omitted %d", r.TotalChars, r.Omitted)
	}
}

// TestRunCommandSavedOutputsBounded: a command that floods its output at every call fills the session's
// store of saved outputs up to MaxStoreBytes, not further: the next output is only truncated, and
// the model is told why.
func TestRunCommandSavedOutputsBounded(t *testing.T) {
	ws := workspace(t, nil)
	spill := filepath.Join(t.TempDir(), "tool-outputs")
	env := &Env{Workspace: ws, SpillDir: spill, MaxSavedBytes: 1 << 20, MaxStoreBytes: 5 << 19, Commands: &cmdpolicy.Policy{AllowAll: true}}
	var saved int
	for i := range 4 {
		r := runCmd(t, env, "yes | head -c 3000000")
		if r.SavedPath != "" {
			saved++
			continue
		}
		if i < 2 || !strings.Contains(r.Output, "saving it whole failed: the session's saved outputs reached their bound") {
			t.Errorf("call %d: %q", i, r.Output[:min(len(r.Output), 200)])
		}
	}
	var total int64
	entries, _ := os.ReadDir(spill)
	for _, e := range entries {
		info, _ := e.Info()
		total += info.Size()
	}
	if saved != 3 || total > 5<<19 {
		t.Errorf("%d outputs saved, %d bytes in all; want 3 (the last one cut to the room left), at most %d", saved, total, 5<<19)
	}
}

// TestRunCommandSaved checks an output past the threshold but under the cap: saved whole, named
// relative to the workspace when the spill dir is inside it.
func TestRunCommandSaved(t *testing.T) {
	ws := workspace(t, nil)
	env := &Env{Workspace: ws, SpillDir: filepath.Join(ws, ".reprise", "tool-outputs"), Commands: &cmdpolicy.Policy{AllowAll: true}}
	r := runCmd(t, env, "yes 0123456789 | head -c 30000")
	rel, err := filepath.Rel(ws, r.SavedPath)
	if err != nil || !strings.HasPrefix(rel, ".reprise/tool-outputs/run_command-call-1-") {
		t.Fatalf("saved to %q", r.SavedPath)
	}
	if !strings.HasPrefix(r.Output, "[output of 30,000 bytes saved whole to "+rel+"; read_file or search it]\n") {
		t.Errorf("output starts %q", r.Output[:120])
	}
	if fi, err := os.Stat(r.SavedPath); err != nil || fi.Size() != 30000 {
		t.Errorf("saved file: %v, %v", fi, err)
	}
	small := runCmd(t, env, "yes 0123456789 | head -c 20480")
	if small.SavedPath != "" || strings.HasPrefix(small.Output, "[output of") {
		t.Errorf("an output of exactly the threshold was saved: %q", small.SavedPath)
	}
}

// approver is a scripted Approver that records what it is asked.
type approver struct {
	mu       sync.Mutex
	decision Decision
	err      error
	asked    []ApprovalRequest
}

func (a *approver) Approve(ctx context.Context, req ApprovalRequest) (Decision, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, req)
	return a.decision, a.err
}

func TestRunCommandPolicy(t *testing.T) {
	ws := workspace(t, nil)
	refused := func(cmd string) outcome {
		return outcome{Output: "refused by policy: " + cmd, IsError: true, Refused: true}
	}
	ran := func(out string) outcome { return outcome{Output: out} }
	tests := []struct {
		name     string
		approver *approver // nil: no Approver
		commands []string  // run in order against one policy
		want     []outcome
		asked    []ApprovalRequest
	}{
		{
			name:     "operators ask, allowlisted runs without asking",
			approver: &approver{},
			commands: []string{"pwd >/dev/null 2>&1 || true", "ls"},
			want:     []outcome{refused("pwd >/dev/null 2>&1 || true"), ran("exit status 0")},
			asked: []ApprovalRequest{{CallID: "call-1", Command: "pwd >/dev/null 2>&1 || true",
				Reason: "uses shell operators, redirections or substitutions", Rule: "pwd >/dev/null 2>&1 || true (exactly)"}},
		},
		{
			name:     "no approver refuses",
			commands: []string{"git diff"},
			want:     []outcome{refused("git diff")},
		},
		{
			name:     "the user rejects",
			approver: &approver{decision: Reject},
			commands: []string{"git diff"},
			want:     []outcome{refused("git diff")},
			asked:    []ApprovalRequest{{CallID: "call-1", Command: "git diff", Reason: "not in the allowlist", Rule: "git diff (and any arguments)"}},
		},
		{
			name:     "the approver fails",
			approver: &approver{decision: AllowOnce, err: errors.New("editor gone")},
			commands: []string{"echo x"},
			want:     []outcome{refused("echo x")},
			asked:    []ApprovalRequest{{CallID: "call-1", Command: "echo x", Reason: "not in the allowlist", Rule: "echo x (exactly)"}},
		},
		{
			name:     "allow once asks again",
			approver: &approver{decision: AllowOnce},
			commands: []string{"echo once", "echo once"},
			want:     []outcome{ran("once\nexit status 0"), ran("once\nexit status 0")},
			asked: []ApprovalRequest{
				{CallID: "call-1", Command: "echo once", Reason: "not in the allowlist", Rule: "echo once (exactly)"},
				{CallID: "call-1", Command: "echo once", Reason: "not in the allowlist", Rule: "echo once (exactly)"},
			},
		},
		{
			name:     "always allow remembers the exact command",
			approver: &approver{decision: AlwaysAllow},
			commands: []string{"echo always", "echo always", "echo always and more"},
			want:     []outcome{ran("always\nexit status 0"), ran("always\nexit status 0"), ran("always and more\nexit status 0")},
			asked: []ApprovalRequest{
				{CallID: "call-1", Command: "echo always", Reason: "not in the allowlist", Rule: "echo always (exactly)"},
				{CallID: "call-1", Command: "echo always and more", Reason: "not in the allowlist", Rule: "echo always and more (exactly)"},
			},
		},
		{
			name:     "denied never asks",
			approver: &approver{decision: AlwaysAllow},
			commands: []string{"sudo true", "echo ok && git push"},
			want:     []outcome{refused("sudo true"), refused("echo ok && git push")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := &Env{Workspace: ws, Commands: cmdpolicy.New(nil, nil)}
			if tt.approver != nil {
				env.Approver = tt.approver
			}
			var got []outcome
			for _, c := range tt.commands {
				got = append(got, outcomeOf(runCmd(t, env, c)))
			}
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("results (-got +want):\n%s", diff)
			}
			var asked []ApprovalRequest
			if tt.approver != nil {
				asked = tt.approver.asked
			}
			if diff := cmp.Diff(asked, tt.asked); diff != "" {
				t.Errorf("approvals asked (-got +want):\n%s", diff)
			}
		})
	}
}

// TestRunCommandLive: a watched command's output reaches its Live as it ran, secrets redacted
// as in the result, and the result is what an unwatched run returns.
func TestRunCommandLive(t *testing.T) {
	ws := workspace(t, nil)
	key := "live-secret-0123456789"
	env := &Env{Workspace: ws, Commands: &cmdpolicy.Policy{AllowAll: true}, Secrets: secret.New(map[string]string{"TOKEN": key})}
	// The key is printed in two writes: the redaction works on the stream.
	command := "echo before; printf 'live-secret-'; printf '0123456789\\n'; echo after"
	live := NewLive()
	watched := Run(t.Context(), env, Call{ID: "call-1", Name: "run_command", Args: map[string]any{"command": command}, Live: live})
	plain := runCmd(t, env, command)
	if diff := cmp.Diff(watched, plain); diff != "" {
		t.Errorf("a watched run's result differs (-watched +plain):\n%s", diff)
	}
	s := live.Snapshot()
	if want := "before\n[redacted TOKEN]\nafter\n"; s.Tail != want || s.Bytes != int64(len(want)) {
		t.Errorf("tail %q (%d bytes), want %q", s.Tail, s.Bytes, want)
	}
	if !s.Started || s.Began.IsZero() {
		t.Errorf("Started %v, Began %v", s.Started, s.Began)
	}
}

// TestRunCommandLiveNotStarted: a refused command never starts, so a UI shows no running time.
func TestRunCommandLiveNotStarted(t *testing.T) {
	env := &Env{Workspace: workspace(t, nil), Commands: cmdpolicy.New(nil, []string{"rm"})}
	live := NewLive()
	r := Run(t.Context(), env, Call{ID: "call-1", Name: "run_command", Args: map[string]any{"command": "rm -rf x"}, Live: live})
	if !r.Refused {
		t.Fatalf("not refused: %q", r.Output)
	}
	if s := live.Snapshot(); s.Started || s.Bytes != 0 {
		t.Errorf("a refused command's Live: %+v", s)
	}
}
