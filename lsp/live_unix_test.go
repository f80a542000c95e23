//go:build unix

package lsp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/tools"
	"github.com/reprise-dev/reprise/lsp/lsptest"
)

// A command under test waits for the file "go" in the workspace, which the test creates once it
// saw what it waits for: nothing sleeps.
const waitForGo = "while [ ! -f go ]; do sleep 0.05; done"

func allowOnce(json.RawMessage) any { return map[string]string{"title": ActionAllowOnce} }

// release creates "go" once a notification matches, failing the test if none comes.
func (e *env) release(method string, match func(raw json.RawMessage) bool) json.RawMessage {
	e.t.Helper()
	raw, err := e.ed.AwaitNotification(e.ctx, method, match)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.ws, "go"), nil, 0o644); err != nil {
		e.t.Fatal(err)
	}
	return raw
}

// liveCount counts the notifications holding a live update, so a test can wait for the nth.
func liveCount(e *env) int {
	n := 0
	for _, raw := range e.ed.Notifications(MethodSessionUpdate) {
		if strings.Contains(string(raw), `"live":`) {
			n++
		}
	}
	return n
}

// TestLiveToolCallUpdate: while a command runs, the editor gets tool_call_update in_progress
// with live: {tail, bytes, elapsedMs} and nothing else of a result; the final update has the
// rawOutput and no live.
func TestLiveToolCallUpdate(t *testing.T) {
	command := "for i in 1 2; do echo tick-$i; done; " + waitForGo + "; echo tick-3"
	e := newEnv(t, envOpts{editor: lsptest.Options{Experimental: true, Approve: allowOnce}},
		call("run_command", map[string]any{"command": command, "timeout_s": 60}), text("done"))
	id := e.ask("tick", "")
	raw := e.release(MethodSessionUpdate, func(raw json.RawMessage) bool { return strings.Contains(string(raw), `tick-2\n`) })
	e.turnEnd(id)
	var wire struct {
		Update map[string]json.RawMessage `json:"update"`
	}
	if err := json.Unmarshal(raw, &wire); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"rawOutput", "content", "rawInput"} {
		if _, ok := wire.Update[k]; ok {
			t.Errorf("a live update has %s: %s", k, raw)
		}
	}
	var live []update
	var final *update
	for _, u := range e.updates(id, UpdateToolCallUpdate) {
		if u.Live != nil {
			live = append(live, u)
		} else {
			final = &u
		}
	}
	last := live[len(live)-1]
	if last.Status != ToolStatusInProgress || !strings.HasPrefix(last.Title, "Run for i in 1 2") || last.Kind != ToolKindExecute || !strings.HasPrefix(last.Live.Tail, "tick-1\ntick-2\n") || last.Live.ElapsedMs < 0 {
		t.Errorf("live update %+v, live %+v", last, last.Live)
	}
	if final == nil || final.Status != ToolStatusCompleted || final.RawOutput == nil || final.RawOutput.Output != "tick-1\ntick-2\ntick-3\nexit status 0" {
		t.Errorf("final update %+v", final)
	}
}

// TestLiveFloodOnTheWire: a command printing megabytes costs the editor a few bounded messages a
// second.
func TestLiveFloodOnTheWire(t *testing.T) {
	command := "while [ ! -f go ]; do yes flood-line | head -c 1000000; done"
	e := newEnv(t, envOpts{editor: lsptest.Options{Experimental: true, Approve: allowOnce}},
		call("run_command", map[string]any{"command": command, "timeout_s": 60}), text("done"))
	id := e.ask("flood", "")
	e.release(MethodSessionUpdate, func(json.RawMessage) bool { return liveCount(e) >= 3 })
	e.turnEnd(id)
	var count int
	var last *liveOutput
	for _, raw := range e.ed.Notifications(MethodSessionUpdate) {
		var p sessionUpdateParams
		if json.Unmarshal(raw, &p) != nil || p.Update.Live == nil {
			continue
		}
		// The tail of this output needs no escaping but its newlines: the message is the tail
		// and a few hundred bytes.
		if len(raw) > tools.LiveTailBytes+tools.LiveTailLines+512 {
			t.Errorf("a live update of %d bytes", len(raw))
		}
		count++
		last = p.Update.Live
	}
	gap := agent.LiveInterval.Milliseconds() * 9 / 10 // the least gap between two, as the agent measures it
	if most := int(last.ElapsedMs/gap) + 1; count > most {
		t.Errorf("%d live updates in %d ms, want at most %d", count, last.ElapsedMs, most)
	}
	t.Logf("%d live updates for %d bytes in %d ms", count, last.Bytes, last.ElapsedMs)
}

// TestLivePlainClient: a client without the experimental capability sees a running command on
// its progress meter, by message only, and the meter as before once it ends.
func TestLivePlainClient(t *testing.T) {
	command := "echo started; " + waitForGo + "; echo done"
	e := newEnv(t, envOpts{editor: lsptest.Options{Approve: allowOnce}},
		call("run_command", map[string]any{"command": command, "timeout_s": 60}), text("Ran it."))
	e.ask("run", "")
	reports := func() []string {
		var out []string
		for _, raw := range e.ed.Notifications("$/progress") {
			var p struct {
				Value struct{ Kind, Message string }
			}
			if json.Unmarshal(raw, &p) == nil && p.Value.Kind == "report" {
				out = append(out, p.Value.Message)
			}
		}
		return out
	}
	e.release("$/progress", func(raw json.RawMessage) bool { return strings.Contains(string(raw), " · 1 s") })
	if _, err := e.ed.AwaitNotification(e.ctx, "window/showMessage", func(r json.RawMessage) bool { return strings.Contains(string(r), "Ran it.") }); err != nil {
		t.Fatal(err)
	}
	got := reports()
	running := regexp.MustCompile(`^Context \d+% · \S+ · Run ` + regexp.QuoteMeta(command) + ` · \d+ s$`)
	i := len(got) - 1
	for i >= 0 && !strings.Contains(got[i], " · Run ") {
		i--
	}
	if i < 0 || !running.MatchString(got[i]) {
		t.Fatalf("no report of the running command: %q", got)
	}
	if i+1 >= len(got) {
		t.Errorf("the meter did not come back after the command: %q", got[i:])
	}
	if n := len(e.ed.Notifications(MethodSessionUpdate)); n > 0 {
		t.Errorf("a plain client got %d sessionUpdates", n)
	}
}
