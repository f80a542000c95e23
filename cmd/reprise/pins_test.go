package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
)

// TestRunPins: --pin and --pin-text pin before the task runs, and the model's first call holds
// both; a file outside the workspace or a secrets file is a usage error (exit 2) naming it.
func TestRunPins(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "spec.md"), []byte("# Spec\nThe answer is 42.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".env"), []byte("TOKEN=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{{Parts: []geminitest.Part{{Text: "42."}}}}})
	defer srv.Close()
	vars := map[string]string{"GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": srv.URL(), "REPRISE_HOME": t.TempDir(), "REPRISE_CONFIG_HOME": t.TempDir()}
	code, out, errOut := runMain(t, []string{"run", "--workspace", ws, "--pin", "spec.md", "--pin-text", "Answer in one word.", "What is the answer?"}, env(vars))
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	if !strings.Contains(errOut, "reprise: pinned p1 spec.md") || !strings.Contains(errOut, "reprise: pinned p2 Answer in one word.") {
		t.Errorf("stderr does not say what was pinned:\n%s", errOut)
	}
	body := string(srv.Requests()[len(srv.Requests())-1].Body)
	for _, want := range []string{"The answer is 42.", "Answer in one word.", `[Pinned by the user: p1 file spec.md`} {
		if !strings.Contains(body, want) {
			t.Errorf("the model call lacks %q", want)
		}
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--pin", "../elsewhere.txt"}, "reprise run: --pin ../elsewhere.txt: path is outside the workspace"},
		{[]string{"--pin", ".env"}, "reprise run: --pin .env: .env is a secrets file"},
		{[]string{"--pin-text", " "}, `reprise run: --pin-text " ": text is required`},
	} {
		args := append(append([]string{"run", "--workspace", ws}, tt.args...), "task")
		if code, _, errOut := runMain(t, args, env(vars)); code != 2 || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tt.args, code, errOut, tt.want)
		}
	}
}
