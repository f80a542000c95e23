package lsp

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.lsp.dev/jsonrpc2"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/contextwin"
	"github.com/reprise-dev/reprise/lsp/lsptest"
)

func TestInitialize(t *testing.T) {
	e := newEnv(t, envOpts{noInit: true})
	// A request before initialize is refused with -32002.
	err := e.ed.Execute(e.ctx, CommandSessions, nil, nil)
	if code, _ := rpcError(t, err); code != int(jsonrpc2.ServerNotInitialized) {
		t.Errorf("before initialize: code %d, want -32002", code)
	}
	raw, err := e.ed.Initialize(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Capabilities struct {
			ExecuteCommandProvider struct {
				Commands []string `json:"commands"`
			} `json:"executeCommandProvider"`
			TextDocumentSync struct {
				OpenClose bool `json:"openClose"`
				Change    int  `json:"change"`
			} `json:"textDocumentSync"`
			Experimental map[string]any `json:"experimental"`
		} `json:"capabilities"`
		ServerInfo struct {
			Name, Version string
		} `json:"serverInfo"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(serverCommands, res.Capabilities.ExecuteCommandProvider.Commands); diff != "" {
		t.Errorf("commands (-want +got):\n%s", diff)
	}
	if !res.Capabilities.TextDocumentSync.OpenClose || res.Capabilities.TextDocumentSync.Change != 1 || res.ServerInfo.Name != "reprise" || res.Capabilities.Experimental[ExperimentalCapability] == nil {
		t.Errorf("capabilities = %+v", res)
	}
	if err := e.ed.Shutdown(e.ctx); err != nil {
		t.Fatal(err)
	}
	if code, err := e.ed.Wait(e.ctx); code != 0 || err != nil {
		t.Errorf("exit after shutdown: %d %v, want 0", code, err)
	}
}

func TestExitWithoutShutdown(t *testing.T) {
	e := newEnv(t, envOpts{})
	if err := e.ed.Notify(e.ctx, "exit", nil); err != nil {
		t.Fatal(err)
	}
	if code, _ := e.ed.Wait(e.ctx); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
}

func TestFullTurnAndUsage(t *testing.T) {
	e := newEnv(t, envOpts{editor: lsptest.Options{Experimental: true}, files: map[string]string{"main.go": "package main\n"}},
		withUsage(call("read_file", map[string]any{"path": "main.go"}), 1200),
		withUsage(call("list_files", map[string]any{}), 1500),
		withUsage(text("main.go holds an empty main package."), 1800),
	)
	id := e.ask("What is in main.go?", "")
	end := e.turnEnd(id)
	if end.Update.StopReason != "end_turn" || end.Update.Turn.Calls != 3 {
		t.Fatalf("turn_end = %+v", end.Update)
	}
	calls, updates := e.updates(id, UpdateToolCall), e.updates(id, UpdateToolCallUpdate)
	if len(calls) != 2 || calls[0].Kind != "read" || calls[0].RawInput["path"] != "main.go" || len(updates) != 2 || updates[0].Status != "completed" || !strings.Contains(updates[0].RawOutput.Output, "package main") {
		t.Errorf("tool calls %+v, updates %+v", calls, updates)
	}
	var answer strings.Builder
	for _, u := range e.updates(id, UpdateMessageChunk) {
		answer.WriteString(u.Content.Text)
	}
	if answer.String() != "main.go holds an empty main package." {
		t.Errorf("streamed answer = %q", answer.String())
	}
	us := e.usages(id)
	if len(us) < 4 {
		t.Fatalf("%d usage notifications, want one per response and tool result", len(us))
	}
	last := us[len(us)-1]
	if last.Totals.InputTokens != 1200+1500+1800 || last.Totals.OutputTokens != 30 || last.Size != 24000 || last.Totals.Cost.Currency != "USD" {
		t.Errorf("last usage = %+v, want input 4500 = the sum of the reported prompts", last)
	}
	if last.Used != 1810 || last.Source != "usage" {
		t.Errorf("last usage used %d (%s), want the model's 1800 + 10", last.Used, last.Source)
	}
	b := last.Breakdown
	if sum := b.SystemPrompt + b.CustomInstructions + b.Tools + b.MCPTools + b.Messages + b.Free + b.Buffer; sum != last.Size {
		t.Errorf("breakdown sums to %d, want %d", sum, last.Size)
	}
	// The context view.
	var ctxRes contextResult
	if err := e.ed.Execute(e.ctx, CommandContext, SessionArgs{SessionID: id}, &ctxRes); err != nil {
		t.Fatal(err)
	}
	if len(ctxRes.Largest) == 0 || !strings.Contains(ctxRes.Text, "System tools") || ctxRes.Calls != 3 {
		t.Errorf("context = %+v", ctxRes)
	}
}

func TestApprovals(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer any
		want   string
	}{
		{"allowed", map[string]string{"title": ActionAllowOnce}, "approved-output"},
		{"rejected", map[string]string{"title": ActionReject}, "refused by policy: echo approved-output"},
		{"no answer", nil, "refused by policy: echo approved-output"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked []json.RawMessage
			e := newEnv(t, envOpts{editor: lsptest.Options{Experimental: true, Approve: func(p json.RawMessage) any {
				asked = append(asked, p)
				return tc.answer
			}}},
				call("run_command", map[string]any{"command": "echo approved-output"}),
				text("done"),
			)
			id := e.ask("run echo", "")
			e.turnEnd(id)
			if len(asked) != 1 {
				t.Fatalf("asked %d times, want 1", len(asked))
			}
			var p struct {
				Message string
				Actions []struct{ Title string }
			}
			json.Unmarshal(asked[0], &p)
			if !strings.Contains(p.Message, "echo approved-output") || len(p.Actions) != 3 || p.Actions[1].Title != ActionAlwaysAllow {
				t.Errorf("showMessageRequest = %s", asked[0])
			}
			reqs := e.srv.Requests()
			if got := requestText(reqs[len(reqs)-1]); !strings.Contains(got, tc.want) {
				t.Errorf("the model got %q, want %q in it", got, tc.want)
			}
		})
	}
}

func TestAlwaysAllowLastsTheSession(t *testing.T) {
	n := 0
	e := newEnv(t, envOpts{editor: lsptest.Options{Experimental: true, Approve: func(json.RawMessage) any {
		n++
		return map[string]string{"title": ActionAlwaysAllow}
	}}},
		call("run_command", map[string]any{"command": "echo one"}),
		call("run_command", map[string]any{"command": "echo one"}), // the exact command: echo is no prefix rule
		text("done"),
	)
	e.turnEnd(e.ask("echo twice", ""))
	if n != 1 {
		t.Errorf("asked %d times, want once", n)
	}
}

func TestTwoSessionsAtOnce(t *testing.T) {
	e := newEnv(t, envOpts{editor: lsptest.Options{Experimental: true, InitializationOptions: map[string]any{"allow": []string{"sleep"}}}},
		geminitest.Turn{Match: "slow task", Parts: []geminitest.Part{{FunctionCall: &geminitest.FunctionCall{Name: "run_command", Args: map[string]any{"command": "sleep 30"}}}}},
		geminitest.Turn{Match: "quick task", Parts: []geminitest.Part{{Text: "quick answer"}}},
	)
	var a, b SessionResult
	if err := e.ed.Execute(e.ctx, CommandNewSession, nil, &a); err != nil {
		t.Fatal(err)
	}
	if err := e.ed.Execute(e.ctx, CommandNewSession, nil, &b); err != nil {
		t.Fatal(err)
	}
	e.ask("slow task", a.SessionID)
	if _, err := e.ed.AwaitNotification(e.ctx, MethodSessionUpdate, func(raw json.RawMessage) bool {
		return strings.Contains(string(raw), `"tool_call"`) && strings.Contains(string(raw), a.SessionID)
	}); err != nil {
		t.Fatal(err)
	}
	e.ask("quick task", b.SessionID)
	if end := e.turnEnd(b.SessionID); end.Update.StopReason != "end_turn" {
		t.Errorf("session b: %+v", end.Update)
	}
	var sessions []SessionInfo
	if err := e.ed.Execute(e.ctx, CommandSessions, nil, &sessions); err != nil {
		t.Fatal(err)
	}
	running := map[string]bool{}
	for _, s := range sessions {
		running[s.SessionID] = s.Running
	}
	if len(sessions) != 2 || !running[a.SessionID] || running[b.SessionID] {
		t.Errorf("sessions = %+v", sessions)
	}
	var cancelled map[string]bool
	if err := e.ed.Execute(e.ctx, CommandCancel, SessionArgs{SessionID: a.SessionID}, &cancelled); err != nil || !cancelled["cancelled"] {
		t.Fatalf("cancel: %v %v", cancelled, err)
	}
	if end := e.turnEnd(a.SessionID); end.Update.StopReason != "cancelled" {
		t.Errorf("session a: %+v", end.Update)
	}
}

func TestCompactWithProgress(t *testing.T) {
	turns := []geminitest.Turn{}
	files := map[string]string{}
	for i := range 5 {
		name := fmt.Sprintf("f%d.txt", i)
		files[name] = strings.Repeat("some file content\n", 100)
		turns = append(turns, call("read_file", map[string]any{"path": name}))
	}
	turns = append(turns, text("listed"), geminitest.Turn{Match: contextwin.SummaryMarker, Parts: []geminitest.Part{{Text: "**Objective:**\nList the files"}}})
	e := newEnv(t, envOpts{editor: lsptest.Options{Experimental: true}, files: files}, turns...)
	id := e.ask("list files five times", "")
	e.turnEnd(id)
	var res compactResult
	if err := e.ed.Execute(e.ctx, CommandCompact, compactArgs{SessionID: id, Focus: "the patterns"}, &res); err != nil {
		t.Fatal(err)
	}
	if res.Checkpoint.N != 1 || res.Checkpoint.Title != "List the files" || res.After >= res.Before {
		t.Errorf("compact = %+v", res)
	}
	var kinds []string
	for _, raw := range e.ed.Notifications("$/progress") {
		var p struct {
			Value map[string]any `json:"value"`
		}
		json.Unmarshal(raw, &p)
		kinds = append(kinds, p.Value["kind"].(string))
		if p.Value["kind"] == "begin" && (p.Value["percentage"] != 0.0 || p.Value["cancellable"] != true) {
			t.Errorf("begin = %s: want percentage 0 present and cancellable", raw)
		}
	}
	if !slices.Equal(kinds, []string{"begin", "report", "end"}) {
		t.Errorf("progress kinds = %v", kinds)
	}
	var cps []CheckpointInfo
	if err := e.ed.Execute(e.ctx, CommandCheckpoints, SessionArgs{SessionID: id}, &cps); err != nil || len(cps) != 1 {
		t.Fatalf("checkpoints: %v %v", cps, err)
	}
	var cp checkpointResult
	if err := e.ed.Execute(e.ctx, CommandCheckpoint, checkpointArgs{SessionID: id, N: 1}, &cp); err != nil || !strings.Contains(cp.Markdown, "# Checkpoint 1: List the files") {
		t.Fatalf("checkpoint: %+v %v", cp, err)
	}
	if u := e.usages(id); u[len(u)-1].Compaction.Count != 1 {
		t.Errorf("usage after compaction: %+v", u[len(u)-1])
	}
}

func TestCancelWithdrawsApproval(t *testing.T) {
	asked := make(chan struct{})
	release := make(chan struct{})
	e := newEnv(t, envOpts{editor: lsptest.Options{Experimental: true, Approve: func(json.RawMessage) any {
		close(asked)
		<-release // the user has not answered yet
		return map[string]string{"title": ActionAllowOnce}
	}}},
		call("run_command", map[string]any{"command": "echo never"}),
		text("unused"),
	)
	defer close(release)
	id := e.ask("run echo", "")
	select {
	case <-asked:
	case <-e.ctx.Done():
		t.Fatal("never asked")
	}
	var res map[string]bool
	if err := e.ed.Execute(e.ctx, CommandCancel, SessionArgs{SessionID: id}, &res); err != nil || !res["cancelled"] {
		t.Fatalf("cancel: %v %v", res, err)
	}
	if end := e.turnEnd(id); end.Update.StopReason != "cancelled" {
		t.Errorf("turn_end = %+v", end.Update)
	}
	if _, err := e.ed.AwaitNotification(e.ctx, "$/cancelRequest", nil); err != nil {
		t.Errorf("the pending approval was not withdrawn: %v", err)
	}
}

func TestConfigurationPulledAndTrace(t *testing.T) {
	e := newEnv(t, envOpts{editor: lsptest.Options{Experimental: true, Settings: map[string]any{"contextBudget": 12000, "keepRecentTurns": 2}}})
	if err := e.ed.Await(e.ctx, "workspace/configuration", func(msgs []lsptest.Message) bool {
		return slices.ContainsFunc(msgs, func(m lsptest.Message) bool { return m.Method == "workspace/configuration" })
	}); err != nil {
		t.Fatal(err)
	}
	// The pulled settings apply to a session created afterwards; wait until they are in force.
	var s SessionResult
	for {
		if err := e.ed.Execute(e.ctx, CommandNewSession, nil, &s); err != nil {
			t.Fatal(err)
		}
		var c contextResult
		if err := e.ed.Execute(e.ctx, CommandContext, SessionArgs{SessionID: s.SessionID}, &c); err != nil {
			t.Fatal(err)
		}
		if c.Size == 12000 {
			break
		}
		if e.ctx.Err() != nil {
			t.Fatalf("pulled settings never applied: size %d", c.Size)
		}
	}
	// With tracing on, the server's log reaches the client.
	e.ed.Notify(e.ctx, "custom/before", nil)
	e.ed.Notify(e.ctx, "$/setTrace", map[string]string{"value": "verbose"})
	e.ed.Notify(e.ctx, "custom/after", nil)
	if _, err := e.ed.AwaitNotification(e.ctx, "window/logMessage", func(r json.RawMessage) bool { return strings.Contains(string(r), "custom/after") }); err != nil {
		t.Error(err)
	}
	for _, r := range e.ed.Notifications("window/logMessage") {
		if strings.Contains(string(r), "custom/before") {
			t.Error("a debug log reached the client before tracing was on")
		}
	}
}

func TestHistoryOfAResumedSession(t *testing.T) {
	e := newEnv(t, envOpts{editor: lsptest.Options{Experimental: true}, files: map[string]string{"a.txt": "alpha\n"}},
		call("read_file", map[string]any{"path": "a.txt"}),
		text("a.txt says alpha."),
	)
	id := e.ask("What does a.txt say?", "")
	e.turnEnd(id)
	var h historyResult
	if err := e.ed.Execute(e.ctx, CommandHistory, SessionArgs{SessionID: id}, &h); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, en := range h.Entries {
		kinds = append(kinds, en.Kind)
	}
	if !slices.Equal(kinds, []string{"user", "tool", "agent", "turn_end"}) || h.Entries[1].Status != "completed" || !strings.Contains(h.Entries[1].Output, "alpha") || h.Entries[2].Text != "a.txt says alpha." {
		t.Errorf("history = %+v", h)
	}
}
