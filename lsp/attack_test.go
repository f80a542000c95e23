package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/lsp/lsptest"
)

// Tests of a hostile or broken editor: each attack used to grow the server without bound.

// floodRequests frames n reprise.sessions requests with ids first, first+1, ….
func floodRequests(first, n int) []byte {
	var b bytes.Buffer
	for i := range n {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"workspace/executeCommand","params":{"command":"reprise.sessions","arguments":[]}}`, first+i)
		fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n%s", len(body), body)
	}
	return b.Bytes()
}

// waitHook makes s report, on the returned channel, that its reader waits for a free call slot.
func waitHook(s *server) <-chan struct{} {
	waiting := make(chan struct{}, 1)
	s.calls.onWait = func() {
		select {
		case waiting <- struct{}{}:
		default:
		}
	}
	return waiting
}

// TestAttackUnreadReplies: an editor floods requests and never reads the replies. The server
// used to start a goroutine per request, each holding its reply (1.9 GB in 11 s). Now it stops
// reading once MaxInflightCalls replies are waiting, and catches up once the editor reads.
func TestAttackUnreadReplies(t *testing.T) {
	const limit, flood = 4, 2000
	var srv *server
	var waiting <-chan struct{}
	e := newEnv(t, envOpts{limits: limits{MaxInflightCalls: limit}, server: func(s *server) {
		srv, waiting = s, waitHook(s)
	}})
	if err := e.ed.Execute(e.ctx, CommandSessions, nil, nil); err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()

	release := e.ed.HoldReads()
	t.Cleanup(release) // before the pipe closes (cleanups run last first), so the writer ends
	written := make(chan error, 1)
	// Owned by the test: ends once every request is written, or when the pipe closes at cleanup.
	go func() { written <- e.ed.WriteRaw(floodRequests(1000, flood)) }()

	select {
	case <-waiting:
	case <-e.ctx.Done():
		t.Fatal("the server never waited for a free slot: it reads requests without bound")
	}
	if got := srv.calls.load(); got > limit {
		t.Errorf("%d calls in flight, want at most %d", got, limit)
	}
	// The calls waiting to write, the flood's writer and a little slack; without the bound
	// this was one goroutine per request read (hundreds before the pipe filled up).
	if grown := runtime.NumGoroutine() - before; grown > limit+8 {
		t.Errorf("%d more goroutines while the editor does not read, want at most %d", grown, limit+8)
	}

	release()
	seen := map[string]bool{}
	if _, err := e.ed.AwaitOrphan(e.ctx, func(raw json.RawMessage) bool {
		var r struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal(raw, &r) == nil && r.Result != nil {
			seen[string(r.ID)] = true
		}
		return len(seen) == flood
	}); err != nil {
		t.Fatalf("%d of %d requests answered after the editor read again: %v", len(seen), flood, err)
	}
	if err := <-written; err != nil {
		t.Fatal(err)
	}
	if err := e.ed.Execute(e.ctx, CommandSessions, nil, nil); err != nil {
		t.Errorf("after the flood: %v", err)
	}
}

// TestAttackConfigurationFlood: didChangeConfiguration makes the server pull the configuration;
// an editor that sends it in a loop and never answers used to cost a goroutine per notification.
func TestAttackConfigurationFlood(t *testing.T) {
	var waiting <-chan struct{}
	e := newEnv(t, envOpts{limits: limits{MaxInflightCalls: 1}, server: func(s *server) { waiting = waitHook(s) }})
	if err := e.ed.Execute(e.ctx, CommandSessions, nil, nil); err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()
	release := e.ed.HoldReads()
	t.Cleanup(release)
	var b bytes.Buffer
	body := `{"jsonrpc":"2.0","method":"workspace/didChangeConfiguration","params":{"settings":null}}`
	for range 500 {
		fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n%s", len(body), body)
	}
	// Then three requests: with one call in flight and replies unread, the server waits for a
	// slot at the second or the third, so every notification before them was handled.
	b.Write(floodRequests(1, 3))
	written := make(chan error, 1)
	// Owned by the test: ends once everything is written, or when the pipe closes at cleanup.
	go func() { written <- e.ed.WriteRaw(b.Bytes()) }()
	select {
	case <-waiting:
	case <-e.ctx.Done():
		t.Fatal("the server never reached the requests after the notifications")
	}
	if grown := runtime.NumGoroutine() - before; grown > 8 {
		t.Errorf("%d more goroutines after 500 unanswered configuration changes, want at most 8", grown)
	}
	release()
	if err := <-written; err != nil {
		t.Fatal(err)
	}
	if err := e.ed.Execute(e.ctx, CommandSessions, nil, nil); err != nil {
		t.Errorf("after the flood: %v", err)
	}
}

// openFDs counts this process's open file descriptors; -1 where /proc is missing.
func openFDs() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}

// blockingModel answers nothing until the turn is cancelled, so its sessions stay busy.
func blockingModel() func(ctx context.Context, model string) (agent.Model, int, error) {
	m := &chunkModel{chunks: make(chan string)}
	return func(context.Context, string) (agent.Model, int, error) { return m, 1 << 20, nil }
}

// openSessions lists the sessions open in the server (not merely saved).
func (e *env) openSessions() (open, saved []string) {
	e.t.Helper()
	var list []SessionInfo
	if err := e.ed.Execute(e.ctx, CommandSessions, nil, &list); err != nil {
		e.t.Fatal(err)
	}
	for _, s := range list {
		if s.Saved {
			saved = append(saved, s.SessionID)
		} else {
			open = append(open, s.SessionID)
		}
	}
	return open, saved
}

func (e *env) newSession() string {
	e.t.Helper()
	var res SessionResult
	if err := e.ed.Execute(e.ctx, CommandNewSession, nil, &res); err != nil {
		e.t.Fatal(err)
	}
	return res.SessionID
}

// TestAttackSessionFlood: each session holds its log and its lock; 3,000 sessions were 6,000 file
// descriptors, and 3,000 reprise.newSession calls left their directories on disk. Past
// MaxSessions the least recently active idle session is closed, and reopens when a command names
// it; an empty session leaves nothing on disk.
func TestAttackSessionFlood(t *testing.T) {
	const limit, flood, asked = 3, 20, 5
	var turns []geminitest.Turn
	for i := range asked {
		turns = append(turns, text(fmt.Sprintf("answer %d", i)))
	}
	e := newEnv(t, envOpts{limits: limits{MaxSessions: limit}, editor: lsptest.Options{Experimental: true}}, turns...)
	fds := -1
	for i := range flood {
		e.newSession()
		if i == limit-1 {
			fds = openFDs()
		}
		if open, _ := e.openSessions(); len(open) > limit {
			t.Fatalf("after %d sessions, %d are open, want at most %d", i+1, len(open), limit)
		}
	}
	if now := openFDs(); fds >= 0 && now > fds+2 {
		t.Errorf("%d file descriptors after %d sessions, %d after %d: sessions past the cap still hold files", now, flood, fds, limit)
	}
	if dirs, _ := filepath.Glob(filepath.Join(e.home, "*", "sessions", "*")); len(dirs) != 0 {
		t.Errorf("%d empty sessions left %d directories: %v", flood, len(dirs), dirs)
	}
	if _, saved := e.openSessions(); len(saved) != 0 {
		t.Errorf("saved sessions %v, want none: they were all empty", saved)
	}

	// Sessions with a question are saved; those closed by the cap resume.
	var ids []string
	for range asked {
		id := e.newSession()
		e.ask("hello", id)
		e.turnEnd(id)
		ids = append(ids, id)
	}
	open, saved := e.openSessions()
	if diff := cmp.Diff(slices.Sorted(slices.Values(ids[asked-limit:])), slices.Sorted(slices.Values(open))); diff != "" {
		t.Errorf("open sessions: the most recent should stay (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(slices.Sorted(slices.Values(ids[:asked-limit])), slices.Sorted(slices.Values(saved))); diff != "" {
		t.Errorf("saved sessions: those closed by the cap (-want +got):\n%s", diff)
	}

	// A command naming a session closed by the cap reopens it, closing the least recently used
	// in its turn: the editor, which keeps ids, does not notice, and the cap holds.
	if err := e.ed.Execute(e.ctx, CommandContext, SessionArgs{SessionID: ids[0]}, nil); err != nil {
		t.Errorf("context of a session closed by the cap: %v", err)
	}
	var hist historyResult
	if err := e.ed.Execute(e.ctx, CommandHistory, SessionArgs{SessionID: ids[0]}, &hist); err != nil {
		t.Errorf("history after the reopening: %v", err)
	}
	if len(hist.Entries) < 2 || hist.Entries[0].Text != "hello" {
		t.Errorf("the reopened session's history: %+v", hist.Entries)
	}
	if open, _ := e.openSessions(); len(open) != limit || !slices.Contains(open, ids[0]) {
		t.Errorf("open after the reopening: %v, want %d with %s", open, limit, ids[0])
	}
	var res SessionResult
	if err := e.ed.Execute(e.ctx, CommandResume, SessionArgs{SessionID: ids[1]}, &res); err != nil {
		t.Fatalf("resume a session closed by the cap: %v", err)
	}
	if open, _ := e.openSessions(); len(open) != limit || !slices.Contains(open, ids[1]) {
		t.Errorf("open after resume: %v, want %d with %s", open, limit, ids[1])
	}
}

// TestAttackSessionFloodAllBusy: when every open session runs a turn, none is closed under it and
// a new one is refused with a clear error; once one is idle again, there is room.
func TestAttackSessionFloodAllBusy(t *testing.T) {
	const limit = 2
	e := newEnv(t, envOpts{limits: limits{MaxSessions: limit}, newModel: blockingModel(), editor: lsptest.Options{Experimental: true}})
	var ids []string
	for range limit {
		id := e.newSession()
		e.ask("never answered", id)
		ids = append(ids, id)
	}
	code, msg := rpcError(t, e.ed.Execute(e.ctx, CommandNewSession, nil, nil))
	if code != -32600 || !strings.Contains(msg, "too many open sessions: all 2 are busy") {
		t.Errorf("a session past the cap while all run: %d %q", code, msg)
	}
	if open, _ := e.openSessions(); !cmp.Equal(slices.Sorted(slices.Values(open)), slices.Sorted(slices.Values(ids))) {
		t.Errorf("open sessions %v, want the running %v", open, ids)
	}
	if err := e.ed.Execute(e.ctx, CommandCancel, SessionArgs{SessionID: ids[0]}, nil); err != nil {
		t.Fatal(err)
	}
	e.newSession() // closes ids[0], now idle
	open, _ := e.openSessions()
	if len(open) != limit || !slices.Contains(open, ids[1]) || slices.Contains(open, ids[0]) {
		t.Errorf("open sessions %v: want the running %s and the new one", open, ids[1])
	}
	if err := e.ed.Execute(e.ctx, CommandCancel, SessionArgs{SessionID: ids[1]}, nil); err != nil {
		t.Fatal(err)
	}
}

// TestAttackBufferFlood: open buffers were kept whatever their total. Past MaxBufferBytes a
// buffer is dropped from the overlay (the agent reads the disk and may not write the file), the
// user is warned once, and closing buffers makes room again.
func TestAttackBufferFlood(t *testing.T) {
	const limit = 1000
	var srv *server
	e := newEnv(t, envOpts{
		limits: limits{MaxBufferBytes: limit},
		server: func(s *server) { srv = s },
		files:  map[string]string{"a.txt": "disk a\n", "b.txt": "disk b\n"},
		editor: lsptest.Options{Experimental: true},
	},
		call("read_file", map[string]any{"path": "a.txt"}),
		call("read_file", map[string]any{"path": "b.txt"}),
		text("read both"),
	)
	bufA, bufB := "buffer a\n"+strings.Repeat("a", 600), "buffer b\n"+strings.Repeat("b", 600)
	e.didOpen("a.txt", bufA)
	e.didOpen("b.txt", bufB) // 1,200 bytes with a.txt's: dropped
	for i := range 200 {
		e.didOpen(fmt.Sprintf("gen/%d.txt", i), strings.Repeat("x", 100))
	}
	// Notifications are handled in order before the next message: once this is answered, all are.
	id := e.ask("read a.txt and b.txt", "")
	e.turnEnd(id)

	if total := srv.docs.size(); total > limit {
		t.Errorf("open buffers hold %d bytes, want at most %d", total, limit)
	}
	reqs := e.srv.Requests()
	last := requestText(reqs[len(reqs)-1])
	if !strings.Contains(last, "buffer a") || !strings.Contains(last, "disk b") || strings.Contains(last, "buffer b") {
		t.Errorf("the agent should read a.txt's buffer and b.txt from disk; the model saw:\n%s", last)
	}
	if err := srv.docs.guard("b.txt"); err == nil || !strings.Contains(err.Error(), "too large for the server to follow") {
		t.Errorf("a write to a dropped buffer: %v, want a refusal", err)
	}
	warnings := 0
	for _, raw := range e.ed.Notifications("window/logMessage") {
		if strings.Contains(string(raw), "open buffers exceed") {
			warnings++
		}
	}
	if warnings != 1 {
		t.Errorf("%d warnings about dropped buffers, want 1", warnings)
	}

	// Closing a.txt makes room: b.txt's next change is kept.
	if err := e.ed.Notify(e.ctx, "textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": e.uri("a.txt")}}); err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		if err := e.ed.Notify(e.ctx, "textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": e.uri(fmt.Sprintf("gen/%d.txt", i))}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.ed.Notify(e.ctx, "textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": e.uri("b.txt"), "version": 2},
		"contentChanges": []any{map[string]any{"text": bufB}},
	}); err != nil {
		t.Fatal(err)
	}
	if err := e.ed.Execute(e.ctx, CommandSessions, nil, nil); err != nil {
		t.Fatal(err)
	}
	if got, ok := srv.docs.overlay("b.txt"); !ok || got != bufB {
		t.Errorf("b.txt after room was made: %v", ok)
	}
	if got, want := srv.docs.size(), int64(len("b.txt")+len(bufB)); got != want {
		t.Errorf("open buffers hold %d bytes, want %d", got, want)
	}
}

// TestAttackSessionIDTraversal: reprise.checkpoints read the log at <store>/sessions/<id>, so
// "../../x" read one outside the store. Every command that takes a sessionId now refuses one
// that could not be an id, before it reaches a path.
func TestAttackSessionIDTraversal(t *testing.T) {
	e := newEnv(t, envOpts{newModel: blockingModel()})
	// A real log, planted outside the store where "../../planted" leads.
	id := e.ask("hello", "")
	if err := e.ed.Execute(e.ctx, CommandCancel, SessionArgs{SessionID: id}, nil); err != nil {
		t.Fatal(err)
	}
	logs, err := filepath.Glob(filepath.Join(e.home, "*", "sessions", id, "events.jsonl"))
	if err != nil || len(logs) != 1 {
		t.Fatalf("the session's log: %v %v", logs, err)
	}
	data, err := os.ReadFile(logs[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(e.home, "planted"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.home, "planted", "events.jsonl"), data, 0o600); err != nil {
		t.Fatal(err)
	}

	bad := []string{
		"../../planted",
		"..",
		".",
		"../" + id,
		"./" + id,
		"/etc/passwd",
		filepath.Join(e.home, "planted"),
		`..\..\planted`,
		id + "\x00",
		"a\x00b",
		id + "/",
		"a b",
		"line\nbreak",
		"séance",
		strings.Repeat("a", 65),
	}
	commands := []struct {
		name string
		arg  func(id string) any
	}{
		{CommandAsk, func(id string) any { return AskArgs{Text: "hi", SessionID: id} }},
		{CommandCancel, func(id string) any { return SessionArgs{SessionID: id} }},
		{CommandCompact, func(id string) any { return compactArgs{SessionID: id} }},
		{CommandContext, func(id string) any { return SessionArgs{SessionID: id} }},
		{CommandCheckpoints, func(id string) any { return SessionArgs{SessionID: id} }},
		{CommandCheckpoint, func(id string) any { return checkpointArgs{SessionID: id, N: 1} }},
		{CommandResume, func(id string) any { return SessionArgs{SessionID: id} }},
		{CommandRestore, func(id string) any { return RestoreArgs{SessionID: id, Turn: 1} }},
		{CommandChanges, func(id string) any { return ChangesArgs{SessionID: id} }},
		{CommandUndoCompaction, func(id string) any { return SessionArgs{SessionID: id} }},
		{CommandHistory, func(id string) any { return SessionArgs{SessionID: id} }},
		{CommandShowContext, func(id string) any { return SessionArgs{SessionID: id} }},
		{CommandUndoFile, func(id string) any { return UndoFileArgs{SessionID: id, Path: "a.txt"} }},
		{CommandKeep, func(id string) any { return KeepArgs{SessionID: id, Turn: 1, Paths: []string{"a.txt"}} }},
		{CommandUndoHunk, func(id string) any { return HunkArgs{SessionID: id, Hunk: "h1"} }},
		{CommandKeepHunk, func(id string) any { return HunkArgs{SessionID: id, Hunk: "h1"} }},
		{CommandShowChanges, func(id string) any { return SessionArgs{SessionID: id} }},
		{CommandPin, func(id string) any { return PinArgs{SessionID: id, Kind: "message", Text: "x"} }},
		{CommandUnpin, func(id string) any { return UnpinArgs{SessionID: id, ID: "p1"} }},
		{CommandPins, func(id string) any { return SessionArgs{SessionID: id} }},
		{CommandForgetNote, func(id string) any { return ForgetNoteArgs{SessionID: id, Key: "k"} }},
		{CommandFork, func(id string) any { return ForkArgs{SessionID: id, Turn: 1} }},
		{CommandExport, func(id string) any { return ExportArgs{SessionID: id} }},
		{CommandCancelSubagent, func(id string) any { return CancelSubagentArgs{SessionID: id, SubagentID: "20991231-000000-abcdef"} }},
	}
	takesSession := map[string]bool{}
	for _, c := range commands {
		takesSession[c.name] = true
		for _, b := range bad {
			t.Run(c.name+"/"+fmt.Sprintf("%q", b), func(t *testing.T) {
				code, msg := rpcError(t, e.ed.Execute(e.ctx, c.name, c.arg(b), nil))
				if code != -32602 || !strings.Contains(msg, c.name+": invalid sessionId") {
					t.Errorf("got %d %q, want -32602 naming the invalid sessionId", code, msg)
				}
			})
		}
	}
	// Every command but the four without a session is covered: a new command taking a sessionId
	// must be added above.
	for _, c := range serverCommands {
		if !takesSession[c] && c != CommandSessions && c != CommandNewSession && c != CommandMCP && c != CommandModels {
			t.Errorf("%s is not covered by this test", c)
		}
	}
	// A valid id still works, and an unknown one is told apart from a bad one.
	if err := e.ed.Execute(e.ctx, CommandCheckpoints, SessionArgs{SessionID: id}, nil); err != nil {
		t.Errorf("checkpoints of a real session: %v", err)
	}
	code, msg := rpcError(t, e.ed.Execute(e.ctx, CommandCheckpoints, SessionArgs{SessionID: "20991231-000000-abcdef"}, nil))
	if code != -32602 || !strings.Contains(msg, "unknown session") {
		t.Errorf("an unknown, well-formed id: %d %q", code, msg)
	}
}

// TestAttackEndlessContentLength: a Content-Length of 10^17 made the server skip "the body"
// forever, swallowing every later message while the editor waited for answers. A body too long
// to skip is answered, logged, and ends the connection with an error, so the editor sees the
// server stop instead of a hang.
func TestAttackEndlessContentLength(t *testing.T) {
	e := newEnv(t, envOpts{})
	if err := e.ed.Execute(e.ctx, CommandSessions, nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := e.ed.WriteRaw([]byte("Content-Length: 100000000000000000\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ed.AwaitOrphan(e.ctx, func(raw json.RawMessage) bool {
		return strings.Contains(string(raw), "-32600") && strings.Contains(string(raw), "too long to skip: closing the connection")
	}); err != nil {
		t.Fatal(err)
	}
	code, err := e.ed.Wait(e.ctx)
	if code != 1 || !errors.Is(err, ErrMessageTooLong) {
		t.Errorf("the server ended with %d %v, want 1 and ErrMessageTooLong", code, err)
	}
}
