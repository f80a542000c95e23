package agent

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-dev/reprise/agent/cmdpolicy"
	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/contextwin"
)

var sig = base64.StdEncoding.EncodeToString([]byte("sig-1"))

func TestFullTurnWithTools(t *testing.T) {
	for _, stream := range []bool{true, false} {
		t.Run(map[bool]string{true: "stream", false: "unary"}[stream], func(t *testing.T) {
			f := newFixture(t, fixtureOpts{stream: stream, files: map[string]string{"calc.go": "package calc\n\nfunc Add(a, b int) int { return a - b }\n"}},
				geminitest.Turn{Parts: []geminitest.Part{
					{Text: "Look at the file.", Thought: true},
					{Text: "Reading calc.go."},
					{FunctionCall: &geminitest.FunctionCall{Name: "read_file", Args: map[string]any{"path": "calc.go"}}, ThoughtSignature: sig},
				}, Chunks: 3},
				callTurn("edit_file", map[string]any{"path": "calc.go", "old": "return a - b", "new": "return a + b"}, ""),
				geminitest.Turn{Parts: []geminitest.Part{{Text: "Fixed: Add now adds."}}, Chunks: 2},
			)
			evs, err := f.run(t.Context(), "Fix Add in calc.go")
			if err != nil {
				t.Fatal(err)
			}
			end := lastEnd(t, evs)
			if end.StopReason != StopEndTurn || end.Calls != 3 {
				t.Errorf("end = %+v, want end_turn after 3 calls", end)
			}
			data, _ := os.ReadFile(filepath.Join(f.ws, "calc.go"))
			contains(t, string(data), "return a + b")
			var text, thought strings.Builder
			for _, e := range evs {
				switch e.Type {
				case EventText:
					text.WriteString(e.Text)
				case EventThought:
					thought.WriteString(e.Text)
				}
			}
			if got, want := text.String(), "Reading calc.go.Fixed: Add now adds."; got != want {
				t.Errorf("streamed text = %q, want %q", got, want)
			}
			if thought.String() != "Look at the file." {
				t.Errorf("streamed thought = %q", thought.String())
			}
			calls := ofType(evs, EventToolCall)
			updates := ofType(evs, EventToolUpdate)
			if len(calls) != 2 || len(updates) != 2 || updates[1].Tool.Status != ToolCompleted || calls[0].Tool.Kind != "read" {
				t.Errorf("tool events: calls %+v, updates %+v", calls, updates)
			}
			// The second request sends the model's call back with its signature.
			reqs := mainRequests(f.srv)
			if len(reqs) != 3 {
				t.Fatalf("%d model requests, want 3", len(reqs))
			}
			var gotSig []byte
			for _, p := range reqs[1].Contents[1].Parts {
				if p.FunctionCall != nil {
					gotSig = p.ThoughtSignature
				}
			}
			if string(gotSig) != "sig-1" {
				t.Errorf("signature sent back = %q, want sig-1", gotSig)
			}
			contains(t, responses(reqs[1])["read_file"][0], "return a - b")
			// Totals are the sum of what the model reported.
			var sum int
			for _, e := range ofType(evs, EventModelCall) {
				sum += e.Call.Prompt
			}
			if end.Totals.InputTokens != sum || sum == 0 {
				t.Errorf("totals input %d, want the sum of reported prompts %d", end.Totals.InputTokens, sum)
			}
			if got := f.s.files.State().FilesModified; !cmp.Equal(got, []string{"calc.go"}) {
				t.Errorf("files modified = %v, want [calc.go]", got)
			}
			u := ofType(evs, EventUsage)
			// After the last reply the figure is the model's own: prompt + candidates.
			if last := ofType(evs, EventModelCall); len(u) < 4 || u[len(u)-1].Usage.Source != "usage" || u[len(u)-1].Usage.Used != last[len(last)-1].Call.Prompt+last[len(last)-1].Call.Output {
				t.Errorf("usage events: %d, last %+v", len(u), u[len(u)-1].Usage)
			}
		})
	}
}

func TestRetriesThenSucceeds(t *testing.T) {
	f := newFixture(t, fixtureOpts{stream: true},
		geminitest.Turn{Fault: &geminitest.Fault{Status: 429, Message: "quota", RetryDelay: "0.002s"}},
		geminitest.Turn{Parts: []geminitest.Part{{Text: "partial text that will be discarded"}}, Chunks: 3, Fault: &geminitest.Fault{Status: 500, AfterEvents: 1}},
		textTurn("done"),
	)
	evs, err := f.run(t.Context(), "hello")
	if err != nil {
		t.Fatal(err)
	}
	retries := ofType(evs, EventRetry)
	if len(retries) != 2 || retries[0].Retry.Discard || !retries[1].Retry.Discard {
		t.Fatalf("retries = %+v, want a 429 retry then a discarding one", retries)
	}
	if got := ofType(evs, EventModelCall)[0].Call.Attempts; got != 3 {
		t.Errorf("attempts = %d, want 3", got)
	}
	if end := lastEnd(t, evs); end.StopReason != StopEndTurn {
		t.Errorf("stop = %s", end.StopReason)
	}
}

