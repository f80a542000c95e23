package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/gemini"
	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/contextwin"
)

const summary = "**Objective:**\nanswer\n**Files read and what mattered:**\nnone\n**Modifications made:**\nnone\n**Last tests:**\nnone\n**Hypotheses ruled out:**\nnone\n**Remaining work:**\nnone"

// open runs turns user turns in a new session against the fake model (the real genai client),
// which then answers summaries with summary.
func open(t *testing.T, turns int, extra ...geminitest.Turn) (*Live, *geminitest.Server) {
	t.Helper()
	script := geminitest.Script{}
	for range turns {
		script.Turns = append(script.Turns, geminitest.Turn{Parts: []geminitest.Part{{Text: strings.Repeat("An answer of some length, to be summarized later. ", 80)}}})
	}
	script.Turns = append(script.Turns, extra...)
	srv := geminitest.New(script)
	t.Cleanup(srv.Close)
	h := &Runner{Models: func(ctx context.Context, name string) (agent.Model, int, error) {
		c, err := gemini.New(ctx, gemini.Config{APIKey: "k", BaseURL: srv.URL(), Model: name})
		if err != nil {
			return nil, 0, err
		}
		limit, err := c.InputTokenLimit(ctx)
		return c, limit, err
	}}
	o, err := h.Open(t.Context(), Spec{Workspace: t.TempDir(), Model: "gemini-3.8-flash", Config: agent.Config{ContextPolicy: contextwin.DefaultPolicy()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background(), o.ID()) })
	for range turns {
		for _, err := range o.Run(t.Context(), "a question") {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	return o, srv
}

// record returns an emit that keeps the events, and the events kept.
func record() (func(agent.Event), *[]agent.Event) {
	var evs []agent.Event
	return func(ev agent.Event) { evs = append(evs, ev) }, &evs
}

// states lists the events as "compaction:<state>" and "usage".
func states(evs []agent.Event) []string {
	var out []string
	for _, ev := range evs {
		switch ev.Type {
		case agent.EventCompaction:
			out = append(out, "compaction:"+string(ev.Compaction.State))
			if ev.Compaction.Trigger != contextwin.TriggerManual {
				out = append(out, "trigger:"+string(ev.Compaction.Trigger))
			}
		default:
			out = append(out, string(ev.Type))
		}
	}
	return out
}

func same(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestCompactAndUndo: the compact verb tells its states and the usage after, with the checkpoint
// and the token counts in its outcome; undoCompaction takes it back and tells the usage.
func TestCompactAndUndo(t *testing.T) {
	o, _ := open(t, 5, geminitest.Turn{Match: contextwin.SummaryMarker, Parts: []geminitest.Part{{Text: summary}}})
	emit, evs := record()
	out, err := Do(t.Context(), o.Session, Verb{Kind: Compact, Focus: "the answers"}, emit)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"compaction:running", "compaction:done", "usage"}; !same(states(*evs), want) {
		t.Errorf("events %v, want %v", states(*evs), want)
	}
	if out.Checkpoint.N != 1 || (*evs)[1].Compaction.Checkpoint == nil || (*evs)[1].Compaction.Checkpoint.N != 1 {
		t.Errorf("checkpoint %+v, event %+v", out.Checkpoint, (*evs)[1].Compaction)
	}
	if out.After != (*evs)[2].Usage.Used || out.After != o.Usage().Used || out.Before <= out.After {
		t.Errorf("before %d, after %d, usage event %d, session %d", out.Before, out.After, (*evs)[2].Usage.Used, o.Usage().Used)
	}
	emit, evs = record()
	undone, err := Do(t.Context(), o.Session, Verb{Kind: UndoCompaction}, emit)
	if err != nil {
		t.Fatal(err)
	}
	if undone.Checkpoint.N != 1 || undone.Before != out.After || undone.After <= out.After || !same(states(*evs), []string{"usage"}) {
		t.Errorf("undo: checkpoint %d, %d → %d tokens, events %v; want checkpoint 1 back from %d tokens", undone.Checkpoint.N, undone.Before, undone.After, states(*evs), out.After)
	}
	// Nothing left to undo: an error, and no event.
	emit, evs = record()
	if _, err := Do(t.Context(), o.Session, Verb{Kind: UndoCompaction}, emit); err == nil || len(*evs) != 0 {
		t.Errorf("a second undo: %v, events %v", err, states(*evs))
	}
}

// TestCompactWithNothingToCompact: a session shorter than the turns kept is skipped, with
// contextwin.ErrNothingToCompact.
func TestCompactWithNothingToCompact(t *testing.T) {
	o, _ := open(t, 1)
	emit, evs := record()
	_, err := Do(t.Context(), o.Session, Verb{Kind: Compact}, emit)
	if !errors.Is(err, contextwin.ErrNothingToCompact) {
		t.Errorf("err %v, want ErrNothingToCompact", err)
	}
	if want := []string{"compaction:running", "compaction:skipped"}; !same(states(*evs), want) {
		t.Errorf("events %v, want %v", states(*evs), want)
	}
}

// TestCompactIsCancelled: a compaction abandoned (the user cancels while the summary is asked)
// ends cancelled, the history unchanged, with ctx's error.
func TestCompactIsCancelled(t *testing.T) {
	slow := geminitest.Turn{Match: contextwin.SummaryMarker, Delay: "30s", Parts: []geminitest.Part{{Text: summary}}}
	o, _ := open(t, 5, slow)
	used := o.Usage().Used
	ctx, cancel := context.WithCancel(t.Context())
	emit, evs := record()
	cancelled := func(ev agent.Event) {
		emit(ev)
		if ev.Type == agent.EventCompaction && ev.Compaction.State == agent.CompactionRunning {
			cancel()
		}
	}
	if _, err := Do(ctx, o.Session, Verb{Kind: Compact}, cancelled); !errors.Is(err, context.Canceled) {
		t.Errorf("err %v, want context.Canceled", err)
	}
	if want := []string{"compaction:running", "compaction:cancelled"}; !same(states(*evs), want) || (*evs)[1].Compaction.Note != "the history is unchanged" {
		t.Errorf("events %v (%+v), want %v", states(*evs), (*evs)[len(*evs)-1].Compaction, want)
	}
	if o.Usage().Used != used || len(o.Conversation().Checkpoints()) != 0 {
		t.Errorf("the history changed: %d → %d tokens, %d checkpoints", used, o.Usage().Used, len(o.Conversation().Checkpoints()))
	}
}

// TestUnknownVerb: a Kind the table lacks is an error, and nothing is told.
func TestUnknownVerb(t *testing.T) {
	o, _ := open(t, 1)
	emit, evs := record()
	if _, err := Do(t.Context(), o.Session, Verb{Kind: "rm -rf"}, emit); !errors.Is(err, ErrUnknownVerb) || len(*evs) != 0 {
		t.Errorf("err %v, events %v", err, states(*evs))
	}
}

// TestPinAndUnpin: pin tells the pins and the usage after, with the pin in its outcome; a refused
// pin (a path outside the workspace) tells nothing; unpin takes it out.
func TestPinAndUnpin(t *testing.T) {
	o, _ := open(t, 1)
	emit, evs := record()
	out, err := Do(t.Context(), o.Session, Verb{Kind: Pin, Pin: agent.PinRequest{Kind: contextwin.PinMessage, Text: "always answer in French"}}, emit)
	if err != nil {
		t.Fatal(err)
	}
	if !same(states(*evs), []string{"pins", "usage"}) || len((*evs)[0].Pins) != 1 || (*evs)[0].Pins[0].ID != out.Pin.ID {
		t.Errorf("events %v (%+v), outcome %+v", states(*evs), *evs, out)
	}
	// The usage told is the session's (measured at the next call: a pin shows there).
	if out.After != o.Usage().Used || out.Pin.Tokens == 0 {
		t.Errorf("a pin of text: %d → %d tokens (session %d), pin %+v", out.Before, out.After, o.Usage().Used, out.Pin)
	}
	emit, evs = record()
	if _, err := Do(t.Context(), o.Session, Verb{Kind: Pin, Pin: agent.PinRequest{Kind: contextwin.PinFile, Path: "../../etc/passwd"}}, emit); err == nil || len(*evs) != 0 {
		t.Errorf("a pin outside the workspace: %v, events %v", err, states(*evs))
	}
	emit, evs = record()
	gone, err := Do(t.Context(), o.Session, Verb{Kind: Unpin, PinID: out.Pin.ID}, emit)
	if err != nil {
		t.Fatal(err)
	}
	if len(gone.Pins) != 0 || !same(states(*evs), []string{"pins", "usage"}) {
		t.Errorf("unpin: %+v, events %v", gone, states(*evs))
	}
	if _, err := Do(t.Context(), o.Session, Verb{Kind: Unpin, PinID: out.Pin.ID}, func(agent.Event) {}); err == nil {
		t.Error("unpinning twice succeeded")
	}
}

// TestRestoreKeepContextCheckpoints: the file verbs restore every file the agent changed from a
// turn, or some of them each on its own (a path it never changed is refused), keep a file, and
// refuse a turn that is not one; the report and the checkpoints are the session's.
func TestRestoreKeepContextCheckpoints(t *testing.T) {
	edit := func(path, old, new string) geminitest.Turn {
		return geminitest.Turn{Parts: []geminitest.Part{{FunctionCall: &geminitest.FunctionCall{
			Name: "edit_file", Args: map[string]any{"path": path, "old": old, "new": new}}}}}
	}
	srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{
		edit("a.txt", "one", "two"), edit("b.txt", "uno", "dos"), edit("c.txt", "eins", "zwei"),
		{Parts: []geminitest.Part{{Text: "done"}}},
	}})
	defer srv.Close()
	r := newHost(t, srv, t.TempDir())
	ws := t.TempDir()
	for name, text := range map[string]string{"a.txt": "one\n", "b.txt": "uno\n", "c.txt": "eins\n"} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l, err := r.Open(t.Context(), Spec{Workspace: ws, Model: "gemini-3.8-flash", Config: agent.Config{ContextPolicy: contextwin.DefaultPolicy()}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.CloseAll()
	for _, err := range l.Run(t.Context(), "translate the three files") {
		if err != nil {
			t.Fatal(err)
		}
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(ws, name))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	if read("a.txt") != "two" || read("b.txt") != "dos" || read("c.txt") != "zwei" {
		t.Fatalf("the agent's edits did not land: %s %s %s", read("a.txt"), read("b.txt"), read("c.txt"))
	}
	for _, v := range []Verb{{Kind: Restore}, {Kind: Keep, Paths: []string{"a.txt"}}} {
		if _, err := Do(t.Context(), l.Session, v, nil); !errors.Is(err, ErrBadTurn) {
			t.Errorf("%s with no turn: %v, want ErrBadTurn", v.Kind, err)
		}
	}
	out, err := Do(t.Context(), l.Session, Verb{Kind: Keep, Turn: 1, Paths: []string{"c.txt"}}, nil)
	if err != nil || !slices.Equal(out.Files, []string{"c.txt"}) {
		t.Errorf("keep: %v %v", out.Files, err)
	}
	if _, err := Do(t.Context(), l.Session, Verb{Kind: Restore, Turn: 1, Paths: []string{"a.txt", "never.txt"}}, nil); !errors.Is(err, agent.ErrNotChanged) {
		t.Errorf("restore of a path the agent never changed: %v, want agent.ErrNotChanged", err)
	}
	if err := os.WriteFile(filepath.Join(ws, "b.txt"), []byte("mine\n"), 0o644); err != nil { // the user's edit
		t.Fatal(err)
	}
	out, err = Do(t.Context(), l.Session, Verb{Kind: Restore, Turn: 1, Paths: []string{"a.txt", "b.txt"}}, nil)
	if err != nil || !slices.Equal(out.Files, []string{"a.txt"}) || len(out.Refused) != 1 || out.Refused[0].Path != "b.txt" {
		t.Errorf("restore of some paths: restored %v, refused %+v, %v", out.Files, out.Refused, err)
	}
	if read("a.txt") != "one" || read("b.txt") != "mine" {
		t.Errorf("after restoring a.txt: a %q, b %q", read("a.txt"), read("b.txt"))
	}
	// Every file: refused whole while the user's edit is there, then restored once it is gone.
	if out, err := Do(t.Context(), l.Session, Verb{Kind: Restore, Turn: 1}, nil); err == nil || read("c.txt") != "zwei" {
		t.Errorf("restore of every file over the user's edit: %v %v, c %q", out.Files, err, read("c.txt"))
	}
	if err := os.WriteFile(filepath.Join(ws, "b.txt"), []byte("dos\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = Do(t.Context(), l.Session, Verb{Kind: Restore, Turn: 1}, nil)
	if err != nil || !slices.Contains(out.Files, "c.txt") || read("c.txt") != "eins" || read("b.txt") != "uno" {
		t.Errorf("restore of every file: %v %v, b %q, c %q", out.Files, err, read("b.txt"), read("c.txt"))
	}
	out, err = Do(t.Context(), l.Session, Verb{Kind: Context}, nil)
	if err != nil || out.Report.SessionID != l.ID() || out.Report.Turns != 1 || out.Report.Calls != 4 {
		t.Errorf("context: %s, %d turns, %d calls, %v", out.Report.SessionID, out.Report.Turns, out.Report.Calls, err)
	}
	out, err = Do(t.Context(), l.Session, Verb{Kind: Checkpoints}, nil)
	if err != nil || len(out.Checkpoints) != 0 {
		t.Errorf("checkpoints of an uncompacted session: %v %v", out.Checkpoints, err)
	}
}
