package agent

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-dev/reprise/agent/tools"
)

// TestLiveWatch: which snapshots of a running command go out, on a clock the test sets.
func TestLiveWatch(t *testing.T) {
	began := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return began.Add(time.Duration(ms) * time.Millisecond) }
	snap := func(bytes int64, tail string) tools.LiveSnapshot {
		return tools.LiveSnapshot{Started: true, Began: began, Bytes: bytes, Tail: tail}
	}
	type step struct {
		s    tools.LiveSnapshot
		now  time.Time
		sent bool
	}
	steps := []step{
		{tools.LiveSnapshot{}, at(5000), false},         // not started: waiting for approval
		{snap(0, ""), at(250), false},                   // started, silent, under a second
		{snap(7, "tick-1\n"), at(500), true},            // output
		{snap(14, "tick-1\ntick-2\n"), at(600), false},  // too soon after the last
		{snap(14, "tick-1\ntick-2\n"), at(750), true},   // the interval passed, the output grew
		{snap(14, "tick-1\ntick-2\n"), at(1000), true},  // silent, but a new second
		{snap(14, "tick-1\ntick-2\n"), at(1500), false}, // silent within that second
		{snap(14, "tick-1\ntick-2\n"), at(2100), true},  // the next second
	}
	var w liveWatch
	for i, st := range steps {
		out, sent := w.next(st.s, st.now)
		if sent != st.sent {
			t.Fatalf("step %d: sent %v, want %v", i, sent, st.sent)
		}
		if !sent {
			continue
		}
		want := LiveOutput{Tail: st.s.Tail, Bytes: st.s.Bytes, Elapsed: st.now.Sub(began)}
		if diff := cmp.Diff(out, want); diff != "" {
			t.Errorf("step %d (-got +want):\n%s", i, diff)
		}
	}
}

// TestQuietNote: a command silent for 3 s says what it is likely doing; one that printed, or is
// young, says nothing.
func TestQuietNote(t *testing.T) {
	quiet := LiveOutput{Elapsed: 4 * time.Second}
	for cmd, want := range map[string]string{
		"go test ./...": "building or starting, no output yet",
		"cargo build":   "building or starting, no output yet",
		"npm run lint":  "building or starting, no output yet",
		"make -j4":      "building or starting, no output yet",
		"sleep 30":      "no output yet",
		"go":            "no output yet",
	} {
		if got := quietNote(cmd, quiet); got != want {
			t.Errorf("%q: %q, want %q", cmd, got, want)
		}
	}
	if got := quietNote("go test ./...", LiveOutput{Elapsed: 4 * time.Second, Bytes: 1}); got != "" {
		t.Errorf("a command that printed: %q", got)
	}
	if got := quietNote("go test ./...", LiveOutput{Elapsed: 2 * time.Second}); got != "" {
		t.Errorf("a young command: %q", got)
	}
}