func TestModelErrorEndsTurn(t *testing.T) {
	f := newFixture(t, fixtureOpts{}, geminitest.Turn{Fault: &geminitest.Fault{Status: 400, Message: "contents are invalid"}})
	evs, err := f.run(t.Context(), "hello")
	if err == nil || !strings.Contains(err.Error(), "contents are invalid") {
		t.Fatalf("err = %v, want the 400's message", err)
	}
	end := lastEnd(t, evs)
	if end.StopReason != StopError || !strings.Contains(end.Err, "400") {
		t.Errorf("end = %+v, want error with the status", end)
	}
	// The session is still usable: the user message is kept and a new turn can run.
	f.srv.Append(textTurn("ok now"))
	evs, err = f.run(t.Context(), "again")
	if err != nil || lastEnd(t, evs).StopReason != StopEndTurn {
		t.Errorf("second turn: %v %v", err, types(evs))
	}
}

func TestBadToolCallsBecomeResults(t *testing.T) {
	f := newFixture(t, fixtureOpts{},
		callTurn("read_file", map[string]any{"path": 42}, ""),
		callTurn("delete_everything", map[string]any{}, ""),
		callTurn("read_file", map[string]any{"path": "../outside.txt"}, ""),
		callTurn("run_command", map[string]any{"command": "git diff"}, ""),
		textTurn("giving up"),
	)
	evs, err := f.run(t.Context(), "try things")
	if err != nil {
		t.Fatal(err)
	}
	if end := lastEnd(t, evs); end.StopReason != StopEndTurn {
		t.Fatalf("stop = %s", end.StopReason)
	}
	got := responses(mainRequests(f.srv)[4])
	contains(t, got["read_file"][0], "path")
	contains(t, got["delete_everything"][0], `unknown tool "delete_everything"`)
	contains(t, got["read_file"][1], "outside the workspace")
	contains(t, got["run_command"][0], "refused by policy: git diff")
	for _, u := range ofType(evs, EventToolUpdate) {
		if u.Tool.Status != ToolFailed {
			t.Errorf("tool %s status %s, want failed", u.Tool.Name, u.Tool.Status)
		}
	}
}

func TestMalformedArgsFromTheWire(t *testing.T) {
	f := newFixture(t, fixtureOpts{},
		geminitest.Turn{Parts: []geminitest.Part{{FunctionCall: &geminitest.FunctionCall{Name: "read_file", RawArgs: json.RawMessage(`{"path": ["a", "b"], "limit": "ten"}`)}}}},
		textTurn("ok"),
	)
	evs, err := f.run(t.Context(), "read")
	if err != nil {
		t.Fatal(err)
	}
	if lastEnd(t, evs).StopReason != StopEndTurn {
		t.Fatal(types(evs))
	}
	contains(t, responses(mainRequests(f.srv)[1])["read_file"][0], "error")
}

func TestSessionCap(t *testing.T) {
	p := contextwin.DefaultPolicy()
	p.SessionTokenCap = 1
	f := newFixture(t, fixtureOpts{policy: p}, callTurn("list_files", map[string]any{}, ""), textTurn("never sent"))
	evs, err := f.run(t.Context(), "list")
	if err != nil {
		t.Fatal(err)
	}
	if end := lastEnd(t, evs); end.StopReason != StopCapped || end.Calls != 1 {
		t.Fatalf("end = %+v, want capped after one call", end)
	}
	if f.srv.Pending() != 1 {
		t.Errorf("the call after the cap was made")
	}
	evs, _ = f.run(t.Context(), "more")
	if end := lastEnd(t, evs); end.StopReason != StopCapped || end.Calls != 1 {
		t.Errorf("a capped session ran again: %+v", end)
	}
	if f.s.Context().Status != "capped" {
		t.Errorf("status = %s, want capped", f.s.Context().Status)
	}
}

func TestCancelMidTool(t *testing.T) {
	f := newFixture(t, fixtureOpts{commands: cmdpolicy.New([]string{"sleep"}, nil)}, callTurn("run_command", map[string]any{"command": "sleep 60"}, ""), textTurn("unused"))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var evs []Event
	for ev, err := range f.s.Run(ctx, "run it") {
		if err != nil {
			continue
		}
		evs = append(evs, ev)
		if ev.Type == EventToolCall {
			cancel()
		}
	}
	if end := lastEnd(t, evs); end.StopReason != StopCancelled {
		t.Fatalf("stop = %s, want cancelled", end.StopReason)
	}
	h := f.s.Conversation().History()
	last := h[len(h)-1]
	if len(last.Parts) != 1 || last.Parts[0].FunctionResponse == nil {
		t.Fatalf("the call has no response in the history: %+v", last)
	}
}

