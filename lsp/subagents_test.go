package lsp

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/contextwin/catalog"
	"github.com/reprise-dev/reprise/lsp/lsptest"
)

// TestSubagentThroughTheServer: over a real pipe, a task call's subagent streams subagent updates
// under its call (running, each tool, its end with its figures); its command's approval names it;
// its calls are in the usage totals and apart; the history keeps it under its call; its transcript
// is exported through its parent only; the sessions list leaves it out.
func TestSubagentThroughTheServer(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	e := newEnv(t, envOpts{
		files: map[string]string{"a.go": "package a\n"},
		editor: editorApproving(func(msg string) {
			mu.Lock()
			asked = append(asked, msg)
			mu.Unlock()
		}),
	},
		geminitest.Turn{Parts: []geminitest.Part{{FunctionCall: &geminitest.FunctionCall{Name: "task",
			Args: map[string]any{"description": "check things", "prompt": "TASK-S look at a.go and touch a file"}}}}},
		geminitest.Turn{Agent: "TASK-S", Parts: []geminitest.Part{{FunctionCall: &geminitest.FunctionCall{Name: "read_file", Args: map[string]any{"path": "a.go"}}}}},
		geminitest.Turn{Agent: "TASK-S", Parts: []geminitest.Part{{FunctionCall: &geminitest.FunctionCall{Name: "run_command", Args: map[string]any{"command": "touch made-by-subagent.txt"}}}}},
		geminitest.Turn{Agent: "TASK-S", Parts: []geminitest.Part{{Text: "REPORT-S: a.go declares package a"}}},
		text("Done."),
	)
	id := e.ask("Check the package.", "")
	if end := e.turnEnd(id); end.Update.StopReason != StopEndTurn {
		t.Fatalf("turn ended %+v", end.Update)
	}
	subs := e.updates(id, UpdateSubagent)
	calls := e.updates(id, UpdateToolCall)
	if len(subs) < 4 || len(calls) != 1 || calls[0].Title != "Subagent: check things" {
		t.Fatalf("%d subagent updates, tool calls %+v", len(subs), calls)
	}
	first, last := subs[0], subs[len(subs)-1]
	if first.ToolCallID != calls[0].ToolCallID || first.Subagent.Status != "running" || first.Subagent.Parent != id {
		t.Errorf("first subagent update %+v %+v", first, first.Subagent)
	}
	sub, _ := catalog.Builtin().SubagentModel()
	sa := last.Subagent
	if sa.Status != "completed" || sa.Calls != 3 || sa.Model != sub || sa.Totals.InputTokens == 0 || !strings.HasPrefix(sa.Result, "REPORT-S") || !sa.Saved {
		t.Errorf("last subagent update %+v", sa)
	}
	var tools []string
	for _, u := range subs {
		if u.Subagent.Tool != "" {
			tools = append(tools, u.Subagent.Tool)
		}
	}
	if len(tools) != 2 || !strings.Contains(tools[0], "a.go") || !strings.Contains(tools[1], "touch made-by-subagent.txt") {
		t.Errorf("tools told %q", tools)
	}
	mu.Lock()
	if len(asked) != 1 || !strings.HasPrefix(asked[0], "Reprise's subagent «check things» wants to run a command") {
		t.Errorf("approvals %q", asked)
	}
	mu.Unlock()
	us := e.usages(id)
	tot := us[len(us)-1].Totals
	if tot.Subagents == nil || tot.Subagents.Runs != 1 || tot.Subagents.Calls != 3 || !strings.HasPrefix(tot.Subagents.Text, "1 subagent, 3 calls $") {
		t.Errorf("usage totals.subagents %+v", tot.Subagents)
	}

	var h historyResult
	if err := e.ed.Execute(e.ctx, CommandHistory, SessionArgs{SessionID: id}, &h); err != nil {
		t.Fatal(err)
	}
	var kept *subagentUpdate
	for _, en := range h.Entries {
		if en.ToolCallID == calls[0].ToolCallID {
			kept = en.Subagent
		}
	}
	if kept == nil || kept.ID != sa.ID || kept.Status != "completed" || kept.Calls != 3 {
		t.Errorf("history keeps %+v", kept)
	}

	var out exportResult
	if err := e.ed.Execute(e.ctx, CommandExport, ExportArgs{SessionID: id, SubagentID: sa.ID}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.Content, "subagent of session "+id+": «check things»") || !strings.Contains(out.Content, "TASK-S look at a.go") || !strings.Contains(out.Content, "REPORT-S") || strings.Contains(out.Content, "Check the package.") {
		t.Errorf("the subagent's export:\n%s", out.Content)
	}
	code, msg := rpcError(t, e.ed.Execute(e.ctx, CommandExport, ExportArgs{SessionID: sa.ID, SubagentID: id}, nil))
	if code != -32602 {
		t.Errorf("exporting the parent as the subagent's subagent: %d %q", code, msg)
	}
	code, msg = rpcError(t, e.ed.Execute(e.ctx, CommandExport, ExportArgs{SessionID: id, SubagentID: "../x"}, nil))
	if code != -32602 || !strings.Contains(msg, "subagentId") {
		t.Errorf("a bad subagentId: %d %q", code, msg)
	}
	var list []SessionInfo
	if err := e.ed.Execute(e.ctx, CommandSessions, nil, &list); err != nil {
		t.Fatal(err)
	}
	for _, s := range list {
		if s.SessionID == sa.ID {
			t.Errorf("the sessions list shows the subagent %s", sa.ID)
		}
	}
	var cancelled map[string]bool
	if err := e.ed.Execute(e.ctx, CommandCancelSubagent, CancelSubagentArgs{SessionID: id, SubagentID: sa.ID}, &cancelled); err != nil || cancelled["cancelled"] {
		t.Errorf("cancelling an ended subagent: %v, %v", cancelled, err)
	}
	if code, msg := rpcError(t, e.ed.Execute(e.ctx, CommandCancelSubagent, CancelSubagentArgs{SessionID: id}, nil)); code != -32602 || !strings.Contains(msg, "subagentId is required") {
		t.Errorf("no subagentId: %d %q", code, msg)
	}
}

