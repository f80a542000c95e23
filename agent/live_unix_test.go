//go:build unix

package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reprise-dev/reprise/agent/secret"
	"github.com/reprise-dev/reprise/agent/tools"
)

// A command under test waits for the file "go" to appear in the workspace; the test creates it
// once a live update showed what it waits for. No test sleeps, and none depends on how fast the
// machine is.
const waitForGo = "while [ ! -f go ]; do sleep 0.05; done"

// watchRun runs a turn of one command and releases the command (creates "go") at the first
// live update ready accepts. It fails when none did.
func (f *fixture) watchRun(t *testing.T, ready func(*LiveOutput) bool) []Event {
	t.Helper()
	var evs []Event
	released := false
	for ev, err := range f.s.Run(t.Context(), "run it") {
		if err != nil {
			t.Errorf("run: %v", err)
			continue
		}
		evs = append(evs, ev)
		if !released && ev.Type == EventToolUpdate && ev.Tool.Live != nil && ready(ev.Tool.Live) {
			released = true
			if err := os.WriteFile(filepath.Join(f.ws, "go"), nil, 0o644); err != nil {
				t.Error(err)
			}
		}
	}
	if !released {
		t.Fatalf("no live update showed what the command waits on; events %v", types(evs))
	}
	return evs
}

// liveUpdates checks what holds for every live update of a turn of one command — after its
// tool_call and before its final update, in progress, bounded, and never closer than
// minLiveGap — and returns them and the final update.
func liveUpdates(t *testing.T, evs []Event) (live []*ToolEvent, final *ToolEvent) {
	t.Helper()
	started := false
	for _, ev := range evs {
		switch {
		case ev.Type == EventToolCall:
			started = true
		case ev.Type == EventToolUpdate && ev.Tool.Live == nil:
			final = ev.Tool
		case ev.Type == EventToolUpdate:
			l := ev.Tool.Live
			if !started || final != nil || ev.Tool.Status != ToolInProgress {
				t.Errorf("a live update out of place (started %v, final %v, status %s)", started, final != nil, ev.Tool.Status)
			}
			if len(l.Tail) > tools.LiveTailBytes || strings.Count(strings.TrimSuffix(l.Tail, "\n"), "\n") >= tools.LiveTailLines {
				t.Errorf("a live tail of %d bytes, %d lines", len(l.Tail), strings.Count(l.Tail, "\n"))
			}
			if n := len(live); n > 0 {
				prev := live[n-1].Live
				if l.Elapsed-prev.Elapsed < minLiveGap || l.Bytes < prev.Bytes {
					t.Errorf("update %d: %v after %v, %d bytes after %d", n, l.Elapsed, prev.Elapsed, l.Bytes, prev.Bytes)
				}
			}
			live = append(live, ev.Tool)
		}
	}
	if final == nil || final.Status == ToolInProgress {
		t.Fatalf("no final update: %v", types(evs))
	}
	return live, final
}

// TestLiveOutputIsDisplayOnly: a running command's output streams to the UI as it comes, and
// what the model and the journal get is the result as before — here, a truncated output whose
// middle the UI showed live and the model never sees (the marker is printed by the shell, so
// the command line, which the model does see, does not hold it).
func TestLiveOutputIsDisplayOnly(t *testing.T) {
	command := "yes head-line | head -c 2000; echo middle-$((6*7)); " + waitForGo + "; yes tail-line | head -c 5000; echo"
	f := newFixture(t, fixtureOpts{commands: yesPolicy(), journal: true},
		callTurn("run_command", map[string]any{"command": command, "timeout_s": 60}, ""), textTurn("done"))
	evs := f.watchRun(t, func(l *LiveOutput) bool { return strings.Contains(l.Tail, "middle-42") })
	_, final := liveUpdates(t, evs)
	if final.Status != ToolCompleted || final.Omitted == 0 || strings.Contains(final.Output, "middle-42") {
		t.Fatalf("final: %s, %d omitted, output %q", final.Status, final.Omitted, final.Output)
	}
	reqs := mainRequests(f.srv)
	if got := responses(reqs[len(reqs)-1])["run_command"]; len(got) != 1 || got[0] != final.Output {
		t.Errorf("the model got %q, want the final output %q", got, final.Output)
	}
	for _, r := range f.srv.Requests() {
		if strings.Contains(string(r.Body), "middle-42") {
			t.Errorf("a request to the model holds the live output")
		}
	}
	f.s.Close()
	journal, err := os.ReadFile(filepath.Join(f.log.Dir(), "events.jsonl"))
	if err != nil || len(journal) == 0 || strings.Contains(string(journal), "middle-42") {
		t.Errorf("the journal (%d bytes, %v) holds the live output", len(journal), err)
	}
}