func TestCustomInstructionsAndLeanPrompt(t *testing.T) {
	f := newFixture(t, fixtureOpts{files: map[string]string{"AGENTS.md": "Always answer in haiku.\n"}},
		callTurn("list_files", map[string]any{}, ""), textTurn("done"))
	if _, err := f.run(t.Context(), "hi"); err != nil {
		t.Fatal(err)
	}
	reqs := mainRequests(f.srv)
	sys := firstText(reqs[0].SystemInstruction)
	contains(t, sys, "Always answer in haiku.")
	contains(t, sys, f.ws)
	// Byte-stable across calls, for implicit caching.
	a, b := reqs[0].Body, reqs[1].Body
	if sysAndTools(t, a) != sysAndTools(t, b) {
		t.Error("system instruction or tools differ between two calls")
	}
	r := f.s.Context()
	if r.Breakdown.CustomInstructions == 0 || r.Breakdown.Tools == 0 || r.Breakdown.SystemPrompt == 0 {
		t.Errorf("breakdown lacks a fixed part: %+v", r.Breakdown)
	}
	// What every request pays for before any message: under 2,000 tokens (characters/4).
	fixed := contextwin.EstimateText(f.s.conv.prompt.base) + contextwin.EstimateText(f.s.conv.prompt.toolsJSON)
	if fixed >= 2000 {
		t.Errorf("system prompt + tools = %.0f tokens, want < 2000", fixed)
	}
	t.Logf("system prompt + tool declarations: %.0f tokens (chars/4)", fixed)
}

func sysAndTools(t *testing.T, body []byte) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	return string(m["systemInstruction"]) + string(m["tools"])
}

func TestBusy(t *testing.T) {
	f := newFixture(t, fixtureOpts{commands: cmdpolicy.New([]string{"sleep"}, nil)}, callTurn("run_command", map[string]any{"command": "sleep 60"}, ""), textTurn("x"))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	for ev := range f.s.Run(ctx, "one") {
		if ev.Type == EventToolCall {
			_, err := f.run(t.Context(), "two")
			if !errors.Is(err, ErrBusy) {
				t.Errorf("err = %v, want ErrBusy", err)
			}
			cancel()
		}
	}
}

func TestStaleFilesAreAnnounced(t *testing.T) {
	f := newFixture(t, fixtureOpts{files: map[string]string{"a.txt": "one\n", "b.txt": "two\n"}},
		callTurn("read_file", map[string]any{"path": "a.txt"}, ""),
		callTurn("edit_file", map[string]any{"path": "b.txt", "old": "two", "new": "deux"}, ""),
		textTurn("done"),
		callTurn("list_files", map[string]any{}, ""),
		textTurn("done again"),
	)
	if _, err := f.run(t.Context(), "read a, edit b"); err != nil {
		t.Fatal(err)
	}
	// The agent's own edit is no change behind its back; the user's edit of a.txt is.
	f.s.Files().FilesChanged([]string{"b.txt"})
	if f.s.Files().Stale("b.txt") {
		t.Error("the agent's own edit marked b.txt stale")
	}
	if err := os.WriteFile(filepath.Join(f.ws, "a.txt"), []byte("uno\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.s.Files().FilesChanged([]string{"a.txt", "unknown.txt"})
	if !f.s.Files().Stale("a.txt") || f.s.Files().Stale("unknown.txt") {
		t.Fatalf("stale: a.txt %v, unknown.txt %v", f.s.Files().Stale("a.txt"), f.s.Files().Stale("unknown.txt"))
	}
	if _, err := f.run(t.Context(), "go on"); err != nil {
		t.Fatal(err)
	}
	reqs := mainRequests(f.srv)
	var notes int
	for _, r := range reqs[3:] {
		for _, c := range r.Contents {
			for _, p := range c.Parts {
				if strings.Contains(p.Text, "changed on disk after you read them: a.txt.") {
					notes++
				}
			}
		}
	}
	// Told once, and the note stays in the history (so it is in both later requests).
	if notes != 2 {
		t.Errorf("the stale note appears %d times in the later requests, want 2 (one per request)", notes)
	}
	// An earlier request is not rewritten after the fact.
	for _, c := range reqs[2].Contents {
		for _, p := range c.Parts {
			if strings.Contains(p.Text, "changed on disk") {
				t.Error("a request sent before the change carries the note")
			}
		}
	}
}
