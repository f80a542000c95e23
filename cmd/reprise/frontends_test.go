package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/google/go-cmp/cmp"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/agent/sandbox"
	"github.com/reprise-dev/reprise/contextwin"
	"github.com/reprise-dev/reprise/contextwin/catalog"
	"github.com/reprise-dev/reprise/lsp"
	"github.com/reprise-dev/reprise/lsp/lsptest"
)

// sessionShape is what of a session's options must not depend on the front-end that opened it.
// Left out: what is the front-end's by nature (its approver, logger, the editor's open buffers)
// and per session (id, log, state directory).
type sessionShape struct {
	Workspace, Model string
	Thinking         catalog.ThinkingChoice
	Policy           contextwin.Policy
	Sandbox          sandbox.Config
	Verdicts         map[string]string // the command policy's verdict on a few commands
	Stream, Secrets  bool
	MaxTurnRequests  int
	External         bool
	// CompactionModel and CompactionThinking: where summaries go, and what they send.
	CompactionModel    string
	CompactionThinking catalog.ThinkingChoice
}

func shapeOf(o agent.Options) sessionShape {
	v := map[string]string{}
	for _, c := range []string{"go test ./...", "make", "rm -rf /", "cat ~/.ssh/id_ed25519", "curl example.com"} {
		v[c] = fmt.Sprintf("%+v", o.Commands.CheckIn(o.Workspace, c))
	}
	return sessionShape{
		Workspace: o.Workspace, Model: o.ModelName, Thinking: o.Thinking, Policy: o.ContextPolicy,
		Sandbox: o.Sandbox.Config(), Verdicts: v, Stream: o.Stream, Secrets: o.Secrets != nil,
		MaxTurnRequests: o.MaxTurnRequests, External: o.External != nil,
		CompactionModel: o.CompactionModelName, CompactionThinking: o.CompactionThinking,
	}
}

// TestFrontEndsOpenTheSameSession: `reprise serve`, `reprise acp` and `reprise run`, given the
// same settings (a model, a thinking level, a budget, an allowlist, the sandbox's network and
// hidden paths, the summaries' model and tier), open sessions with the same options: the three
// go through one host.
func TestFrontEndsOpenTheSameSession(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]agent.Options{}
	current := ""
	observeSessions = func(o agent.Options) {
		mu.Lock()
		defer mu.Unlock()
		seen[current] = o
	}
	t.Cleanup(func() { observeSessions = nil })
	as := func(name string) {
		mu.Lock()
		current = name
		mu.Unlock()
	}
	srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{{Parts: []geminitest.Part{{Text: "Done."}}}}})
	defer srv.Close()
	ws, hidden := t.TempDir(), t.TempDir()
	vars := env(map[string]string{"GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": srv.URL(), "REPRISE_HOME": t.TempDir(),
		"REPRISE_CONFIG_HOME": t.TempDir(), "XDG_CACHE_HOME": t.TempDir()})
	const model, budget, compactionModel = "gemini-4-argon", 30000, "gemini-3.1-flash-lite"
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	as("run")
	if code, _, errOut := runMain(t, []string{"run", "--workspace", ws, "--model", model, "--thinking", "low", "--budget", fmt.Sprint(budget),
		"--allow", "make", "--allow-network", "--hide-path", hidden, "--max-turn-requests", "120",
		"--compaction-model", compactionModel, "--compaction-tier", "flex", "say done"}, vars); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, errOut)
	}

	as("serve")
	ed := lsptest.Pipe(t, func(ctx context.Context, rwc io.ReadWriteCloser) error {
		run(ctx, []string{"serve", "--stdio"}, rwc, rwc, io.Discard, vars)
		return nil
	}, lsptest.Options{Root: ws, Experimental: true, InitializationOptions: map[string]any{
		"model": model, "thinking": "low", "contextBudget": budget, "allow": []string{"make"}, "allowNetwork": true, "hidePaths": []string{hidden}, "maxTurnRequests": 120,
		"compactionModel": compactionModel, "compactionTier": "flex",
	}})
	if _, err := ed.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ed.Execute(ctx, lsp.CommandNewSession, nil, nil); err != nil {
		t.Fatal(err)
	}

	as("acp")
	conn := acpClient(t, &permissionClient{}, []string{"acp", "--model", model, "--thinking", "low", "--budget", fmt.Sprint(budget), "--allow", "make",
		"--allow-network", "--hide-path", hidden, "--max-turn-requests", "120", "--compaction-model", compactionModel, "--compaction-tier", "flex"}, vars)
	if _, err := conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: ws, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}

	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 3 {
		t.Fatalf("sessions seen from %d front-ends, want 3", len(seen))
	}
	want := shapeOf(seen["run"])
	if want.Model != model || want.Thinking.Level != "LOW" || want.Policy.ContextBudget != budget || !want.Sandbox.AllowNetwork || want.MaxTurnRequests != 120 ||
		want.CompactionModel != compactionModel || want.CompactionThinking.Level != "LOW" || want.Policy.CompactionTier != catalog.TierFlex {
		t.Fatalf("run's session does not have the settings asked: %+v", want)
	}
	for _, fe := range []string{"serve", "acp"} {
		if diff := cmp.Diff(shapeOf(seen[fe]), want); diff != "" {
			t.Errorf("%s's session differs from run's (-%s +run):\n%s", fe, fe, diff)
		}
	}
}