// TestLiveOutputRedacted: a secret the command prints is redacted in the live updates as in the
// result, even printed in two pieces.
func TestLiveOutputRedacted(t *testing.T) {
	key := "live-key-0123456789abcdef"
	command := "echo before; printf 'live-key-01234'; printf '56789abcdef\\n'; echo after-key; " + waitForGo
	f := newFixture(t, fixtureOpts{commands: yesPolicy(), secrets: secret.New(map[string]string{"TOKEN": key})},
		callTurn("run_command", map[string]any{"command": command, "timeout_s": 60}, ""), textTurn("done"))
	evs := f.watchRun(t, func(l *LiveOutput) bool { return strings.Contains(l.Tail, "after-key") })
	live, final := liveUpdates(t, evs)
	for _, u := range live {
		if strings.Contains(u.Live.Tail, key) || strings.Contains(u.Live.Tail, "live-key") {
			t.Errorf("a live update shows the key: %q", u.Live.Tail)
		}
	}
	if tail := live[len(live)-1].Live.Tail; tail != "before\n[redacted TOKEN]\nafter-key\n" {
		t.Errorf("last live tail %q", tail)
	}
	if final.Output != "before\n[redacted TOKEN]\nafter-key\nexit status 0" {
		t.Errorf("final output %q", final.Output)
	}
}

// TestLiveOutputFlood: a command printing megabytes as fast as it can gives live updates bounded
// in size and spaced by minLiveGap (so their number is bounded by its running time), and the
// model the usual truncated output with the whole saved.
func TestLiveOutputFlood(t *testing.T) {
	command := "while [ ! -f go ]; do yes flood-line-0123456789 | head -c 1000000; done; echo end"
	f := newFixture(t, fixtureOpts{commands: yesPolicy()},
		callTurn("run_command", map[string]any{"command": command, "timeout_s": 60}, ""), textTurn("done"))
	seen := 0
	evs := f.watchRun(t, func(l *LiveOutput) bool {
		seen++
		return seen >= 3 && l.Bytes > 2*tools.LiveTailBytes
	})
	live, final := liveUpdates(t, evs)
	var wire int
	for _, u := range live {
		wire += len(u.Live.Tail)
	}
	last := live[len(live)-1].Live
	t.Logf("%d live updates, %d bytes of tails, for %d bytes printed in %v", len(live), wire, last.Bytes, last.Elapsed)
	if most := int(last.Elapsed/minLiveGap) + 1; len(live) > most {
		t.Errorf("%d live updates in %v, want at most %d", len(live), last.Elapsed, most)
	}
	if wire > len(live)*tools.LiveTailBytes {
		t.Errorf("%d bytes of tails for %d updates", wire, len(live))
	}
	if final.SavedPath == "" || final.Omitted == 0 || len(final.Output) > 8000 || !strings.HasSuffix(final.Output, "end\nexit status 0") {
		t.Errorf("final: saved %q, %d omitted, %d bytes ending %q", final.SavedPath, final.Omitted, len(final.Output), final.Output[max(0, len(final.Output)-40):])
	}
}

// TestLiveOutputHangingCommand: a watched command that prints nothing and never ends still gets
// its timeout, and meanwhile its clock is all its live updates carry.
func TestLiveOutputHangingCommand(t *testing.T) {
	f := newFixture(t, fixtureOpts{commands: yesPolicy()},
		callTurn("run_command", map[string]any{"command": "sleep 600", "timeout_s": 2}, ""), textTurn("done"))
	evs, err := f.run(t.Context(), "run it")
	if err != nil {
		t.Fatal(err)
	}
	live, final := liveUpdates(t, evs)
	if final.Status != ToolFailed || !strings.HasSuffix(final.Output, "timed out after 2s") {
		t.Errorf("final: %s %q", final.Status, final.Output)
	}
	for _, u := range live {
		if u.Live.Tail != "" || u.Live.Bytes != 0 || u.Live.Elapsed < time.Second {
			t.Errorf("a silent command's live update: %+v", u.Live)
		}
	}
}
