package main

import (
	"strings"
	"testing"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
)

// TestAttackBroadWorkspaceRun: `reprise run` started from ~ (or given / or the home directory)
// gave the model every file of the user, with no question. It is refused before the model is
// reached, --yes included, unless --allow-broad-workspace says the user means it.
func TestAttackBroadWorkspaceRun(t *testing.T) {
	srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{
		{Parts: []geminitest.Part{{Text: "Done."}}},
	}})
	defer srv.Close()
	home := t.TempDir()
	vars := env(map[string]string{"GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": srv.URL(), "REPRISE_HOME": t.TempDir(), "HOME": home})
	for _, tt := range []struct {
		name string
		args []string
		why  string
	}{
		{"root", []string{"--workspace", "/"}, "is the root of the file system"},
		{"root with --yes", []string{"--yes", "--workspace", "/"}, "is the root of the file system"},
		{"home", []string{"--workspace", home}, "is your home directory"},
		{"home with --yes", []string{"--yes", "--workspace", home + "/."}, "is your home directory"},
		{"system directory", []string{"--yes", "--workspace", "/usr"}, "is a system directory"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runMain(t, append(append([]string{"run"}, tt.args...), "list the files"), vars)
			if code != 1 || !strings.Contains(errOut, tt.why) || !strings.Contains(errOut, "--allow-broad-workspace") {
				t.Errorf("exit %d, want 1 and a refusal that says why and how to confirm\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
		})
	}
	t.Run("started from home", func(t *testing.T) {
		t.Chdir(home)
		code, _, errOut := runMain(t, []string{"run", "--yes", "list the files"}, vars)
		if code != 1 || !strings.Contains(errOut, "is your home directory") {
			t.Errorf("exit %d, stderr:\n%s", code, errOut)
		}
	})
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("the model was reached %d times from a refused workspace", n)
	}
	code, out, errOut := runMain(t, []string{"run", "--allow-broad-workspace", "--workspace", home, "list the files"}, vars)
	if code != 0 || !strings.Contains(out, "status completed") {
		t.Errorf("--allow-broad-workspace: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}
