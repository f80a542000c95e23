package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/google/go-cmp/cmp"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/lsp"
	"github.com/reprise-dev/reprise/lsp/lsptest"
)

// eventLine is what of an event must not depend on the front-end that is told it: its kind and
// what it says, without ids or times.
func eventLine(ev agent.Event) string {
	switch ev.Type {
	case agent.EventUsage:
		u := ev.Usage
		return fmt.Sprintf("usage %d/%d tokens, %d in %d cached, compact at %.2f", u.Used, u.Size, u.Totals.InputTokens, u.Totals.CachedTokens, u.CompactAt)
	case agent.EventPins:
		var labels []string
		for _, p := range ev.Pins {
			labels = append(labels, fmt.Sprintf("%s %s %d", p.ID, p.Label, p.Tokens))
		}
		return "pins " + strings.Join(labels, ", ")
	case agent.EventToolCall:
		return fmt.Sprintf("tool call %s %v", ev.Tool.Name, ev.Tool.Args)
	case agent.EventToolUpdate:
		if ev.Tool.Live != nil {
			return "" // a running command's output so far: as often as the clock says
		}
		return fmt.Sprintf("tool update %s %s, %d bytes", ev.Tool.Name, ev.Tool.Status, len(ev.Tool.Output))
	case agent.EventModelCall:
		return fmt.Sprintf("model call: prompt %d, cached %d", ev.Call.Prompt, ev.Call.Cached)
	case agent.EventTurnEnd:
		return fmt.Sprintf("turn end %s after %d calls", ev.End.StopReason, ev.End.Calls)
	case agent.EventCompaction:
		return fmt.Sprintf("compaction %s", ev.Compaction.State)
	}
	return fmt.Sprintf("%s %q", ev.Type, ev.Text)
}

// TestFrontEndsTellTheSameEvents: the same sequence (open a session, pin a file, run a turn that
// reads a file and answers) over `reprise serve`, `reprise acp` and `reprise run` tells the
// front-ends the same events, in the same order: the three stand on one runner, whose verbs and
// turns tell what happens, and none of them makes up or re-reads its own.
func TestFrontEndsTellTheSameEvents(t *testing.T) {
	var mu sync.Mutex
	told := map[string][]string{}
	current := ""
	observeEvents = func(_ string, ev agent.Event) {
		mu.Lock()
		defer mu.Unlock()
		if line := eventLine(ev); line != "" {
			told[current] = append(told[current], line)
		}
	}
	t.Cleanup(func() { observeEvents = nil })
	as := func(name string) {
		mu.Lock()
		current = name
		mu.Unlock()
	}
	turn := []geminitest.Turn{
		{Parts: []geminitest.Part{{FunctionCall: &geminitest.FunctionCall{Name: "read_file", Args: map[string]any{"path": "main.go"}}}}},
		{Parts: []geminitest.Part{{Text: "main.go prints hello; "}, {Text: "the notes agree."}}},
	}
	srv := geminitest.New(geminitest.Script{})
	defer srv.Close()
	ws := t.TempDir()
	for name, text := range map[string]string{
		"main.go":  "package main\n\nfunc main() { println(\"hello\") }\n",
		"notes.md": strings.Repeat("The program must print hello and nothing else.\n", 20),
	} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	vars := env(map[string]string{"GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": srv.URL(), "REPRISE_HOME": t.TempDir(),
		"REPRISE_CONFIG_HOME": t.TempDir(), "XDG_CACHE_HOME": t.TempDir()})
	const task = "what does main.go print?"
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	as("run")
	srv.Append(turn...)
	if code, _, errOut := runMain(t, []string{"run", "--workspace", ws, "--pin", "notes.md", task}, vars); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, errOut)
	}

	as("serve")
	srv.Append(turn...)
	ed := lsptest.Pipe(t, func(ctx context.Context, rwc io.ReadWriteCloser) error {
		run(ctx, []string{"serve", "--stdio"}, rwc, rwc, io.Discard, vars)
		return nil
	}, lsptest.Options{Root: ws, Experimental: true})
	if _, err := ed.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	var opened lsp.SessionResult
	if err := ed.Execute(ctx, lsp.CommandNewSession, nil, &opened); err != nil {
		t.Fatal(err)
	}
	if err := ed.Execute(ctx, lsp.CommandPin, map[string]any{"sessionId": opened.SessionID, "kind": "file", "path": "notes.md"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := ed.Execute(ctx, lsp.CommandAsk, map[string]any{"sessionId": opened.SessionID, "text": task}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ed.AwaitTurnEnd(ctx, opened.SessionID); err != nil {
		t.Fatal(err)
	}

	as("acp")
	srv.Append(turn...)
	conn := acpClient(t, &permissionClient{}, []string{"acp"}, vars)
	if _, err := conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	s, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: ws, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"/pin notes.md", task} {
		if _, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}}); err != nil {
			t.Fatal(err)
		}
	}

	mu.Lock()
	defer mu.Unlock()
	want := told["run"]
	t.Logf("told:\n%s", strings.Join(want, "\n"))
	// What the sequence must tell, whichever front-end: the session's usage as it opens, the pin,
	// the usage after it, the turn's read and answer, and its end.
	for _, line := range []string{"pins p1 notes.md", "tool call read_file map[path:main.go]", "tool update read_file completed",
		`agent_message_chunk "main.go prints hello; "`, "turn end end_turn after 2 calls"} {
		if !strings.Contains(strings.Join(want, "\n"), line) {
			t.Fatalf("run was not told %q:\n%s", line, strings.Join(want, "\n"))
		}
	}
	for _, fe := range []string{"serve", "acp"} {
		if diff := cmp.Diff(told[fe], want); diff != "" {
			t.Errorf("%s was told other events than run (-%s +run):\n%s", fe, fe, diff)
		}
	}
}