// editorApproving allows every command once and tells each question's message.
func editorApproving(seen func(string)) lsptest.Options {
	o := lsptest.Options{Experimental: true}
	o.Approve = func(raw json.RawMessage) any {
		var p struct {
			Message string `json:"message"`
		}
		json.Unmarshal(raw, &p)
		seen(p.Message)
		return map[string]string{"title": ActionAllowOnce}
	}
	return o
}

// TestVerdictOfAFailingTestRun: a command whose output says its tests failed carries that verdict
// in its rawOutput and in the history, so that an editor shows "exit 1 · FAIL …", not a broken
// tool.
func TestVerdictOfAFailingTestRun(t *testing.T) {
	e := newEnv(t, envOpts{editor: editorApproving(func(string) {})},
		geminitest.Turn{Parts: []geminitest.Part{{FunctionCall: &geminitest.FunctionCall{Name: "run_command",
			Args: map[string]any{"command": "printf -- '--- FAIL: TestX (0.00s)\\nFAIL\\texample.com/x\\t0.012s\\n'; exit 1"}}}}},
		text("The test fails."),
	)
	id := e.ask("Run the tests.", "")
	e.turnEnd(id)
	var final *toolOutput
	for _, u := range e.updates(id, UpdateToolCallUpdate) {
		if u.RawOutput != nil {
			final = u.RawOutput
		}
	}
	if final == nil || final.Verdict != "FAIL example.com/x 0.012s" || !strings.HasSuffix(strings.TrimSpace(final.Output), "exit status 1") {
		t.Fatalf("rawOutput %+v", final)
	}
	var h historyResult
	if err := e.ed.Execute(e.ctx, CommandHistory, SessionArgs{SessionID: id}, &h); err != nil {
		t.Fatal(err)
	}
	for _, en := range h.Entries {
		if en.Kind == "tool" && en.Verdict != final.Verdict {
			t.Errorf("history verdict %q, want %q", en.Verdict, final.Verdict)
		}
	}
}
