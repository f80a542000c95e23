package agent

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/reprise-dev/reprise/agent/cmdpolicy"
	"github.com/reprise-dev/reprise/agent/sandbox"
	"github.com/reprise-dev/reprise/contextwin"
)

// TestSettingsChangeDuringTurn changes the context policy and the sandbox while a turn runs
// commands: with -race, any unsynchronised read of the tools' Env by a running call fails.
func TestSettingsChangeDuringTurn(t *testing.T) {
	echo := map[string]any{"command": "echo hi"}
	f := newFixture(t, fixtureOpts{commands: cmdpolicy.New([]string{"echo"}, nil)},
		callTurn("run_command", echo, ""), callTurn("run_command", echo, ""), callTurn("run_command", echo, ""),
		textTurn("done"))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // ends when the turn is over
		defer wg.Done()
		p := contextwin.DefaultPolicy()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			p.ToolOutputMaxChars = 1000 + i%2000
			if err := f.s.SetPolicy(p); err != nil {
				t.Error(err)
				return
			}
			f.s.SetSandbox(sandbox.New(sandbox.Config{Workspace: f.ws}))
		}
	}()
	_, err := f.run(t.Context(), "echo three times")
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
}

// TestNextTurnStaysRunning starts a second turn as soon as the first sends turn_end, then lets the
// first one's iterator return: its cleanup must not mark the second turn idle (which would let a
// third turn run beside it).
func TestNextTurnStaysRunning(t *testing.T) {
	f := newFixture(t, fixtureOpts{commands: cmdpolicy.New([]string{"sleep"}, nil)},
		textTurn("first done"),
		callTurn("run_command", map[string]any{"command": "sleep 60"}, ""), textTurn("x"))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	second := make(chan struct{})
	done := make(chan struct{})
	for ev := range f.s.Run(t.Context(), "one") {
		if ev.Type != EventTurnEnd {
			continue
		}
		go func() { // ends when the second turn is cancelled
			defer close(done)
			for ev := range f.s.Run(ctx, "two") {
				if ev.Type == EventToolCall {
					close(second)
				}
			}
		}()
		<-second
		break // the first turn's iterator returns now, while the second turn runs its command
	}
	if _, err := f.run(t.Context(), "three"); !errors.Is(err, ErrBusy) {
		t.Errorf("a third turn while the second runs: err = %v, want ErrBusy", err)
	}
	cancel()
	<-done
}

// TestReadersDuringCompactingTurn calls every reader of a session, and the methods that take the
// compactor's and the conversation's locks together, while a turn compacts: with -race, a part read
// without its lock fails; a lock taken out of order deadlocks and the test times out.
func TestReadersDuringCompactingTurn(t *testing.T) {
	p := contextwin.DefaultPolicy()
	p.ContextBudget, p.KeepRecentTurns, p.CompactAt, p.BlockAt = 4000, 1, 0.5, 0.6
	files := notes(3, 600)
	files["big.txt"] = strings.Repeat("a big file line\n", 1000)
	big := map[string]any{"path": "big.txt"}
	turns := append(readTurns(3), callTurn("read_file", big, sig), callTurn("read_file", big, sig), textTurn("done"),
		summaryTurn(summaryText), summaryTurn(summaryText), summaryTurn(summaryText))
	f := newFixture(t, fixtureOpts{policy: p, files: files}, turns...)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	loop := func(step func() error) {
		wg.Add(1)
		go func() { // ends when the turn is over
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := step(); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	loop(func() error {
		_ = f.s.Context()
		_, _, _, _, _ = f.s.Usage(), f.s.Conversation().History(), f.s.Conversation().Checkpoints(), f.s.files.State(), f.s.bill.sum()
		_, _, _, _ = f.s.Transcript(), f.s.Files().ChangedPaths(1), f.s.Files().SeenFiles(), f.s.Files().Stale("big.txt")
		_, _, _ = f.s.Window(), f.s.LastActivity(), f.s.Conversation().Turns()
		f.s.Files().FilesChanged([]string{"notes/0.txt", "big.txt"})
		_, _ = f.s.UndoCompaction() // refused while the turn runs
		_, err := f.s.Files().Changes(1)
		return err
	})
	loop(func() error { return f.s.SetPolicy(p) }) // the same policy: the turn goes as scripted
	_, err := f.run(t.Context(), "Read.")
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if len(f.s.Conversation().Checkpoints()) == 0 {
		t.Error("the turn did not compact: the test no longer covers a compaction")
	}
}
