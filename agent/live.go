package agent

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/reprise-dev/reprise/agent/tools"
)

// LiveInterval is how often a running command's output is looked at, and so the pace of its live
// updates: about four a second reads as live, and keeps a flood's cost on the wire to a few
// kilobytes a second.
const LiveInterval = 250 * time.Millisecond

// minLiveGap is the least time between two updates as measured: the ticker's ticks are
// LiveInterval apart give or take a little, and a tick a hair early must not be skipped.
const minLiveGap = LiveInterval * 9 / 10

// runWatched runs one call. A command runs in a goroutine of its own while this one, the
// turn's, sends its output so far as in-progress updates (the emitter is the turn goroutine's
// alone). Those updates are for the UI: the model gets the Result, as an unwatched run's.
func runWatched(ctx context.Context, em *emitter, env *tools.Env, call tools.Call, ev *ToolEvent) tools.Result {
	if call.Name != "run_command" || em.stopped {
		return tools.Run(ctx, env, call)
	}
	call.Live = tools.NewLive()
	done := make(chan tools.Result, 1)
	// Ends when the command does: its timeout, ctx or its own exit; waited for below.
	go func() { done <- tools.Run(ctx, env, call) }()
	tick := time.NewTicker(LiveInterval)
	defer tick.Stop()
	var w liveWatch
	for {
		select {
		case res := <-done:
			return res
		case now := <-tick.C:
			if out, ok := w.next(call.Live.Snapshot(), now); ok {
				command, _ := call.Args["command"].(string)
				out.Note = quietNote(command, out)
				up := *ev
				up.Live = &out
				em.send(Event{Type: EventToolUpdate, Tool: &up})
			}
		}
	}
}

// liveWatch decides which snapshots of a running command go out: one per LiveInterval at most,
// and only when the output grew or the elapsed time reached another whole second (a silent
// command's clock still moves, once a second).
type liveWatch struct {
	sent    bool
	bytes   int64
	elapsed time.Duration
}

func (w *liveWatch) next(s tools.LiveSnapshot, now time.Time) (LiveOutput, bool) {
	if !s.Started {
		return LiveOutput{}, false // approval and the sandbox's preparation are not its time
	}
	elapsed := now.Sub(s.Began)
	if w.sent && elapsed-w.elapsed < minLiveGap {
		return LiveOutput{}, false
	}
	if s.Bytes == w.bytes && elapsed/time.Second == w.elapsed/time.Second {
		return LiveOutput{}, false
	}
	w.sent, w.bytes, w.elapsed = true, s.Bytes, elapsed
	return LiveOutput{Tail: s.Tail, Bytes: s.Bytes, Elapsed: elapsed}, true
}

// quietAfter is how long a command may print nothing before the UI says what it is likely doing.
const quietAfter = 3 * time.Second

// quietNote says what a command that has printed nothing for quietAfter is doing, where its first
// word says so: a build or a test run compiles first, and prints nothing meanwhile. "" while it
// has printed something, or is young.
func quietNote(command string, out LiveOutput) string {
	if out.Bytes > 0 || out.Elapsed < quietAfter {
		return ""
	}
	f := strings.Fields(command)
	builds := func(tool string, verbs ...string) bool {
		return len(f) > 1 && f[0] == tool && slices.Contains(verbs, f[1])
	}
	switch {
	case builds("go", "test", "build", "run", "vet", "install", "generate"), builds("cargo", "build", "test", "run", "check", "clippy"),
		builds("npm", "test", "run", "ci", "install"), builds("mvn", "test", "package", "install", "verify"),
		builds("gradle", "test", "build"), builds("./gradlew", "test", "build"), builds("dotnet", "build", "test"),
		len(f) > 0 && (f[0] == "make" || f[0] == "tsc" || f[0] == "pytest"):
		return "building or starting, no output yet"
	}
	return "no output yet"
}
