//go:build linux

package agent

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reprise-dev/reprise/agent/gemini"
	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
)

const secretText = "SECRET-7f3a9c-DO-NOT-SEND"

// outsideDir is a directory next to the workspace holding secrets: secret.md and
// .github/copilot-instructions.md.
func outsideDir(t *testing.T) string {
	t.Helper()
	out := t.TempDir()
	for _, name := range []string{"secret.md", ".github/copilot-instructions.md"} {
		p := filepath.Join(out, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(secretText+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestAttackInstructionsSymlinkEnviron: instruction files that are symlinks leading out of the
// workspace (to /proc/self/environ, which holds the API key, or to any file) must not reach the
// model. A real run: what the fake Gemini server received as system instruction is checked.
func TestAttackInstructionsSymlinkEnviron(t *testing.T) {
	t.Setenv("GEMINI_API_KEY", secretText) // for children; /proc/self/environ is the process's start
	environ, err := os.ReadFile("/proc/self/environ")
	if err != nil {
		t.Skip("no /proc/self/environ:", err)
	}
	entries := strings.Split(strings.Trim(string(environ), "\x00"), "\x00")
	tests := []struct {
		name     string
		setup    func(t *testing.T, ws, out string)
		want     []string // in the system instruction
		wantNone []string // nowhere in the system instruction
	}{
		{
			name:     "GEMINI.md to /proc/self/environ",
			setup:    func(t *testing.T, ws, out string) { link(t, "/proc/self/environ", filepath.Join(ws, "GEMINI.md")) },
			wantNone: append([]string{"Instructions from GEMINI.md"}, entries...),
		},
		{
			name: "AGENTS.md to an absolute path outside",
			setup: func(t *testing.T, ws, out string) {
				link(t, filepath.Join(out, "secret.md"), filepath.Join(ws, "AGENTS.md"))
			},
			wantNone: []string{secretText, "Instructions from AGENTS.md"},
		},
		{
			name: "AGENTS.md to a relative path outside",
			setup: func(t *testing.T, ws, out string) {
				rel, _ := filepath.Rel(ws, filepath.Join(out, "secret.md"))
				link(t, rel, filepath.Join(ws, "AGENTS.md"))
			},
			wantNone: []string{secretText},
		},
		{
			name: ".github is a directory outside",
			setup: func(t *testing.T, ws, out string) {
				link(t, filepath.Join(out, ".github"), filepath.Join(ws, ".github"))
			},
			wantNone: []string{secretText, "Instructions from .github"},
		},
		{
			name: ".github/copilot-instructions.md to a file outside",
			setup: func(t *testing.T, ws, out string) {
				link(t, filepath.Join(out, "secret.md"), filepath.Join(ws, ".github", "copilot-instructions.md"))
			},
			wantNone: []string{secretText},
		},
		{
			name: "a symlink to a file inside the workspace is read",
			setup: func(t *testing.T, ws, out string) {
				os.MkdirAll(filepath.Join(ws, "docs"), 0o755)
				os.WriteFile(filepath.Join(ws, "docs", "rules.md"), []byte("Use tabs.\n"), 0o644)
				link(t, "docs/rules.md", filepath.Join(ws, "AGENTS.md"))
				link(t, "../docs/rules.md", filepath.Join(ws, ".github", "copilot-instructions.md"))
			},
			want:     []string{"# Instructions from AGENTS.md\nUse tabs.", "# Instructions from .github/copilot-instructions.md\nUse tabs."},
			wantNone: []string{secretText},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := outsideDir(t)
			f := newFixture(t, fixtureOpts{setup: func(t *testing.T, ws string) { tt.setup(t, ws, out) }}, textTurn("done"))
			if _, err := f.run(t.Context(), "hi"); err != nil {
				t.Fatal(err)
			}
			reqs := mainRequests(f.srv)
			if len(reqs) == 0 {
				t.Fatal("the model got no request")
			}
			sys := firstText(reqs[0].SystemInstruction)
			for _, w := range tt.want {
				contains(t, sys, w)
			}
			var leaked []string
			for _, bad := range tt.wantNone {
				if bad != "" && strings.Contains(sys, bad) {
					leaked = append(leaked, bad)
				}
			}
			if len(leaked) > 0 {
				t.Errorf("the system instruction sent contains %d forbidden strings, first %.80q", len(leaked), leaked[0])
			}
			if bytes.Contains(reqs[0].Body, []byte(secretText)) {
				t.Error("the request body contains the secret")
			}
		})
	}
}

// startAndRun starts a session on ws and runs one turn against a fake Gemini server, returning
// the system instruction the server received. No t.Fatal: it runs in a goroutine.
func startAndRun(ctx context.Context, ws string, log *slog.Logger) (string, error) {
	srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{textTurn("done")}})
	defer srv.Close()
	client, err := gemini.New(ctx, gemini.Config{APIKey: "test-key", BaseURL: srv.URL(), BaseDelay: time.Millisecond})
	if err != nil {
		return "", err
	}
	s, err := New(Options{Workspace: ws, Model: client, ModelName: client.Model(), Config: Config{Logger: log}})
	if err != nil {
		return "", err
	}
	defer s.Close()
	for _, err := range s.Run(ctx, "hi") {
		if err != nil {
			return "", err
		}
	}
	reqs := mainRequests(srv)
	if len(reqs) == 0 {
		return "", fmt.Errorf("the model got no request")
	}
	return firstText(reqs[0].SystemInstruction), nil
}

// notHanging runs startAndRun in a goroutine and fails, instead of hanging the test binary, if
// it has not returned within a generous deadline.
func notHanging(t *testing.T, ws string, log *slog.Logger) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	type result struct {
		sys string
		err error
	}
	done := make(chan result, 1)
	go func() { // ends when the run returns; a hang is reported below and left to the binary's end
		sys, err := startAndRun(ctx, ws, log)
		done <- result{sys, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r.sys
	case <-ctx.Done():
		t.Fatal("starting a session and running a turn hung")
		return ""
	}
}

// TestAttackInstructionsDevZero: an endless instructions file — a symlink to /dev/zero, or a huge
// regular file inside the workspace — neither kills the process nor is read past the bound.
func TestAttackInstructionsDevZero(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, ws string)
		want  string
	}{
		{
			name:  "AGENTS.md to /dev/zero",
			setup: func(t *testing.T, ws string) { link(t, "/dev/zero", filepath.Join(ws, "AGENTS.md")) },
		},
		{
			name: "AGENTS.md of 8 GiB",
			setup: func(t *testing.T, ws string) {
				f, err := os.Create(filepath.Join(ws, "AGENTS.md"))
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				f.WriteString(strings.Repeat("Keep functions short.\n", 1000))
				if err := f.Truncate(8 << 30); err != nil { // sparse: no disk used
					t.Fatal(err)
				}
			},
			want: "AGENTS.md is longer than 16 KiB: the rest was not read]",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := t.TempDir()
			tt.setup(t, ws)
			sys := notHanging(t, ws, nil)
			if tt.want == "" {
				if strings.Contains(sys, "Instructions from AGENTS.md") {
					t.Errorf("instructions were read: %.200q", sys)
				}
				return
			}
			contains(t, sys, tt.want)
			_, instr, _ := strings.Cut(sys, "# Instructions from AGENTS.md\n")
			if len(instr) > maxInstructionBytes+100 {
				t.Errorf("instructions of %d bytes reached the model, want at most %d", len(instr), maxInstructionBytes)
			}
		})
	}
}

// TestAttackInstructionsFIFO: a FIFO as instructions file would block the reader forever; it is
// skipped with a log line, and the regular files are still read.
func TestAttackInstructionsFIFO(t *testing.T) {
	ws := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(ws, "AGENTS.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(ws, "GEMINI.md"), []byte("Answer briefly.\n"), 0o644)
	var logs bytes.Buffer
	sys := notHanging(t, ws, slog.New(slog.NewTextHandler(&logs, nil)))
	if strings.Contains(sys, "Instructions from AGENTS.md") {
		t.Error("the FIFO was read as instructions")
	}
	contains(t, sys, "# Instructions from GEMINI.md\nAnswer briefly.")
	contains(t, logs.String(), "custom instructions skipped")
	contains(t, logs.String(), "file=AGENTS.md")
	contains(t, logs.String(), "not a regular file")
}
